"""Diagnosis of a run with repeats: failures by majority, UNSTABLE by a stated test,
recovery only in every repeat, a partial recovery never a diagnosis."""

from __future__ import annotations

import numpy as np

from oloproof.diagnosis import (
    LABELS,
    NOT_DIAGNOSED,
    Passes,
    RepeatedOutcome,
    case_passes,
    implicated_factor,
    label_case,
    render_case_lines,
    render_diagnosis,
    select_failures,
)


def _rows(case_id, verdicts, *, judge_repeats=1, status="observed"):
    return [{"case_id": case_id, "criterion": "answer_correct", "status": status, "passed": v, "value": float(v),
             "repeat": r, "judge_repeat": j}
            for r, v in enumerate(verdicts) for j in range(judge_repeats)]  # fmt: skip


def _label(original, control, gold, position=None, repeats=5):
    outcome = RepeatedOutcome(Passes(original, repeats), Passes(control, repeats), Passes(gold, repeats))
    return label_case("c1", control_passed=False, gold_passed=False, top_k=2, relevant={"kb-1"},
                      recorded={"best_relevant_position": position, "context": [], "dropped": []},
                      repeated=outcome)


def test_a_case_fails_when_it_fails_in_more_than_half_its_repeats():
    rows = (_rows("mostly_fails", [True, False, False]) + _rows("mostly_passes", [True, True, False])
            + _rows("always", [False] * 3) + _rows("missing", [False], status="missing"))
    cases = [{"case_id": c, "expected": {"gold_context": [{"doc_id": "g", "text": "t"}]}}
             for c in ("mostly_fails", "mostly_passes", "always", "missing")]
    selection = select_failures(rows, cases, criterion="answer_correct", threshold=None, run_id="run_x")
    assert selection.with_gold == ("always", "mostly_fails")


def test_a_repeat_passes_by_the_majority_of_its_judge_repeats():
    rows = _rows("c", [True, False, True], judge_repeats=3)
    rows[1]["passed"] = rows[1]["value"] = False  # one of repeat 0's three judge calls disagrees
    rows[3]["passed"] = True  # two of repeat 1's three disagree with the third: not a majority
    rows[4]["passed"] = True
    assert case_passes(rows, "answer_correct", None) == {"c": Passes(passed=3, repeats=3)}


def test_a_control_at_the_runs_rate_is_not_unstable_and_one_far_above_it_is():
    assert _label(original=0, control=2, gold=5).label == "RETRIEVAL_MISS"
    unstable = _label(original=0, control=5, gold=5)
    assert (unstable.label, unstable.strength, unstable.control_passed) == ("UNSTABLE", "control_recovery", True)


def test_recovery_in_every_repeat_is_diagnosed_in_some_is_partial_and_in_none_is_generation():
    recovered = _label(original=1, control=1, gold=5, position=4)
    assert (recovered.label, recovered.intervention_passed) == ("RANKED_OUT", True)
    assert recovered.as_record()["intervention_passes"] == 5
    partial = _label(original=1, control=1, gold=3, position=4)
    assert (partial.label, partial.strength, partial.intervention_passed) == (
        "PARTIAL_RECOVERY", "partial_recovery", False)
    assert _label(original=1, control=1, gold=0, position=4).label == "GENERATION_FAILURE"
    # A partial recovery implicates nothing, and is not counted among the recovered.
    assert implicated_factor([recovered, partial]) == ("top-k cut-off", 1, 1)
    assert LABELS["PARTIAL_RECOVERY"].factor is None


def test_a_case_without_repeats_is_recorded_as_it_always_was():
    label = label_case("c1", control_passed=False, gold_passed=True, top_k=2, relevant={"kb-1"},
                       recorded={"best_relevant_position": None, "context": [], "dropped": []})
    assert set(label.as_record()) == {"case_id", "label", "reason", "strength", "best_relevant_position",
                                      "control_passed", "intervention_passed"}


def test_the_report_says_the_test_and_the_repeats():
    cases = [_label(0, 0, 5).as_record() | {"case_id": "a"}, _label(0, 1, 3).as_record() | {"case_id": "b"},
             _label(0, 5, 5).as_record() | {"case_id": "c"}]
    record = {"diagnosis_id": "sha256:" + "0" * 64, "parent_run_id": "run_x", "criterion": "answer_correct",
              "intervention": "gold-context", "cases": cases, "recovered": 1, "child_runs": {}}
    lines = render_diagnosis(record)
    assert ("Control: 1 of 3 passed at a rate different from the run's when re-executed 5 times without the "
            "intervention (Fisher's exact test, two-sided, 5%)") in lines
    assert "Recovered under gold context: 1 of 3 (in every one of 5 repeats)" in lines
    assert "PARTIAL_RECOVERY: 1 of 3, recovered in some repeats only; not diagnosed" in lines
    case_lines = render_case_lines(record)
    assert case_lines[1] == ("b: PARTIAL_RECOVERY, recovered_in_some_repeats, strength partial_recovery, best relevant "
                             "position none, passed in 0 of the run's repeats, 1 of 5 in the control, recovered in "
                             "3 of 5 repeats with the gold context")  # fmt: skip



def test_two_diagnoses_of_one_run_under_fresh_draws_agree_on_the_cases_both_diagnose():
    # One diagnosed run (its counts fixed), two diagnoses drawing control and gold context
    # afresh: a case both diagnose gets one label, whatever its true pass probabilities.
    rng = np.random.default_rng(27)
    repeats, draws, worst = 5, 1000, 0.0
    for p_run in (0.0, 0.2, 0.4):
        for p_gold in np.linspace(0.0, 1.0, 11):
            original = min(int(rng.binomial(repeats, p_run)), 2)  # selected: failed in most repeats
            counts = rng.binomial(repeats, [p_run, p_gold, p_run, p_gold], size=(draws, 4))
            conflicts = 0
            for control_a, gold_a, control_b, gold_b in counts:
                a, b = _label(original, control_a, gold_a, position=4).label, _label(original, control_b, gold_b,
                                                                                       position=4).label
                conflicts += a != b and not {a, b} & NOT_DIAGNOSED
            worst = max(worst, conflicts / draws)
    # Conflicting labels need all five gold repeats to pass in one draw and none in the
    # other: at most 2 * max p^5 (1-p)^5 = 0.2% at p = 1/2.
    assert worst <= 0.006
