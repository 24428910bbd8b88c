"""The compare flow's parts that run without Prefect.

Covers the flow's declaration, its refusals before anything is read or written
(a policy file that does not exist, a run compared with itself) and the order of
its work: an existing comparison with the same identity is returned as recorded,
a new one is computed once, given its id and written once. The store, the run
records and the comparison tasks are replaced by stand-ins, so no flow runs.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from oloproof._exceptions import ConfigError, UsageError
from oloproof.comparison import check_comparable
from oloproof.flows import _compare, compare


def test_the_compare_flow_declaration():
    assert compare.name == "oloproof-compare"
    assert compare.flow_run_name == "compare {candidate} against {baseline}"
    assert compare.should_validate_parameters is False
    assert list(compare.parameters.properties) == [
        "candidate", "baseline", "policy", "results", "project", "allow_partial",
    ]


def _records(run_id):
    return {"manifest": {"run_id": run_id, "evaluators": []}, "judgments": [], "cases": []}


@pytest.fixture
def work(monkeypatch):
    """Stand-ins for the store and the comparison tasks; ``seen`` records their calls."""
    seen = SimpleNamespace(located=[], loaded=[], checked=[], computed=[], written=[], ids=[], existing=None,
                           store=SimpleNamespace(url="/stores/results"))

    def check(mine, theirs, **options):
        seen.checked.append(options)
        return {"partial": options["allow_partial"]}

    def submit(store, run_id):
        seen.loaded.append(run_id)
        return SimpleNamespace(result=lambda: _records(run_id))

    def comparison_id_of(mine, theirs, rules, allow_partial, judges):
        seen.ids.append((mine["manifest"]["run_id"], theirs["manifest"]["run_id"], rules, allow_partial, judges))
        return "sha256:" + "c" * 64

    def compute(mine, theirs, rules, scope, judges):
        seen.computed.append((mine["manifest"]["run_id"], theirs["manifest"]["run_id"], scope, judges))
        return {"candidate": mine["manifest"]["run_id"], "baseline": theirs["manifest"]["run_id"]}

    monkeypatch.setattr(_compare, "locate_store", lambda results, project: seen.located.append(
        (results, project)) or seen.store)
    monkeypatch.setattr(_compare, "load_run_records", SimpleNamespace(submit=submit))
    monkeypatch.setattr(_compare, "check_comparable", check)
    monkeypatch.setattr(_compare, "validated_judges", lambda store: {"sha256:judge"})
    monkeypatch.setattr(_compare, "comparison_id_of", comparison_id_of)
    monkeypatch.setattr(_compare, "find_comparison", lambda store, comparison_id: seen.existing)
    monkeypatch.setattr(_compare, "compute_comparison", compute)
    monkeypatch.setattr(_compare, "write_comparison", lambda store, record: seen.written.append(record))
    return seen


def test_a_missing_policy_file_is_refused_before_the_store_is_opened(work, tmp_path):
    path = tmp_path / "no-such-policy.yaml"
    with pytest.raises(ConfigError) as caught:
        compare.fn("run_A", "run_B", policy=str(path))
    assert (caught.value.message, caught.value.path) == ("policy file not found", str(path))
    assert work.located == [] and work.loaded == []


def test_a_run_compared_with_itself_is_refused_before_anything_is_written(work, monkeypatch):
    monkeypatch.setattr(_compare, "check_comparable", check_comparable)
    with pytest.raises(UsageError, match="cannot compare run run_A with itself"):
        compare.fn("run_A", "run_A")
    assert work.computed == [] and work.written == []


def test_a_new_comparison_is_computed_once_and_written_with_its_id(work):
    record = compare.fn("run_CAND", "run_BASE", results="/r", project="/p", allow_partial=True)
    assert work.located == [("/r", "/p")]
    assert work.loaded == ["run_CAND", "run_BASE"]
    assert work.checked == [{"allow_partial": True, "policy": None, "policy_path": None}]
    assert work.ids == [("run_CAND", "run_BASE", None, True, {"sha256:judge"})]
    assert work.computed == [("run_CAND", "run_BASE", {"partial": True}, {"sha256:judge"})]
    assert record == {"candidate": "run_CAND", "baseline": "run_BASE", "comparison_id": "sha256:" + "c" * 64}
    assert work.written == [record]


def test_an_existing_comparison_is_returned_as_recorded(work):
    work.existing = {"comparison_id": "sha256:" + "c" * 64, "gate": "BLOCK"}
    assert compare.fn("run_CAND", "run_BASE") == work.existing
    assert work.computed == [] and work.written == []
