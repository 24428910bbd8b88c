"""Tasks of a comparison: compute it and record it."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.comparison import Policy, compare_runs
from oloproof.judging import gating_judges
from oloproof.records import ComparisonRecord, ComparisonScope, DecisionRow, StoredRun
from oloproof.stages._identity import content_hash
from oloproof.store import DECISIONS, ResultsStore, comparison_decisions, comparison_manifest
from oloproof.tasks._retry import retry_io_only

__all__ = [
    "comparison_id_of",
    "compute_comparison",
    "decision_rows",
    "find_comparison",
    "validated_judges",
    "write_comparison",
]


def comparison_id_of(candidate: StoredRun, baseline: StoredRun, policy: Policy | None,
                     allow_partial: bool, judges: set[str] | None = None) -> str:
    """``sha256:`` of both runs' records, the policy and the judges validated so far
    (validating a judge later changes what its rules may decide)."""
    def digest(run: StoredRun) -> dict[str, str]:
        judgments = sorted((r["case_id"], r["criterion"], r["status"], r["value"]) for r in run["judgments"])
        return {"run_id": run["manifest"]["run_id"], "judgments": content_hash(judgments)}

    return "sha256:" + content_hash({
        "candidate": digest(candidate), "baseline": digest(baseline),
        "policy": None if policy is None else policy.model_dump(mode="json"), "allow_partial": allow_partial,
        "validated_judges": sorted(judges or ()),
    })


@task(cache_policy=NO_CACHE, name="find-comparison", retries=2, retry_condition_fn=retry_io_only, retry_delay_seconds=1)
def find_comparison(store: ResultsStore, comparison_id: str) -> ComparisonRecord | None:
    """The comparison already recorded under this id, if any."""
    path = comparison_manifest(comparison_id.removeprefix("sha256:"))
    return store.read_json(path) if store.exists(path) else None


def validated_judges(store: ResultsStore, policy: Policy | None) -> set[str]:
    """Ids of the LLM judges whose validation record meets the policy's ``judges:``
    requirements (none without a policy: nothing gates)."""
    if policy is None:
        return set()
    return gating_judges(store, policy.judges)


@task(cache_policy=NO_CACHE, name="compute-comparison")
def compute_comparison(candidate: StoredRun, baseline: StoredRun, policy: Policy | None,
                       scope: ComparisonScope, judges: set[str]) -> ComparisonRecord:
    """Pair the runs, estimate each metric's difference and decide each rule."""
    return compare_runs(candidate, baseline, policy=policy, scope=scope, validated_judges=judges)


def decision_rows(record: ComparisonRecord) -> list[DecisionRow]:
    """One ``decisions`` row per rule decided in a comparison record."""
    return [DecisionRow.pick(decision, comparison_id=record["comparison_id"]) for decision in record["decisions"]]


@task(cache_policy=NO_CACHE, name="write-comparison", retries=3, retry_condition_fn=retry_io_only, retry_delay_seconds=1)
def write_comparison(store: ResultsStore, record: ComparisonRecord) -> str:
    """Write the decisions table, then the comparison manifest; returns the id."""
    hexid = record["comparison_id"].removeprefix("sha256:")
    rows = decision_rows(record)
    store.write_table(comparison_decisions(hexid), [row.as_mapping() for row in rows], DECISIONS)
    store.write_json(comparison_manifest(hexid), record)
    return record["comparison_id"]
