"""`oloproof diagnose` on the example prints the product page's "Finding the reason" and
"Testing a fix before making it" sections, and records complete child runs.

One run of the example and one of each diagnosis serve the whole module (flows are slow).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from inprocess import invoke_cli as cli
from inprocess import invoke_ok as _ok
from projects import copy_project

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"
DIAGNOSIS_ID = r"sha256:[0-9a-f]{64}"
RUN_ID = r"run_[0-9A-Z]{26}"
HYPOTHESIS = "This is a hypothesis to test, not an established cause."
CAUSAL_WORDS = ("cause of", "caused", "because", "root cause")

GOLD_PAGE = [
    "Selected: 4 failed cases with gold context (observed; no population claim)",
    "Control: 0 of 4 passed when re-executed without the intervention",
    "Recovered under gold context: 3 of 4",
    "RETRIEVAL_MISS: 1 of 4, recovered; no relevant evidence was retrieved",
    "CONTEXT_ASSEMBLY_LOSS: 2 of 4, recovered; relevant evidence within top-k was left out of the context",
    "GENERATION_FAILURE: 1 of 4, still failed with the gold context",
    "Implicated: context budget, in 2 of the 3 recovered failures.",
    f"Candidate experiment: a larger token budget. {HYPOTHESIS}",
    f"Candidate experiment: smaller chunks. {HYPOTHESIS}",
]

CASE_LINES = [
    "money_back: RETRIEVAL_MISS, relevant_not_retrieved, strength intervention_recovery, best relevant position none",
    ("refund_review: CONTEXT_ASSEMBLY_LOSS, relevant_dropped_from_context, strength intervention_recovery, "
     "best relevant position 2"),
    ("seat_count: GENERATION_FAILURE, fails_with_gold_context, strength intervention_non_recovery, "
     "best relevant position 1"),
    ("security_review: CONTEXT_ASSEMBLY_LOSS, relevant_dropped_from_context, strength intervention_recovery, "
     "best relevant position 2"),
]


@pytest.fixture(scope="module")
def story(prefect_api, tmp_path_factory):
    """Run the example, then the page's diagnoses (and each once more), recording every output."""
    project = tmp_path_factory.mktemp("diagnose-example") / "support_rag"
    copy_project(EXAMPLE, project)
    where = ("--project", str(project))

    def count_runs() -> int:
        return json.loads(_ok("query", "SELECT count(*) AS n FROM all_runs", *where, "--json"))[0]["n"]

    s: dict = {"project": project, "where": where}
    s["run_id"] = run_id = json.loads(_ok("run", str(project), "--json"))["run_id"]
    s["runs_after_run"] = count_runs()
    gold = ("diagnose", run_id, "--intervention", "gold-context", "--criterion", "answer_correct", *where)
    topk = ("diagnose", run_id, "--intervention", "top-k", "--top-k", "4", "--criterion", "answer_correct", *where)
    s["gold"] = _ok(*gold)
    s["runs_after_gold"] = count_runs()
    s["labels_after_gold"] = _ok("query", "SELECT label, count(*) AS n FROM diagnosis_labels GROUP BY 1 ORDER BY 1",
                                 *where, "--json")
    s["labels_query"] = _ok("query", "SELECT label, count(*) FROM diagnosis_labels GROUP BY 1", *where)
    s["gold_id"] = re.fullmatch(f"Diagnosis ({DIAGNOSIS_ID})", s["gold"].splitlines()[9]).group(1)
    s["inspect_gold"] = _ok("inspect", s["gold_id"], *where)
    s["topk"] = _ok(*topk)
    s["runs_after_topk"] = count_runs()
    s["gold_again"] = _ok(*gold)
    s["topk_again"] = _ok(*topk)
    s["runs_after_repeats"] = count_runs()
    s["gold_json"] = json.loads(_ok(*gold, "--json"))
    s["runs"] = {row["run_id"]: row for row in json.loads(_ok("query", "SELECT * FROM all_runs", *where, "--json"))}
    return s


def test_gold_context_diagnosis_prints_the_page(story):
    lines = story["gold"].splitlines()
    assert lines[:9] == GOLD_PAGE
    assert len(lines) == 12
    assert re.fullmatch(f"Diagnosis {DIAGNOSIS_ID}", lines[9])
    assert re.fullmatch(f"Child runs: gold context {RUN_ID}, control {RUN_ID}", lines[10])
    assert lines[11] == f"Cases: oloproof inspect {story['gold_id']} --project {story['project']}"


def test_inspect_lists_the_case_behind_every_count(story):
    assert story["inspect_gold"].splitlines() == CASE_LINES


def test_top_k_replay_prints_the_page_and_reuses_the_gold_diagnosis(story):
    lines = story["topk"].splitlines()
    gold_id = story["gold_id"]
    assert lines[:8] == [
        "Selected: 4 failed cases with gold context (observed; no population claim)",
        "Control: 0 of 4 passed when re-executed without the intervention",
        "Recovered under top-k 4: 0 of 4",
        "Confirmed under top-k 4: 0 of 0 RANKED_OUT cases also recovered",
        f"Labels from gold context (diagnosis {gold_id}): 3 of 4 recovered",
        "RETRIEVAL_MISS: 1 of 4, recovered; no relevant evidence was retrieved",
        "CONTEXT_ASSEMBLY_LOSS: 2 of 4, recovered; relevant evidence within top-k was left out of the context",
        "GENERATION_FAILURE: 1 of 4, still failed with the gold context",
    ]
    assert len(lines) == 11
    topk_id = re.fullmatch(f"Diagnosis ({DIAGNOSIS_ID})", lines[8]).group(1)
    assert topk_id != gold_id
    gold_children = re.fullmatch(f"Child runs: (gold context {RUN_ID}, control {RUN_ID})",
                                 story["gold"].splitlines()[10]).group(1)
    assert re.fullmatch(f"Child runs: {re.escape(gold_children)}, top-k 4 {RUN_ID}, replay control {RUN_ID}",
                        lines[9])
    assert lines[10] == f"Cases: oloproof inspect {topk_id} --project {story['project']}"


def test_asking_again_gives_the_same_diagnosis_and_no_new_child_runs(story):
    assert story["runs_after_run"] == 1
    assert story["runs_after_gold"] == 3  # + gold context, control
    assert story["runs_after_topk"] == 5  # + top-k 4, replay control (the gold diagnosis is reused)
    assert story["gold_again"] == story["gold"]
    assert story["topk_again"] == story["topk"]
    assert story["runs_after_repeats"] == 5


def test_output_implicates_and_never_claims_a_cause(story):
    text = "\n".join(story[k] for k in ("gold", "topk", "inspect_gold")).lower()
    for word in CAUSAL_WORDS:
        assert word not in text
    assert "implicated: context budget" in text and "candidate experiment" in text


def test_diagnosis_labels_are_queryable(story):
    assert json.loads(story["labels_after_gold"]) == [
        {"label": "CONTEXT_ASSEMBLY_LOSS", "n": 2},
        {"label": "GENERATION_FAILURE", "n": 1},
        {"label": "RETRIEVAL_MISS", "n": 1},
    ]
    rows = story["labels_query"].splitlines()
    assert sorted(rows[1:]) == ["CONTEXT_ASSEMBLY_LOSS\t2", "GENERATION_FAILURE\t1", "RETRIEVAL_MISS\t1"]
    code, out, err = cli("query", "SELECT case_id, label FROM diagnosis_labels WHERE diagnosis_id = $1 ORDER BY 1",
                         "--param", story["gold_id"], *story["where"], "--json")
    assert code == 0, err
    assert json.loads(out) == [
        {"case_id": "money_back", "label": "RETRIEVAL_MISS"},
        {"case_id": "refund_review", "label": "CONTEXT_ASSEMBLY_LOSS"},
        {"case_id": "seat_count", "label": "GENERATION_FAILURE"},
        {"case_id": "security_review", "label": "CONTEXT_ASSEMBLY_LOSS"},
    ]


def test_child_runs_are_complete_runs_of_the_failed_cases(story):
    record = story["gold_json"]
    assert record["diagnosis_id"] == story["gold_id"]
    assert record["parent_run_id"] == story["run_id"]
    topk_children = re.findall(RUN_ID, story["topk"].splitlines()[9])
    assert topk_children[:2] == [record["child_runs"]["gold_context"], record["child_runs"]["control"]]
    assert set(story["runs"]) == {story["run_id"], *topk_children}
    for child in topk_children:
        assert story["runs"][child]["status"] == "complete"
        assert story["runs"][child]["kind"] == "diagnosis_child"
        code, out, err = cli("inspect", child, *story["where"], "--json")
        assert code == 0, err
        assert sorted({c["case_id"] for c in json.loads(out)["cases"]}) == [
            "money_back", "refund_review", "seat_count", "security_review"]
        code, out, err = cli("show", child, *story["where"], "--json")
        assert code == 0, err
        assert json.loads(out)["kind"] == "diagnosis_child"
    manifest = json.loads((story["project"] / ".oloproof" / "results" / "runs" / record["child_runs"]["gold_context"]
                           / "run.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["kind"] == "diagnosis_child"
    assert manifest["variant"]["context_source"] == "gold"
    assert manifest["parent"]["run_id"] == story["run_id"]
    code, out, err = cli("query", "SELECT diagnosis_id, parent_run_id, intervention FROM diagnoses ORDER BY 3",
                         *story["where"], "--json")
    assert code == 0, err
    topk_id = story["topk"].splitlines()[8].removeprefix("Diagnosis ")
    assert json.loads(out) == [
        {"diagnosis_id": story["gold_id"], "parent_run_id": story["run_id"], "intervention": "gold-context"},
        {"diagnosis_id": topk_id, "parent_run_id": story["run_id"], "intervention": "top-k"},
    ]


TREND_SQL = """SELECT r.created_at, r.index_version, m.criterion, m.estimate, m.low, m.high
               FROM metrics m JOIN runs r USING (run_id)
               WHERE m.slice IS NULL AND m.criterion = $1 ORDER BY r.created_at"""
"""The README's metric trend across nightly runs."""


def test_runs_lists_your_run_and_runs_all_every_run_with_its_kind(story):
    where, run_id = story["where"], story["run_id"]
    children = re.findall(RUN_ID, story["topk"].splitlines()[9])
    assert [(row["run_id"], row["kind"]) for row in json.loads(_ok("runs", *where, "--json"))] == [(run_id, "run")]
    assert [line.split()[0] for line in _ok("runs", *where).splitlines()] == [run_id]
    kinds = {row["run_id"]: row["kind"] for row in json.loads(_ok("runs", "--all", *where, "--json"))}
    assert kinds == {run_id: "run", **dict.fromkeys(children, "diagnosis_child")}
    lines = _ok("runs", "--all", *where).splitlines()
    assert {line.split()[0]: line.split()[1] for line in lines} == kinds
    # The kind is a column: the dates after it line up.
    assert len({line.index(story["runs"][line.split()[0]]["created_at"]) for line in lines}) == 1, lines


def test_the_trend_query_reads_your_run_only(story):
    rows = json.loads(_ok("query", TREND_SQL, "--param", "answer_correct", *story["where"], "--json"))
    assert [(row["created_at"], round(row["estimate"], 4)) for row in rows] == [
        (story["runs"][story["run_id"]]["created_at"], round(9 / 13, 4))]
