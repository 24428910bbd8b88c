"""The compare flow: pair two recorded runs case by case and apply a release policy."""

from __future__ import annotations

from typing import Any

from prefect import flow

from oloproof._locate import locate_store
from oloproof.comparison import check_comparable, load_policy
from oloproof.tasks._compare import (
    comparison_id_of,
    compute_comparison,
    find_comparison,
    validated_judges,
    write_comparison,
)
from oloproof.tasks._records import load_run_records

__all__ = ["compare"]


@flow(name="oloproof-compare", flow_run_name="compare {candidate} against {baseline}", validate_parameters=False)
def compare(
    candidate: str,
    baseline: str,
    policy: str | None = None,
    results: str | None = None,
    project: str | None = None,
    allow_partial: bool = False,
) -> dict[str, Any]:
    """Compare ``candidate`` against ``baseline`` (paired by case id) under an optional policy.

    Returns:
        The comparison record (also written to the store), with ``gate`` PASS/BLOCK
        when a policy is given.
    """
    rules = load_policy(policy) if policy else None
    store = locate_store(results, project)
    runs = load_run_records.submit(store, candidate), load_run_records.submit(store, baseline)
    mine, theirs = runs[0].result(), runs[1].result()
    scope = check_comparable(mine, theirs, allow_partial=allow_partial, policy=rules, policy_path=policy)
    judges = validated_judges(store)
    comparison_id = comparison_id_of(mine, theirs, rules, allow_partial, judges)
    existing = find_comparison(store, comparison_id)
    if existing is not None:
        return existing
    record = compute_comparison(mine, theirs, rules, scope, judges)
    record["comparison_id"] = comparison_id
    write_comparison(store, record)
    return record
