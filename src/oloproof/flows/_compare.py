"""The compare flow: pair two recorded runs case by case and apply a release policy.

The comparison reads both runs as stored (``RunRecords.as_json``); its record is
the JSON it stores, and the flow's result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from prefect import flow

from oloproof._locate import locate_store
from oloproof.comparison import Policy, check_comparable, load_policy
from oloproof.flows._events import delivering_events
from oloproof.flows._publish import publish_comparison_pages
from oloproof.records import ComparisonRecord, ComparisonScope, RunRecords
from oloproof.store import ResultsStore, read_run_records
from oloproof.tasks._compare import (
    comparison_id_of,
    compute_comparison,
    find_comparison,
    validated_judges,
    write_comparison,
)
from oloproof.tasks._records import load_run_records

__all__ = ["ComparisonParameters", "PreparedComparison", "compare", "prepare_comparison"]


class ComparisonParameters(TypedDict):
    """A comparison's request, as the compare flow takes it and Prefect records it.

    Attributes:
        candidate: The candidate run's id.
        baseline: The baseline run's id.
        policy: The release policy file, if any.
        results: The store's URL.
        project: The project folder, if named.
        allow_partial: Whether runs over different cases may be compared.
    """

    candidate: str
    baseline: str
    policy: str | None
    results: str | None
    project: str | None
    allow_partial: bool


class PreparedComparison:
    """A validated comparison: both runs' records, the policy and the store.

    Args:
        store: The store holding both runs; the comparison is recorded there.
        candidate: The candidate run's records.
        baseline: The baseline run's records.
        rules: The release policy, if any.
        scope: What the two runs have in common (``check_comparable``).
        parameters: The comparison's parameters, as Prefect records them.
    """

    def __init__(self, store: ResultsStore, candidate: RunRecords, baseline: RunRecords,
                 rules: Policy | None, scope: ComparisonScope, parameters: ComparisonParameters) -> None:
        self.store, self.candidate, self.baseline = store, candidate, baseline
        self.rules, self.scope, self.parameters = rules, scope, parameters

    @flow(name="oloproof-compare", flow_run_name="compare {candidate} against {baseline}", validate_parameters=False)
    def compare(
        self, candidate: str, baseline: str, policy: str | None = None, results: str | None = None,
        project: str | None = None, allow_partial: bool = False,
    ) -> ComparisonRecord:
        """Compare the prepared runs; the parameters are the request, as Prefect records it."""
        return compare_prepared(self)

    def __call__(self) -> ComparisonRecord:
        """Run the bound flow; returns once its events are delivered."""
        # Prefect's typing of a flow on a method counts `self` among its parameters.
        parameters: dict[str, Any] = dict(self.parameters)
        return delivering_events(lambda: self.compare(**parameters))


def prepare_comparison(
    candidate: str, baseline: str, *, policy: str | None = None, results: str | None = None,
    project: str | None = None, allow_partial: bool = False,
    load: Callable[[ResultsStore, str], RunRecords] = read_run_records,
) -> PreparedComparison:
    """Load the policy and both runs once and check they compare; raises before anything is written."""
    rules = load_policy(policy) if policy else None
    store = locate_store(results, project)
    mine, theirs = load(store, candidate), load(store, baseline)
    scope = check_comparable(mine.as_json(), theirs.as_json(), allow_partial=allow_partial, policy=rules,
                             policy_path=policy)  # fmt: skip
    parameters = ComparisonParameters(candidate=candidate, baseline=baseline, policy=policy, results=store.url,
                                      project=project, allow_partial=allow_partial)  # fmt: skip
    return PreparedComparison(store, mine, theirs, rules, scope, parameters)


def compare_prepared(prepared: PreparedComparison) -> ComparisonRecord:
    """The body of both compare flows: compute and record the comparison (or recall it)."""
    # The comparison reads both runs as their stored JSON.
    store, rules = prepared.store, prepared.rules
    mine, theirs = prepared.candidate.as_json(), prepared.baseline.as_json()
    judges = validated_judges(store, rules)
    comparison_id = comparison_id_of(mine, theirs, rules, prepared.parameters["allow_partial"], judges)
    existing = find_comparison(store, comparison_id)
    if existing is not None:
        return existing
    record = compute_comparison(mine, theirs, rules, prepared.scope, judges)
    record["comparison_id"] = comparison_id
    write_comparison(store, record)
    publish_comparison_pages(store, record)
    return record


@flow(name="oloproof-compare", flow_run_name="compare {candidate} against {baseline}", validate_parameters=False)
def compare(
    candidate: str,
    baseline: str,
    policy: str | None = None,
    results: str | None = None,
    project: str | None = None,
    allow_partial: bool = False,
) -> ComparisonRecord:
    """Compare ``candidate`` against ``baseline`` (paired by case id) under an optional policy.

    The entry point of deployments: the runs' records are loaded as tasks.

    Returns:
        The comparison record (also written to the store), with ``gate`` PASS/BLOCK
        when a policy is given.
    """
    def load(store: ResultsStore, run_id: str) -> RunRecords:
        return load_run_records.submit(store, run_id).result()

    prepared = prepare_comparison(candidate, baseline, policy=policy, results=results, project=project,
                                  allow_partial=allow_partial, load=load)
    return compare_prepared(prepared)
