"""Every case gets its own verdict, whatever its id, its position or its twins.

Equal stage identities share work (the stage caches), never results by id: a
dataset with repeated inputs, renamed ids and reordered lines, run into a store
that already holds other runs of the same cases, gives every case exactly the
verdicts that case gets when it runs alone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _cli.inprocess import invoke_ok
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"

pytestmark = pytest.mark.slow

_BATCH_SIZES = (None, 1, 2, 3, 5, 13)


def _base_cases() -> list[dict]:
    return [json.loads(line) for line in (EXAMPLE / "cases.jsonl").read_text().splitlines() if line.strip()]


def _run(project: Path, store: Path, cases: list[dict], batch_size: int | None) -> dict[str, dict]:
    """Run ``cases``; returns each case id's verdicts by criterion."""
    (project / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    argv = ["run", str(project), "--results", str(store), "--json"]
    if batch_size is not None:
        argv += ["--set", f"batch_size={batch_size}"]
    run_id = json.loads(invoke_ok(*argv))["run_id"]
    rows = json.loads(invoke_ok(
        "query", "select case_id, criterion, status, passed, value from judgments where run_id = $1",
        "--param", run_id, "--results", str(store), "--json",
    ))
    cases_seen = json.loads(invoke_ok(
        "query", "select case_id, status from cases where run_id = $1",
        "--param", run_id, "--results", str(store), "--json",
    ))
    verdicts: dict[str, dict] = {row["case_id"]: {"status": row["status"]} for row in cases_seen}
    for row in rows:
        verdicts[row["case_id"]][row["criterion"]] = (row["status"], row["passed"], row["value"])
    return verdicts


@pytest.fixture(scope="module")
def project(prefect_api, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("identity") / "support_rag"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".oloproof", "__pycache__"))
    return target


@pytest.fixture(scope="module")
def alone(project, tmp_path_factory) -> dict[str, dict]:
    """Each base case's verdicts when it runs alone: its own batch, on a fresh store
    (the base cases' inputs all differ, so no batch or cache is shared)."""
    return _run(project, tmp_path_factory.mktemp("alone"), _base_cases(), 1)


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Path:
    """One store for every drawn dataset, so each run meets the caches of the others."""
    return tmp_path_factory.mktemp("shared")


@st.composite
def _datasets(draw) -> list[tuple[int, int]]:
    """(base case, copy number) pairs: repeats allowed, in any order."""
    picks = draw(st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=30))
    return draw(st.permutations(list(enumerate(picks))))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dataset=_datasets(), batch_size=st.sampled_from(_BATCH_SIZES), salt=st.integers(0, 10**6))
def test_repeated_renamed_and_reordered_cases_each_get_their_own_verdict(
    project, alone, shared_store, dataset, batch_size, salt
):
    base = _base_cases()
    cases = [dict(base[pick], id=f"{base[pick]['id']}~{salt}-{number}") for number, pick in dataset]

    verdicts = _run(project, shared_store, cases, batch_size)

    assert sorted(verdicts) == sorted(case["id"] for case in cases)
    for case in cases:
        original = case["id"].split("~", 1)[0]
        assert verdicts[case["id"]] == alone[original], case["id"]


def test_the_renamed_case_of_the_report_is_observed(project, tmp_path):
    # The reproduction: run, rename one id, run again under a new version.
    store = tmp_path / "store"
    cases = _base_cases()
    first = _run(project, store, cases, None)
    assert all(verdict["status"] == "ok" for verdict in first.values())
    renamed = [dict(case, id="refund_annual_2") if case["id"] == "refund_annual" else case for case in cases]
    (project / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in renamed))
    report = json.loads(invoke_ok(
        "run", str(project), "--results", str(store), "--json", "--set", "system.version=v2"
    ))
    overall = {row["criterion"]: row for row in report["metrics"] if row["slice"] is None}
    assert (overall["answer_correct"]["observed"], overall["answer_correct"]["missing"]) == (13, 0)
    assert report["cache"]["retrieve"] == {"hit": 13, "miss": 0}
