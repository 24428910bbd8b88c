"""A system that raises on one case: the run completes, the case is missing, a re-run retries it."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.slow

FAILING = '''

class FailsOnMoneyBack(SupportRag):
    """Raises on one case while ``fail.flag`` exists beside this file."""

    def generate(self, input, context):
        if input["question"] == "Can I get my money back?" and Path(__file__).with_name("fail.flag").exists():
            raise RuntimeError("model endpoint timed out")
        return super().generate(input, context)
'''


def _row(out: str, criterion: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(f"│ {criterion} "))


def _query(run_cli, project, sql: str) -> list[dict]:
    code, out, err = run_cli("query", sql, "--project", str(project), "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_raising_case_is_missing_recorded_and_retried(run_cli, example_project):
    source = (example_project / "app.py").read_text()
    (example_project / "failing_case_app.py").write_text(source + FAILING)
    (example_project / "fail.flag").write_text("")
    config = example_project / "oloproof.yaml"
    text = config.read_text()
    assert "object: app:SupportRag" in text
    text = text.replace("object: app:SupportRag", "object: failing_case_app:FailsOnMoneyBack")
    config.write_text(re.sub(r"^batch_size:.*$", "batch_size: 13", text, flags=re.MULTILINE))

    code, out, err = run_cli("run", str(example_project), "--json")
    assert code == 0, err
    report = json.loads(out)
    overall = {row["criterion"]: row for row in report["metrics"] if row["slice"] is None}
    assert sorted(overall) == sorted(["answer_correct", "hit_rate_at_2", "recall_at_2", "ndcg_at_6", "citations_valid"])
    for criterion, row in overall.items():
        assert (row["observed"], row["missing"], row["excluded"]) == (12, 1, 0), criterion
    # money_back was the only case whose retrieval missed and one of the wrong answers.
    assert (overall["answer_correct"]["successes"], overall["hit_rate_at_2"]["estimate"]) == (9, 1.0)
    assert report["cache"]["execution"] == {"hit": 0, "miss": 13}
    assert report["cache"]["generate"] == {"hit": 0, "miss": 13}
    assert report["cache"]["judgment"] == {"hit": 0, "miss": 60}

    code, out, err = run_cli("show", report["run_id"], "--project", str(example_project))
    assert code == 0, err
    assert [_row(out, c) for c in ("answer_correct", "hit_rate_at_2", "ndcg_at_6", "citations_valid")] == [
        "│ answer_correct  │ 75.0%    │ [42.8%, 94.6%]  │ 9 / 12 observed · 1 missing · 0 excluded     │",
        "│ hit_rate_at_2   │ 100.0%   │ [73.5%, 100.0%] │ 12 / 12 observed · 1 missing · 0 excluded    │",
        "│ ndcg_at_6       │ 0.938    │ [0.690, 0.993]  │ mean of 12 observed · 1 missing · 0 excluded │",
        "│ citations_valid │ 100.0%   │ [73.5%, 100.0%] │ 12 / 12 observed · 1 missing · 0 excluded    │",
    ]

    rows = _query(
        run_cli, example_project, "SELECT status, error_stage, error FROM cases WHERE case_id = 'money_back'"
    )
    assert len(rows) == 1
    assert (rows[0]["status"], rows[0]["error_stage"]) == ("missing", "generate")
    module = (example_project / "failing_case_app.py").resolve()
    assert rows[0]["error"] == f"RuntimeError: model endpoint timed out (at {module}:{_raise_line(example_project)})"
    others = _query(run_cli, example_project, "SELECT DISTINCT status, error FROM cases WHERE case_id <> 'money_back'")
    assert others == [{"status": "ok", "error": None}]
    judged = _query(
        run_cli,
        example_project,
        "SELECT DISTINCT status, reason FROM judgments WHERE case_id = 'money_back'",
    )
    assert judged == [{"status": "missing", "reason": "generate_error"}]

    # The failure was not cached: a re-run calls generate for that case again (and only it).
    (example_project / "fail.flag").unlink()
    code, out, err = run_cli("run", str(example_project))
    assert code == 0, err
    assert "Stages: retrieve 1 hit/0 miss; generate 0 hit/1 miss" in out
    assert "Cache: execution 12 hit/1 miss; judgment 60 hit/5 miss" in out
    assert _row(out, "answer_correct") == (
        "│ answer_correct  │ 69.2%    │ [38.5%, 91.0%]  │ 9 / 13 observed · 0 missing · 0 excluded     │"
    )
    rows = _query(
        run_cli,
        example_project,
        "SELECT status, error FROM cases WHERE case_id = 'money_back' ORDER BY run_id",
    )
    assert [row["status"] for row in rows] == ["missing", "ok"]


def _raise_line(project) -> int:
    lines = (project / "failing_case_app.py").read_text().splitlines()
    return next(n for n, text in enumerate(lines, start=1) if "raise RuntimeError" in text)
