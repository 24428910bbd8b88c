"""The compare flows' parts that run without Prefect.

Covers the flows' declarations, ``prepare_comparison``'s refusals before
anything is read or written (a policy file that does not exist, a run compared
with itself, different datasets) and the parameters it records, and
``compare_prepared``: an existing comparison with the same identity is returned
as recorded, a new one is computed once, given its id and written once. The
runs' records are handed in by a stand-in loader and the comparison tasks are
replaced by stand-ins, so no flow runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from oloproof._exceptions import ConfigError, UsageError
from oloproof.flows import _compare, compare
from oloproof.flows._compare import PreparedComparison, compare_prepared, prepare_comparison
from oloproof.records import RunRecords

COMPARISON_ID = "sha256:" + "c" * 64


# A manifest the example wrote (see tests/records/stored).
STORED_MANIFEST = json.loads((Path(__file__).parents[1] / "records" / "stored" / "run.json").read_bytes())


def _records(run_id, dataset="sha256:data"):
    manifest = {**STORED_MANIFEST, "run_id": run_id, "dataset_sha256": dataset, "evaluators": []}
    return RunRecords.of(manifest, cases=[], judgments=[])


class _Loader:
    """Hands out run records by id and remembers which were asked for."""

    def __init__(self, **datasets):
        self.datasets = datasets
        self.loaded = []

    def __call__(self, store, run_id):
        self.loaded.append(run_id)
        return _records(run_id, self.datasets.get(run_id, "sha256:data"))


@pytest.fixture
def located(monkeypatch):
    """The stores the comparison opens (a stand-in with a URL)."""
    seen = []

    def locate(results, project):
        seen.append((results, project))
        return SimpleNamespace(url=results or "/stores/project-results")

    monkeypatch.setattr(_compare, "locate_store", locate)
    return seen


# -- declarations ---------------------------------------------------------------------------------


def test_the_compare_flows_declarations():
    for flow in (compare, PreparedComparison.compare):
        assert flow.name == "oloproof-compare"
        assert flow.flow_run_name == "compare {candidate} against {baseline}"
        assert flow.should_validate_parameters is False
    assert list(compare.parameters.properties) == [
        "candidate", "baseline", "policy", "results", "project", "allow_partial",
    ]


# -- prepare_comparison ---------------------------------------------------------------------------


def test_a_missing_policy_file_is_refused_before_the_store_is_opened(located, tmp_path):
    load = _Loader()
    path = tmp_path / "no-such-policy.yaml"
    with pytest.raises(ConfigError) as caught:
        prepare_comparison("run_A", "run_B", policy=str(path), load=load)
    assert (caught.value.message, caught.value.path) == ("policy file not found", str(path))
    assert located == [] and load.loaded == []


def test_a_run_compared_with_itself_is_refused(located):
    with pytest.raises(UsageError, match="cannot compare run run_A with itself"):
        prepare_comparison("run_A", "run_A", load=_Loader())


def test_runs_on_different_datasets_are_refused_unless_partial(located):
    load = _Loader(run_B="sha256:other")
    with pytest.raises(UsageError, match="different datasets"):
        prepare_comparison("run_A", "run_B", load=load)
    prepared = prepare_comparison("run_A", "run_B", allow_partial=True, load=load)
    assert prepared.scope == {"different_specs": [], "one_sided": [], "same_dataset": False}


def test_a_prepared_comparison_holds_both_runs_and_its_parameters(located):
    load = _Loader()
    prepared = prepare_comparison("run_CAND", "run_BASE", results="/r", project="/p", load=load)
    assert located == [("/r", "/p")]
    assert load.loaded == ["run_CAND", "run_BASE"]
    assert prepared.candidate == _records("run_CAND") and prepared.baseline == _records("run_BASE")
    assert prepared.rules is None
    assert prepared.scope == {"different_specs": [], "one_sided": [], "same_dataset": True}
    assert prepared.parameters == {"candidate": "run_CAND", "baseline": "run_BASE", "policy": None,
                                   "results": "/r", "project": "/p", "allow_partial": False}


def test_the_recorded_store_is_the_one_located(located):
    prepared = prepare_comparison("run_CAND", "run_BASE", load=_Loader())
    assert prepared.parameters["results"] == "/stores/project-results"


# -- compare_prepared -----------------------------------------------------------------------------


@pytest.fixture
def tasks(monkeypatch):
    """Stand-ins for the comparison tasks; ``seen`` records their calls."""
    seen = SimpleNamespace(ids=[], computed=[], written=[], existing=None)

    def comparison_id_of(mine, theirs, rules, allow_partial, judges):
        seen.ids.append((mine["manifest"]["run_id"], theirs["manifest"]["run_id"], rules, allow_partial, judges))
        return COMPARISON_ID

    def compute(mine, theirs, rules, scope, judges):
        seen.computed.append((mine["manifest"]["run_id"], theirs["manifest"]["run_id"], scope, judges))
        return {"candidate": mine["manifest"]["run_id"], "baseline": theirs["manifest"]["run_id"]}

    monkeypatch.setattr(_compare, "validated_judges", lambda store, policy: {"sha256:judge"})
    monkeypatch.setattr(_compare, "comparison_id_of", comparison_id_of)
    monkeypatch.setattr(_compare, "find_comparison", lambda store, comparison_id: seen.existing)
    monkeypatch.setattr(_compare, "compute_comparison", compute)
    monkeypatch.setattr(_compare, "write_comparison", lambda store, record: seen.written.append(record))
    return seen


def _prepared(allow_partial=False):
    parameters = {"candidate": "run_CAND", "baseline": "run_BASE", "policy": None, "results": "/r",
                  "project": None, "allow_partial": allow_partial}
    return PreparedComparison(SimpleNamespace(url="/r"), _records("run_CAND"), _records("run_BASE"), None,
                              {"same_dataset": True}, parameters)


def test_a_new_comparison_is_computed_once_and_written_with_its_id(tasks):
    record = compare_prepared(_prepared(allow_partial=True))
    assert tasks.ids == [("run_CAND", "run_BASE", None, True, {"sha256:judge"})]
    assert tasks.computed == [("run_CAND", "run_BASE", {"same_dataset": True}, {"sha256:judge"})]
    assert record == {"candidate": "run_CAND", "baseline": "run_BASE", "comparison_id": COMPARISON_ID}
    assert tasks.written == [record]


def test_an_existing_comparison_is_returned_as_recorded(tasks):
    tasks.existing = {"comparison_id": COMPARISON_ID, "gate": "BLOCK"}
    assert compare_prepared(_prepared()) == {"comparison_id": COMPARISON_ID, "gate": "BLOCK"}
    assert tasks.computed == [] and tasks.written == []


def test_the_deployment_flow_refuses_a_missing_policy_before_loading(located, tmp_path):
    with pytest.raises(ConfigError, match="policy file not found"):
        compare.fn("run_A", "run_B", policy=str(tmp_path / "absent.yaml"))
    assert located == []
