"""select_failures: which recorded failures a diagnosis re-executes."""

from __future__ import annotations

import pytest

from oloproof._exceptions import UsageError
from oloproof.diagnosis import Selection, select_failures

GOLD = [{"doc_id": "kb-1", "text": "The answer."}]


def _row(case_id, criterion="answer_correct", status="observed", passed=False, value=None):
    if value is None and passed is not None:
        value = float(passed)
    return {"case_id": case_id, "criterion": criterion, "status": status, "passed": passed, "value": value}


def _cases(*ids, without_gold=()):
    return [
        {"case_id": c, "expected": {"answer": "x", **({} if c in without_gold else {"gold_context": GOLD})}}
        for c in ids
    ]


def test_failed_observed_cases_are_selected_and_split_by_gold_context():
    judgments = [_row("b", passed=False), _row("a", passed=False), _row("c", passed=True),
                 _row("d", passed=False), _row("a", criterion="other", passed=True)]
    selection = select_failures(judgments, _cases("a", "b", "c", "d", without_gold=("d",)),
                                criterion="answer_correct", threshold=None, run_id="run_X")
    assert selection == Selection(criterion="answer_correct", with_gold=("a", "b"), without_gold=("d",))


@pytest.mark.parametrize("status", ["missing", "excluded"])
def test_missing_and_excluded_cases_are_never_selected(status):
    judgments = [_row("a", passed=False), _row("m", status=status, passed=False, value=0.0),
                 _row("n", status=status, passed=None, value=None)]
    selection = select_failures(judgments, _cases("a", "m", "n"), criterion="answer_correct",
                                threshold=None, run_id="run_X")
    assert selection.with_gold == ("a",) and selection.without_gold == ()
    scored = [_row("a", criterion="ndcg_at_6", passed=None, value=0.1),
              _row("m", criterion="ndcg_at_6", status=status, passed=None, value=0.0)]
    selection = select_failures(scored, _cases("a", "m"), criterion="ndcg_at_6", threshold=0.5, run_id="run_X")
    assert selection.with_gold == ("a",)


def test_a_score_criterion_fails_strictly_below_the_threshold():
    judgments = [_row("low", criterion="ndcg_at_6", passed=None, value=0.49),
                 _row("at", criterion="ndcg_at_6", passed=None, value=0.5),
                 _row("high", criterion="ndcg_at_6", passed=None, value=0.9),
                 _row("zero", criterion="ndcg_at_6", passed=None, value=0.0)]
    selection = select_failures(judgments, _cases("low", "at", "high", "zero"), criterion="ndcg_at_6",
                                threshold=0.5, run_id="run_X")
    assert selection.with_gold == ("low", "zero")


def test_a_score_criterion_without_threshold_is_a_usage_error():
    judgments = [_row("a", criterion="ndcg_at_6", passed=None, value=0.2)]
    with pytest.raises(UsageError) as caught:
        select_failures(judgments, _cases("a"), criterion="ndcg_at_6", threshold=None, run_id="run_X")
    assert caught.value.field == "--threshold"
    assert "ndcg_at_6" in str(caught.value) and "--threshold" in str(caught.value)


def test_a_threshold_also_applies_to_a_pass_fail_criterion_value():
    judgments = [_row("a", passed=False), _row("b", passed=True)]
    selection = select_failures(judgments, _cases("a", "b"), criterion="answer_correct", threshold=1.0,
                                run_id="run_X")
    assert selection.with_gold == ("a",)


def test_an_unknown_criterion_is_a_usage_error_naming_the_known_ones():
    judgments = [_row("a"), _row("a", criterion="ndcg_at_6", passed=None, value=0.3)]
    with pytest.raises(UsageError) as caught:
        select_failures(judgments, _cases("a"), criterion="nope", threshold=None, run_id="run_X")
    assert caught.value.field == "--criterion"
    message = str(caught.value)
    assert "run_X" in message and "'nope'" in message and "answer_correct, ndcg_at_6" in message


def test_empty_or_absent_gold_context_is_not_diagnosable():
    judgments = [_row("empty"), _row("none"), _row("unknown"), _row("gold")]
    cases = [{"case_id": "empty", "expected": {"gold_context": []}},
             {"case_id": "none", "expected": None},
             {"case_id": "gold", "expected": {"gold_context": GOLD}}]
    selection = select_failures(judgments, cases, criterion="answer_correct", threshold=None, run_id="run_X")
    assert selection.with_gold == ("gold",)
    assert selection.without_gold == ("empty", "none", "unknown")


def test_no_failures_selects_nothing():
    selection = select_failures([_row("a", passed=True)], _cases("a"), criterion="answer_correct",
                                threshold=None, run_id="run_X")
    assert selection == Selection("answer_correct", (), ())
