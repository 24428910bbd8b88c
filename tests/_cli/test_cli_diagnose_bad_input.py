"""Bad diagnosis requests: exit 2, one ``oloproof: error: ...`` line naming the problem, nothing written.

The planted project (tests/_cli/planted_rag) is run once for the module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inprocess import invoke_cli as cli
from projects import copy_project

pytestmark = pytest.mark.slow

PLANTED = Path(__file__).resolve().parent / "planted_rag"
PREFECT_LOGS = (
    "the request is refused inside the Prefect diagnose flow (or one of its tasks), so Prefect logs the "
    "exception with a traceback on stderr (ERROR lines) before the CLI prints its one line"
)


def written(store: Path) -> dict[str, set[str]]:
    """Every file under diagnoses/, every run directory, and the complete runs."""
    def files(folder: Path) -> set[str]:
        return {str(p.relative_to(store)) for p in folder.rglob("*") if p.is_file()} if folder.exists() else set()

    runs = store / "runs"
    run_dirs = {p.name for p in runs.iterdir()} if runs.exists() else set()
    return {
        "diagnoses": files(store / "diagnoses"),
        "run_dirs": run_dirs,
        "complete_runs": {name for name in run_dirs if (runs / name / "run.json").exists()},
    }


@pytest.fixture(scope="module")
def parent(prefect_api, tmp_path_factory):
    """A recorded run of the planted project."""
    base = tmp_path_factory.mktemp("diagnose-bad-input")
    project = base / "planted_rag"
    copy_project(PLANTED, project)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PLANTED_RAG_SEEN", str(base / "seen"))
        env.delenv("PLANTED_RAG_CALLS", raising=False)
        for name in ("planted_app", "rerank"):
            env.delitem(sys.modules, name, raising=False)
        code, out, err = cli("run", str(project), "--json")
        assert code == 0, err[-3000:]
        yield {"project": project, "store": project / ".oloproof" / "results",
               "run_id": json.loads(out)["run_id"], "env": env}


def _request(parent, *options: str) -> list[str]:
    argv = ["diagnose", parent["run_id"], *options, "--project", str(parent["project"])]
    if "--intervention" not in options:
        argv += ["--intervention", "gold-context"]
    if "--criterion" not in options:
        argv += ["--criterion", "answer_correct"]
    return argv


# (id, options, the problem the line must name, whether the CLI refuses it before any flow starts)
BAD = [
    ("unknown-run", ("RUN",), "no complete run 'run_01ZZZZZZZZZZZZZZZZZZZZZZZZ' in the store", False),
    ("unknown-criterion", ("--criterion", "faithful"), "has no criterion 'faithful' (it has: answer_correct, ndcg_at_6)",
     False),
    ("score-criterion-without-threshold", ("--criterion", "ndcg_at_6"),
     "field '--threshold': ndcg_at_6 is a score, not pass/fail: give --threshold to say what fails", False),
    ("top-k-zero", ("--intervention", "top-k", "--top-k", "0"),
     "field '--top-k': --top-k must be an integer of at least 1", True),
    ("top-k-negative", ("--intervention", "top-k", "--top-k", "-3"),
     "field '--top-k': --top-k must be an integer of at least 1", True),
    ("top-k-missing", ("--intervention", "top-k"), "field '--top-k': --top-k must be an integer of at least 1", True),
    ("top-k-above-depth", ("--intervention", "top-k", "--top-k", "7"),
     "field '--top-k': --top-k 7 exceeds the run's depth (6)", False),
    ("reranker-missing", ("--intervention", "reranker"),
     "field '--reranker': --intervention reranker needs --reranker module:function", False),
    ("reranker-bad-module", ("--intervention", "reranker", "--reranker", "no_such_reranker_mod:rerank"),
     "--reranker: cannot import 'no_such_reranker_mod': ModuleNotFoundError", False),
    ("reranker-missing-function", ("--intervention", "reranker", "--reranker", "rerank:no_such_function"),
     "--reranker: module 'rerank' has no attribute 'no_such_function'", False),
    ("reranker-not-callable", ("--intervention", "reranker", "--reranker", "rerank:NOT_CALLABLE"),
     "--reranker: rerank:NOT_CALLABLE is not callable", False),
    ("reranker-not-module-function", ("--intervention", "reranker", "--reranker", "rerank"),
     "--reranker: expected module:function, got 'rerank'", False),
]


def _argv(parent, options):
    if options == ("RUN",):
        argv = _request(parent)
        argv[1] = "run_01ZZZZZZZZZZZZZZZZZZZZZZZZ"
        return argv
    return _request(parent, *options)


@pytest.mark.parametrize(("options", "problem", "checked_first"), [pytest.param(o, p, c, id=i) for i, o, p, c in BAD])
def test_bad_request_exits_2_naming_the_problem_and_writes_nothing(run_cli, parent, options, problem, checked_first):
    before = written(parent["store"])
    code, out, err = run_cli(*_argv(parent, options))
    assert (code, out) == (2, "")
    last = err.splitlines()[-1]
    assert last.startswith("oloproof: error: ")
    assert problem in last
    if checked_first:  # refused by the CLI before any flow starts
        assert err == last + "\n"
    assert written(parent["store"]) == before


def test_a_request_refused_inside_the_flow_prints_one_line_on_a_console(parent):
    """The real command in a subprocess (in-process, pytest may route Prefect's console logs elsewhere)."""
    from prefect.settings import PREFECT_API_URL

    before = written(parent["store"])
    result = subprocess.run(
        [sys.executable, "-m", "oloproof._cli.main", *_argv(parent, ("--intervention", "top-k", "--top-k", "7"))],
        check=False, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value())},
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert written(parent["store"]) == before
    assert result.stderr == "oloproof: error: field '--top-k': --top-k 7 exceeds the run's depth (6)\n", \
        result.stderr[-3000:]


@pytest.fixture(scope="module")
def foreign_passages(parent):
    """A re-ranker that returns a passage that was never a candidate (found during the replay)."""
    before = written(parent["store"])
    try:
        code, out, err = cli(*_request(parent, "--intervention", "reranker", "--reranker", "rerank:invent_passage"))
        raised = None
    except Exception as exc:  # noqa: BLE001 - what a console user would see as a traceback and exit 1
        code, out, err, raised = 1, "", "", exc
    return {"code": code, "out": out, "err": err, "raised": raised, "before": before,
            "after": written(parent["store"])}


def test_foreign_passages_from_the_reranker_exit_2_with_one_line(foreign_passages):
    assert foreign_passages["raised"] is None, repr(foreign_passages["raised"])
    assert foreign_passages["code"] == 2
    err = foreign_passages["err"]
    assert err.splitlines()[-1] == (
        "oloproof: error: field 'reranker': re-ranker rerank:invent_passage returned passage 'invented-1', "
        "which was not among the candidates"
    )


def test_foreign_passages_write_no_reranker_diagnosis_and_no_incomplete_run(foreign_passages, parent):
    before, after = foreign_passages["before"], foreign_passages["after"]
    assert foreign_passages["code"] != 0
    store = parent["store"]
    new_diagnoses = {json.loads((store / f).read_text())["intervention"]
                     for f in after["diagnoses"] - before["diagnoses"] if f.endswith("/diagnosis.json")}
    # The gold-context diagnosis the replay reads its labels from may be written first; the
    # re-ranker's diagnosis never is.
    assert new_diagnoses <= {"gold-context"}
    new_runs = after["run_dirs"] - before["run_dirs"]
    assert new_runs == after["complete_runs"] - before["complete_runs"], "an incomplete run directory was left"
    roles = {json.loads((store / "runs" / r / "run.json").read_text())["parent"]["role"] for r in new_runs}
    assert roles <= {"gold context", "control"}
