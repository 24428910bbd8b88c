"""The printed lines of a diagnosis: the product page's wording, exactly."""

from __future__ import annotations

import copy

import pytest

from oloproof.diagnosis import (
    LABELS,
    intervention_name,
    render_case_lines,
    render_diagnosis,
    render_label_lines,
)

GOLD_ID = "sha256:" + "b" * 64
TOPK_ID = "sha256:" + "6" * 64
HYPOTHESIS = "This is a hypothesis to test, not an established cause."


def _case(case_id, label, position, *, control=False, gold=True, **extra):
    strength = {"GENERATION_FAILURE": "intervention_non_recovery", "UNSTABLE": "control_recovery"}.get(
        label, "intervention_recovery")
    return {"case_id": case_id, "label": label, "reason": LABELS[label].reason, "strength": strength,
            "best_relevant_position": position, "control_passed": control, "intervention_passed": gold, **extra}


GOLD = {
    "parent_run_id": "run_PARENT",
    "criterion": "answer_correct",
    "threshold": None,
    "intervention": "gold-context",
    "settings": {},
    "labels_from": None,
    "without_gold": [],
    # Deliberately out of order: inspect sorts by case id.
    "cases": [
        _case("seat_count", "GENERATION_FAILURE", 1, gold=False),
        _case("money_back", "RETRIEVAL_MISS", None),
        _case("security_review", "CONTEXT_ASSEMBLY_LOSS", 2),
        _case("refund_review", "CONTEXT_ASSEMBLY_LOSS", 2),
    ],
    "recovered": 3,
    "implicated": {"factor": "context budget", "count": 2, "among": 3},
    "child_runs": {"gold_context": "run_GOLD", "control": "run_CONTROL"},
    "diagnosis_id": GOLD_ID,
}

PAGE_GOLD = [
    "Selected: 4 failed cases with gold context (observed; no population claim)",
    "Control: 0 of 4 passed when re-executed without the intervention",
    "Recovered under gold context: 3 of 4",
    "RETRIEVAL_MISS: 1 of 4, recovered; no relevant evidence was retrieved",
    "CONTEXT_ASSEMBLY_LOSS: 2 of 4, recovered; relevant evidence within top-k was left out of the context",
    "GENERATION_FAILURE: 1 of 4, still failed with the gold context",
    "Implicated: context budget, in 2 of the 3 recovered failures.",
    f"Candidate experiment: a larger token budget. {HYPOTHESIS}",
    f"Candidate experiment: smaller chunks. {HYPOTHESIS}",
    f"Diagnosis {GOLD_ID}",
    "Child runs: gold context run_GOLD, control run_CONTROL",
    f"Cases: oloproof inspect {GOLD_ID}",
]


def _topk():
    record = copy.deepcopy(GOLD)
    record.update(
        intervention="top-k", settings={"top_k": 4}, labels_from=GOLD_ID, recovered=0, implicated=None,
        diagnosis_id=TOPK_ID,
        child_runs={"gold_context": "run_GOLD", "control": "run_CONTROL", "intervention": "run_TOPK",
                    "replay_control": "run_REPLAY"},
    )
    for case in record["cases"]:
        case.update(replay_control_passed=False, intervention_recovered=False)
    return record


def test_gold_context_diagnosis_prints_the_page():
    assert render_diagnosis(GOLD) == PAGE_GOLD


def test_top_k_diagnosis_prints_the_page():
    assert render_diagnosis(_topk()) == [
        "Selected: 4 failed cases with gold context (observed; no population claim)",
        "Control: 0 of 4 passed when re-executed without the intervention",
        "Recovered under top-k 4: 0 of 4",
        "Confirmed under top-k 4: 0 of 0 RANKED_OUT cases also recovered",
        f"Labels from gold context (diagnosis {GOLD_ID}): 3 of 4 recovered",
        "RETRIEVAL_MISS: 1 of 4, recovered; no relevant evidence was retrieved",
        "CONTEXT_ASSEMBLY_LOSS: 2 of 4, recovered; relevant evidence within top-k was left out of the context",
        "GENERATION_FAILURE: 1 of 4, still failed with the gold context",
        f"Diagnosis {TOPK_ID}",
        "Child runs: gold context run_GOLD, control run_CONTROL, top-k 4 run_TOPK, replay control run_REPLAY",
        f"Cases: oloproof inspect {TOPK_ID}",
    ]


def test_replay_counts_use_the_replay_control_and_confirm_only_ranked_out_cases():
    record = _topk()
    record.update(intervention="reranker", settings={"reranker": "rerank:up"}, recovered=2)
    record["cases"] = [
        _case("a", "RANKED_OUT", 5, replay_control_passed=False, intervention_recovered=True),
        _case("b", "RANKED_OUT", 4, replay_control_passed=False, intervention_recovered=False),
        _case("c", "CONTEXT_ASSEMBLY_LOSS", 1, replay_control_passed=False, intervention_recovered=True),
        # The gold control said stable; only the replay control counts on a replay.
        _case("d", "GENERATION_FAILURE", 1, gold=False, control=True, replay_control_passed=False,
              intervention_recovered=False),
        _case("e", "UNSTABLE", 1, control=False, replay_control_passed=True, intervention_recovered=False),
    ]
    lines = render_diagnosis(record)
    assert lines[1] == "Control: 1 of 5 passed when re-executed without the intervention"
    assert lines[2] == "Recovered under reranker rerank:up: 2 of 5"
    assert lines[3] == "Confirmed under reranker rerank:up: 1 of 2 RANKED_OUT cases also recovered"
    assert lines[4] == f"Labels from gold context (diagnosis {GOLD_ID}): 3 of 5 recovered"
    assert lines[-2] == ("Child runs: gold context run_GOLD, control run_CONTROL, reranker rerank:up run_TOPK, "
                         "replay control run_REPLAY")
    assert not any(line.startswith(("Implicated", "Candidate experiment")) for line in lines)


def test_not_diagnosable_line_names_the_cases_without_gold_context():
    record = copy.deepcopy(GOLD)
    record["without_gold"] = ["no_gold_a", "no_gold_b"]
    lines = render_diagnosis(record)
    assert lines[0] == PAGE_GOLD[0]
    assert lines[1].startswith("Not diagnosable: 2 failed cases without gold context")
    assert lines[1].endswith("(no_gold_a, no_gold_b)")
    assert lines[2:] == PAGE_GOLD[1:]


def test_nothing_to_diagnose_prints_the_selection_and_the_id_only():
    record = copy.deepcopy(GOLD)
    record.update(cases=[], recovered=0, implicated=None, child_runs={}, without_gold=["x"])
    assert render_diagnosis(record) == [
        "Selected: 0 failed cases with gold context (observed; no population claim)",
        "Not diagnosable: 1 failed case without gold context (x)",
        f"Diagnosis {GOLD_ID}",
    ]


def test_generation_implicated_when_nothing_recovered():
    record = copy.deepcopy(GOLD)
    record.update(cases=[_case("a", "GENERATION_FAILURE", 1, gold=False),
                         _case("b", "GENERATION_FAILURE", None, gold=False),
                         _case("c", "UNSTABLE", 1, control=True)],
                  recovered=0, implicated={"factor": "generation", "count": 2, "among": 2})
    lines = render_diagnosis(record)
    assert lines[:7] == [
        "Selected: 3 failed cases with gold context (observed; no population claim)",
        "Control: 1 of 3 passed when re-executed without the intervention",
        "Recovered under gold context: 0 of 3",
        "GENERATION_FAILURE: 2 of 3, still failed with the gold context",
        "UNSTABLE: 1 of 3, passed when re-executed without the intervention; not diagnosed",
        "Implicated: generation, in 2 of the 2 failures that did not recover.",
        f"Candidate experiment: a different prompt. {HYPOTHESIS}",
    ]
    assert lines[7] == f"Candidate experiment: a different model. {HYPOTHESIS}"


@pytest.mark.parametrize(
    ("factor", "experiments"),
    [
        ("top-k cut-off", ["a larger top_k", "a reranker"]),
        ("retrieval", ["a larger depth", "query rewriting", "hybrid retrieval"]),
        ("context composition", ["a reranker", "a smaller top_k"]),
    ],
)
def test_each_factor_names_its_candidate_experiments_as_hypotheses(factor, experiments):
    record = copy.deepcopy(GOLD)
    record["implicated"] = {"factor": factor, "count": 1, "among": 3}
    lines = render_diagnosis(record)
    assert f"Implicated: {factor}, in 1 of the 3 recovered failures." in lines
    assert [line for line in lines if line.startswith("Candidate experiment: ")] == [
        f"Candidate experiment: {e}. {HYPOTHESIS}" for e in experiments]


def test_label_lines_follow_the_fixed_order_and_skip_absent_labels():
    cases = [{"label": name} for name in ("UNSTABLE", "RANKED_OUT", "CONTEXT_DISTRACTION", "RANKED_OUT")]
    assert render_label_lines(cases) == [
        "RANKED_OUT: 2 of 4, recovered; relevant evidence was retrieved only below top-k",
        "CONTEXT_DISTRACTION: 1 of 4, recovered; relevant evidence was in the context beside other passages",
        "UNSTABLE: 1 of 4, passed when re-executed without the intervention; not diagnosed",
    ]
    assert render_label_lines([]) == []


def test_case_lines_of_the_page():
    assert render_case_lines(GOLD) == [
        ("money_back: RETRIEVAL_MISS, relevant_not_retrieved, strength intervention_recovery, "
         "best relevant position none"),
        ("refund_review: CONTEXT_ASSEMBLY_LOSS, relevant_dropped_from_context, strength intervention_recovery, "
         "best relevant position 2"),
        ("seat_count: GENERATION_FAILURE, fails_with_gold_context, strength intervention_non_recovery, "
         "best relevant position 1"),
        ("security_review: CONTEXT_ASSEMBLY_LOSS, relevant_dropped_from_context, strength intervention_recovery, "
         "best relevant position 2"),
    ]


def test_case_lines_of_a_replay_say_whether_each_recovered():
    record = _topk()
    record["cases"][0]["intervention_recovered"] = True  # seat_count
    lines = render_case_lines(record)
    assert lines[0].endswith("best relevant position none, recovered under top-k 4 no")
    assert lines[2].endswith("best relevant position 1, recovered under top-k 4 yes")


def test_intervention_names():
    assert intervention_name({"intervention": "gold-context", "settings": {}}) == "gold context"
    assert intervention_name({"intervention": "top-k", "settings": {"top_k": 4}}) == "top-k 4"
    assert intervention_name({"intervention": "reranker", "settings": {"reranker": "m:f"}}) == "reranker m:f"


def test_no_rendering_claims_a_cause():
    records = [GOLD, _topk()]
    for factor in ("top-k cut-off", "retrieval", "context composition", "generation"):
        record = copy.deepcopy(GOLD)
        record["implicated"] = {"factor": factor, "count": 1, "among": 1}
        records.append(record)
    for record in records:
        text = "\n".join(render_diagnosis(record) + render_case_lines(record)).lower()
        for word in ("cause of", "caused", "because", "root cause"):
            assert word not in text
