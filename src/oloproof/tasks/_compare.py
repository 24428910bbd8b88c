"""Tasks of a comparison: compute it and record it."""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.comparison import Policy, compare_runs
from oloproof.store import DECISIONS, ResultsStore, comparison_decisions, comparison_manifest
from oloproof.tasks._identity import content_hash
from oloproof.tasks._retry import retry_io_only

__all__ = ["comparison_id_of", "compute_comparison", "find_comparison", "validated_judges", "write_comparison"]


def comparison_id_of(candidate: dict[str, Any], baseline: dict[str, Any], policy: Policy | None,
                     allow_partial: bool, judges: set[str] | None = None) -> str:
    """``sha256:`` of both runs' records, the policy and the judges validated so far
    (validating a judge later changes what its rules may decide)."""
    def digest(run: dict[str, Any]) -> dict[str, Any]:
        judgments = sorted((r["case_id"], r["criterion"], r["status"], r["value"]) for r in run["judgments"])
        return {"run_id": run["manifest"]["run_id"], "judgments": content_hash(judgments)}

    return "sha256:" + content_hash({
        "candidate": digest(candidate), "baseline": digest(baseline),
        "policy": None if policy is None else policy.model_dump(mode="json"), "allow_partial": allow_partial,
        "validated_judges": sorted(judges or ()),
    })


@task(cache_policy=NO_CACHE, name="find-comparison", retries=2, retry_condition_fn=retry_io_only, retry_delay_seconds=1)
def find_comparison(store: ResultsStore, comparison_id: str) -> dict[str, Any] | None:
    """The comparison already recorded under this id, if any."""
    path = comparison_manifest(comparison_id.removeprefix("sha256:"))
    return store.read_json(path) if store.exists(path) else None


def validated_judges(store: ResultsStore) -> set[str]:
    """Spec hashes of LLM judges with a passing validation record (``validations/<hash>.json``)."""
    passed = set()
    for relpath in store.list("validations"):
        if relpath.endswith(".json"):
            record = store.read_json(relpath)
            if record.get("passed") is True and record.get("spec_hash"):
                passed.add(record["spec_hash"])
    return passed


@task(cache_policy=NO_CACHE, name="compute-comparison")
def compute_comparison(candidate: dict[str, Any], baseline: dict[str, Any], policy: Policy | None,
                       scope: dict[str, Any], judges: set[str]) -> dict[str, Any]:
    """Pair the runs, estimate each metric's difference and decide each rule."""
    return compare_runs(candidate, baseline, policy=policy, scope=scope, validated_judges=judges)


@task(cache_policy=NO_CACHE, name="write-comparison", retries=3, retry_condition_fn=retry_io_only, retry_delay_seconds=1)
def write_comparison(store: ResultsStore, record: dict[str, Any]) -> str:
    """Write the decisions table, then the comparison manifest; returns the id."""
    hexid = record["comparison_id"].removeprefix("sha256:")
    rows = [{"comparison_id": record["comparison_id"], **{k: d.get(k) for k in (
        "rule", "criterion", "kind", "margin", "confidence", "verdict", "reason", "difference", "low", "high",
        "paired")}} for d in record["decisions"]]
    store.write_table(comparison_decisions(hexid), rows, DECISIONS)
    store.write_json(comparison_manifest(hexid), record)
    return record["comparison_id"]
