"""``oloproof sweep`` refuses bad input in one line, exit 2, before anything runs or is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from offline import offline_run_cli  # noqa: F401 - the module's run_cli fixture
from projects import copy_project

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_project(EXAMPLE, tmp_path / "support_rag")


@pytest.mark.parametrize(("arguments", "expected"), [
    (["--grid", "system.rag.top_kk=1,2"], "--grid: field 'system.rag.top_kk': top_kk=1: unknown field"),
    (["--grid", "system.rag.top_k=1,0"], "--grid: field 'system.rag.top_k': top_k=0: "),
    (["--grid", "system.rag.top_k="], "--grid: field 'system.rag.top_k': "),
    (["--grid", "system.rag.top_k"], "--grid: "),
    (["--grid", "system.rag.top_k=1,2", "--grid", "system.rag.top_k=3"], "--grid: field 'system.rag.top_k': "),
    (["--grid", "system.rag.top_k=1,2,3", "--grid", "system.rag.token_budget=10,20", "--max-settings", "5"],
     "--grid: the grid has 6 settings, more than 5: --yes runs them all"),
    (["--grid", "system.rag.top_k=1,2", "--objective", "nope"], "field '--objective': no evaluator produces the objective 'nope'"),
    (["--grid", "system.rag.top_k=1,2", "--holdout", "1.5"], "field '--holdout': --holdout must be a share between 0 and 1, got 1.5"),
], ids=["unknown-key", "invalid-value", "empty-values", "no-values", "key-twice", "too-many", "objective",
        "holdout"])  # fmt: skip
def test_bad_input_is_one_line_and_nothing_runs(run_cli, project, arguments, expected):
    if "--objective" not in arguments:
        arguments = [*arguments, "--objective", "answer_correct"]
    code, out, err = run_cli("sweep", str(project), *arguments)
    assert (code, out) == (2, ""), err
    assert err.startswith("oloproof: error: ") and err.count("\n") == 1, err
    assert expected in err, err
    assert not (project / ".oloproof").exists()


def test_no_grid_is_refused(run_cli, project):
    code, _out, err = run_cli("sweep", str(project), "--objective", "answer_correct")
    assert code == 2 and err.count("\n") == 1 and "--grid" in err, err
