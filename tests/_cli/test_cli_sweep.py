"""``oloproof sweep`` on the example: every setting a run, only what its identities require
executed, and a claim that holds over every setting compared.

The example's system is copied with a counter: each retriever and generator call appends
a line to a log beside it, so the test counts real calls, not cache reports.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from projects import copy_project, count_calls, counted_calls

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"
README = Path(__file__).resolve().parents[2] / "README.md"
GRID = ("--grid", "system.rag.top_k=1,2,3,4,6", "--grid", "system.rag.token_budget=40,80,120")

@pytest.fixture(scope="module")
def counted(tmp_path_factory) -> Path:
    project = copy_project(EXAMPLE, tmp_path_factory.mktemp("sweep") / "support_rag")
    app = project / "app.py"
    count_calls(app, "SupportRag")
    return project


@pytest.fixture(scope="module")
def swept(counted, prefect_api):
    from inprocess import invoke_ok

    plan = invoke_ok("sweep", str(counted), *GRID, "--objective", "answer_correct", "--dry-run")
    out = invoke_ok("sweep", str(counted), *GRID, "--objective", "answer_correct")
    calls = counted_calls(counted)
    again = invoke_ok("sweep", str(counted), *GRID, "--objective", "answer_correct", "--json")
    return {"plan": plan, "out": out, "calls": calls, "again": json.loads(again), "after": counted_calls(counted)}


def test_the_sweep_retrieves_once_per_case_and_generates_once_per_distinct_context(swept, counted):
    assert swept["calls"]["retrieve"] == 13
    assert swept["calls"]["generate"] == 35  # as the README says
    contexts = set()
    for entry in swept["again"]["settings"]:
        rows = _cases(counted, entry["run_id"])
        contexts |= {(row["case_id"], tuple((p["doc_id"], p.get("chunk_id")) for p in row["context"])) for row in rows}
    assert swept["calls"]["generate"] == len(contexts)


def test_the_plan_counts_the_retrievals_before_anything_runs(swept):
    assert "Sweep swp_" in swept["plan"] and "15 settings and the baseline; 16 to run, 0 complete" in swept["plan"]
    calls = next(line for line in swept["plan"].splitlines() if line.startswith("Calls: "))
    assert calls == ("Calls: retrieve 13, generate 0 (+ at most 195 whose context is not retrieved yet), judge 0; "
                     "at least 208 reused")
    assert calls in README.read_text(encoding="utf-8").splitlines()
    # What the sweep then made: the retrievals exactly, the generations within the bound.
    assert swept["calls"]["retrieve"] == 13 and swept["calls"]["generate"] <= 195


def test_the_table_and_the_simultaneous_claim_print(swept):
    out = swept["out"]
    assert re.search(r"^Sweep swp_\w+ · 15 settings and the baseline · objective answer_correct · 13 cases$", out,
                     re.MULTILINE)
    assert "│ top_k=4 token_budget=120 " in out and "│ baseline " in out
    claim = next(line for line in out.splitlines() if line.startswith("Claim: "))
    assert claim in README.read_text(encoding="utf-8").splitlines()  # the line the README shows
    assert "simultaneous 95% over 15 settings" in claim


def test_asking_again_runs_nothing_and_reads_the_same_result(swept):
    assert swept["after"] == swept["calls"]
    settings = swept["again"]["settings"]
    assert len(settings) == 16 and settings[0]["label"] == "baseline"
    assert swept["again"]["compared"] == 15


def _cases(project: Path, run_id: str) -> list[dict]:
    from oloproof.store import ResultsStore, run_table

    return ResultsStore(str(project / ".oloproof" / "results")).read_table(run_table(run_id, "cases"))


def test_a_sweep_interrupted_runs_only_its_unfinished_settings(swept, counted):
    from inprocess import invoke_ok

    # As a killed sweep leaves it: two settings without a record of their run, and no result.
    sweep_dir = counted / ".oloproof" / "results" / "sweeps" / swept["again"]["sweep_id"]
    records = sorted((sweep_dir / "settings").glob("*.json"))
    assert len(records) == 16
    for record in records[:2]:
        record.unlink()
    (sweep_dir / "sweep.json").unlink()

    def runs() -> int:
        return json.loads(invoke_ok("query", "SELECT count(*) AS n FROM all_runs", "--project", str(counted),
                                    "--json"))[0]["n"]  # fmt: skip

    before = runs()
    again = json.loads(invoke_ok("sweep", str(counted), *GRID, "--objective", "answer_correct", "--json"))
    assert runs() == before + 2  # only the two settings without a run ran again ...
    assert counted_calls(counted) == swept["calls"]  # ... and every stage they needed was cached
    strip = [{k: v for k, v in entry.items() if k not in ("run_id", "costs")} for entry in again["settings"]]
    assert strip == [{k: v for k, v in entry.items() if k not in ("run_id", "costs")}
                     for entry in swept["again"]["settings"]]  # fmt: skip


PARAMS = Path(__file__).resolve().parent / "params_rag"


def test_a_retrieval_only_sweep_retrieves_once_per_identity_and_never_generates(prefect_api, tmp_path):
    from inprocess import invoke_ok

    project = copy_project(PARAMS, tmp_path / "params_rag")
    app = project / "params_app.py"
    count_calls(app, "ParamsRag")
    cases = len((project / "cases.jsonl").read_text(encoding="utf-8").splitlines())
    grid = ("--grid", "system.rag.retriever.mode=keyword,vector", "--grid", "system.rag.depth=3,6")
    result = json.loads(invoke_ok("sweep", str(project), *grid, "--objective", "hit_rate_at_2", "--stages",
                                  "retrieve", "--json"))  # fmt: skip
    # Four retrieval identities a case (the baseline, keyword at depth 6, is one of them), none generated.
    assert counted_calls(project) == {"retrieve": 4 * cases, "generate": 0}
    assert [entry["label"] for entry in result["settings"]] == [
        "baseline", "mode=keyword depth=3", "mode=keyword depth=6", "mode=vector depth=3", "mode=vector depth=6"]
    assert list(result["kinds"]) == ["hit_rate_at_2"]  # answer_correct needs generation: not scored
    assert all(entry["costs"]["generate_calls"] == 0 for entry in result["settings"])


def test_a_retrieval_only_sweep_refuses_an_objective_that_needs_generation(prefect_api, tmp_path):
    from inprocess import invoke_cli

    project = copy_project(PARAMS, tmp_path / "params_rag")
    code, out, err = invoke_cli("sweep", str(project), "--grid", "system.rag.depth=3,6", "--objective",
                                "answer_correct", "--stages", "retrieve")  # fmt: skip
    assert (code, out) == (2, "")
    assert err == ("oloproof: error: field '--objective': the objective 'answer_correct' is not scored by a "
                   "retrieval-only sweep, which calls no generator and no judge (its criteria: hit_rate_at_2)\n")
    assert not (project / ".oloproof").exists()
