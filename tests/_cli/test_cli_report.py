"""``oloproof report`` and ``oloproof trend`` on the example: the walkthrough's diagnosis and
comparison in one HTML page, the funnel 13 → 12 → 12 → 10 → 9, and bad input refused whole."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from inprocess import invoke_cli as _invoke
from projects import copy_project

from oloproof.report import read_report_cases

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"


@pytest.fixture(scope="module")
def walkthrough(prefect_api, tmp_path_factory) -> dict[str, str]:
    """The example's run, its gold-context diagnosis, the token-budget run and their comparison."""
    target = tmp_path_factory.mktemp("report-example") / "support_rag"
    copy_project(EXAMPLE, target)

    def ok(*argv: str, expect: int = 0) -> dict:
        code, out, err = _invoke(*argv, "--project", str(target), "--json")
        assert code == expect, err
        return json.loads(out)

    code, out, err = _invoke("run", str(target), "--json")
    assert code == 0, err
    baseline = json.loads(out)["run_id"]
    diagnosis = ok("diagnose", baseline, "--intervention", "gold-context", "--criterion", "answer_correct")
    code, out, err = _invoke("run", str(target), "--json", "--set", "system.rag.token_budget=120")
    assert code == 0, err
    candidate = json.loads(out)["run_id"]
    comparison = ok("compare", candidate, baseline, "--policy", str(target / "compare.yaml"), expect=3)
    return {"dir": str(target), "baseline": baseline, "candidate": candidate,
            "diagnosis": diagnosis["diagnosis_id"], "comparison": comparison["comparison_id"]}


def _report(run_cli, w, *argv: str) -> tuple[int, str, str]:
    return run_cli("report", *argv, "--project", w["dir"])


def test_the_report_holds_the_funnel_labelled_by_the_diagnosis_and_the_comparison(run_cli, walkthrough, tmp_path):
    w, output = walkthrough, tmp_path / "report.html"
    code, out, err = _report(run_cli, w, w["baseline"], "--diagnosis", w["diagnosis"], "--comparison",
                             w["comparison"], "-o", str(output), "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["funnel"] == [13, 12, 12, 10, 9]
    html = output.read_text(encoding="utf-8")
    assert "answer_correct: 13 → 12 → 12 → 10 → 9" in html
    rows = [row.split("</tr>")[0] for row in html.split('<tr class="funnel-step"')[1:5]]
    steps = {re.search(r'data-step="(\w+)"', row).group(1): re.findall(r'<span class="label">(\w+)</span>', row)
             for row in rows}  # the answer_correct funnel's steps, labelled
    steps = {name: labels[0] for name, labels in steps.items() if labels}
    assert steps == {"retrieved": "RETRIEVAL_MISS", "in_context": "CONTEXT_ASSEMBLY_LOSS",
                     "answered": "GENERATION_FAILURE"}  # fmt: skip
    assert f"Comparison {w['comparison']}" in html and "gate BLOCK" in html
    assert f"Diagnosis {w['diagnosis']}" in html
    cases = read_report_cases(html)["cases"]
    assert len(cases) == 13
    labelled = {c["id"]: c["label"] for c in cases if c["label"]}
    assert labelled == {"money_back": "RETRIEVAL_MISS", "refund_review": "CONTEXT_ASSEMBLY_LOSS",
                        "security_review": "CONTEXT_ASSEMBLY_LOSS", "seat_count": "GENERATION_FAILURE"}
    dropped = [p for c in cases if c["id"] == "refund_review" for p in c["candidates"] if p["dropped"]]
    assert {p["dropped"] for p in dropped} <= {"beyond_top_k", "token_budget"} and "token_budget" in {
        p["dropped"] for p in dropped}
    # The flows wrote the same kind of page beside what they recorded, for the Prefect UI's links:
    # the run's, the diagnosis's (labelled by it) and the comparison's (its candidate, with it).
    store = Path(w["dir"]) / ".oloproof" / "results"
    assert (store / "runs" / w["baseline"] / "report.html").is_file()
    diagnosed = (store / "diagnoses" / w["diagnosis"].removeprefix("sha256:") / "report.html").read_text("utf-8")
    assert "RETRIEVAL_MISS" in diagnosed and f"Run {w['baseline']}" in diagnosed
    compared = (store / "comparisons" / w["comparison"].removeprefix("sha256:") / "report.html").read_text("utf-8")
    assert f"Run {w['candidate']}" in compared and "gate BLOCK" in compared


def test_a_child_runs_report_says_what_it_is_and_a_score_diagnosis_labels_its_funnel(run_cli, walkthrough, tmp_path):
    w = walkthrough
    store = Path(w["dir"]) / ".oloproof" / "results"
    record = json.loads((store / "diagnoses" / w["diagnosis"].removeprefix("sha256:") / "diagnosis.json").read_text())
    gold_run = record["child_runs"]["gold_context"]
    code, _, err = _report(run_cli, w, gold_run, "-o", str(tmp_path / "child.html"))
    assert code == 0, err
    html = (tmp_path / "child.html").read_text(encoding="utf-8")
    assert f"A re-execution (gold context) of run {w['baseline']} for a diagnosis" in html
    assert "No funnel" in html and 'id="trend"' not in html  # the gold context was not retrieved; no history
    code, out, err = run_cli("diagnose", w["baseline"], "--intervention", "gold-context", "--criterion", "ndcg_at_6",
                             "--threshold", "0.9", "--project", w["dir"], "--json")  # fmt: skip
    assert code == 0, err
    scored = json.loads(out)["diagnosis_id"]
    code, out, err = _report(run_cli, w, w["baseline"], "--diagnosis", scored, "-o", str(tmp_path / "s.html"), "--json")
    assert code == 0, err
    assert "ndcg_at_6: 13 → 12 → 12 →" in (tmp_path / "s.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(("argv", "message"), [
    (["run_01ARZ3NDEKTSV4RRFFQ69G5FAV"], "no complete run 'run_01ARZ3NDEKTSV4RRFFQ69G5FAV'"),
    (["{candidate}", "--diagnosis", "{diagnosis}"], "is of run {baseline}, not {candidate}"),
    (["{baseline}", "--diagnosis", "sha256:" + "0" * 64], "no diagnosis sha256:"),
    (["{baseline}", "--comparison", "sha256:" + "0" * 64], "no comparison sha256:"),
])  # fmt: skip
def test_bad_input_is_one_line_and_writes_nothing(run_cli, walkthrough, tmp_path, argv, message):
    output = tmp_path / "report.html"
    argv = [a.format(**walkthrough) for a in argv]
    code, out, err = _report(run_cli, walkthrough, *argv, "-o", str(output))
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and message.format(**walkthrough) in err
    assert list(tmp_path.iterdir()) == []


def test_a_comparison_not_of_the_run_and_an_unwritable_output_are_refused(run_cli, walkthrough, tmp_path):
    w = walkthrough
    code, _, err = run_cli("run", w["dir"], "--json", "--set", "system.rag.top_k=3")
    assert code == 0, err
    other = json.loads(_)["run_id"]
    code, _, err = _report(run_cli, w, other, "--comparison", w["comparison"], "-o", str(tmp_path / "r.html"))
    assert code == 2 and f"does not involve run {other}" in err
    for target, message in ((tmp_path / "missing" / "r.html", "does not exist"), (tmp_path, "is a folder")):
        code, _, err = _report(run_cli, w, w["baseline"], "-o", str(target))
        assert code == 2 and message in err and err.strip().count("\n") == 0
    assert [p.name for p in tmp_path.iterdir()] == []


def test_trend_marks_the_index_change_across_five_runs(run_cli, tmp_path):
    project = tmp_path / "support_rag"
    copy_project(EXAMPLE, project)
    for index in ("kb-1", "kb-1", "kb-1", "kb-2", "kb-2"):
        code, _, err = run_cli("run", str(project), "--set", f"system.rag.index_version={index}")
        assert code == 0, err
    code, out, err = run_cli("trend", str(project), "--criterion", "answer_correct")
    assert code == 0, err
    rows = [line for line in out.splitlines() if "run_" in line]
    assert len(rows) == 5
    assert [line.split("│")[1].strip().startswith("* ") for line in rows] == [False, False, False, True, False]
    assert "changed: +0.0 points" in rows[3] and "over 13 shared cases, not distinguishable" in rows[3]
    assert "69.2%" in rows[0] and "[38.5%, 91.0%]" in rows[0]
    code, out, err = run_cli("trend", str(project), "--criterion", "answer_correct", "--last", "2", "--json")
    assert code == 0, err
    # The oldest run shown is still set against the run before it: the change stays marked.
    assert [(r["index_version"], r["changed"]) for r in json.loads(out)] == [("kb-2", True), ("kb-2", False)]
    assert json.loads(out)[0]["paired"] == 13
    code, _, err = run_cli("trend", str(project), "--criterion", "no_such_criterion")
    assert code == 2 and "no run in the store has criterion 'no_such_criterion'" in err
