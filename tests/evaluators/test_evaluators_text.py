"""The deterministic answer evaluators on hand-made cases: contains, exact_match, regex."""

from __future__ import annotations

import pytest

from oloproof._exceptions import ConfigError, EvaluatorConfigError
from oloproof.evaluators import CaseView, JudgeContext, Verdict, build_evaluators


def view(output, expected=None, **extra) -> CaseView:
    return CaseView(
        case_id="c1",
        input={"question": "q"},
        expected=expected if expected is not None else {},
        metadata={},
        output=output,
        **extra,
    )


def build(entry: dict, *, rag: bool = False):
    (evaluator,) = build_evaluators([entry], rag=rag)
    return evaluator


def verdict(entry: dict, case: CaseView) -> Verdict:
    evaluator = build(entry)
    fields = evaluator.read(case)
    if isinstance(fields, Verdict):
        return fields
    return evaluator.judge(fields, JudgeContext())


# --- contains -----------------------------------------------------------------


def test_contains_folds_case_and_normalizes_whitespace():
    case = view({"answer": "Refunds take  14\n DAYS from approval."}, {"answer": "14 days"})
    assert verdict({"type": "contains"}, case) == Verdict(score=1.0, passed=True)


def test_contains_fails_when_the_text_is_absent():
    case = view({"answer": "Refunds take two weeks."}, {"answer": "14 days"})
    assert verdict({"type": "contains"}, case) == Verdict(score=0.0, passed=False)


def test_contains_case_sensitive_option():
    case = view({"answer": "14 DAYS"}, {"answer": "14 days"})
    assert verdict({"type": "contains", "case_sensitive": True}, case).passed is False
    assert verdict({"type": "contains", "case_sensitive": False}, case).passed is True


def test_contains_accepts_any_item_of_a_list_of_answers():
    entry = {"type": "contains"}
    expected = {"answer": ["two weeks", "14 days"]}
    assert verdict(entry, view({"answer": "about two  weeks"}, expected)).passed is True
    assert verdict(entry, view({"answer": "14 days"}, expected)).passed is True
    assert verdict(entry, view({"answer": "a month"}, expected)).passed is False


def test_contains_reads_dotted_fields_and_the_whole_output():
    entry = {"type": "contains", "field": "result.text", "expected_field": "gold.short"}
    case = view({"result": {"text": "It is 14 days."}}, {"gold": {"short": "14 days"}})
    assert verdict(entry, case).passed is True
    assert verdict({"type": "contains", "field": None}, view("It is 14 days.", {"answer": "14 days"})).passed


def test_contains_missing_output_field_fails_with_a_reason():
    case = view({"text": "14 days"}, {"answer": "14 days"})
    assert verdict({"type": "contains"}, case) == Verdict(
        score=0.0, passed=False, reason="output_field_missing"
    )
    assert verdict({"type": "contains"}, view(None, {"answer": "x"})).reason == "output_field_missing"


def test_contains_missing_expected_answer_is_excluded():
    assert verdict({"type": "contains"}, view({"answer": "x"}, {})) == Verdict(
        status="excluded", reason="no_expected_answer"
    )
    assert verdict(
        {"type": "contains", "expected_field": "gold.short"}, view({"answer": "x"}, {"gold": {}})
    ) == Verdict(status="excluded", reason="no_expected_gold_short")


def test_contains_compares_numbers_as_text():
    assert verdict({"type": "contains"}, view({"answer": "about 14 days"}, {"answer": 14})).passed is True


# --- exact_match --------------------------------------------------------------


def test_exact_match_normalizes_case_and_whitespace_but_needs_equality():
    entry = {"type": "exact_match"}
    assert verdict(entry, view({"answer": "  Fourteen\tDays "}, {"answer": "fourteen days"})).passed is True
    assert verdict(entry, view({"answer": "Fourteen days."}, {"answer": "fourteen days"})).passed is False
    assert verdict(entry, view({"answer": "It is fourteen days"}, {"answer": "fourteen days"})).passed is False


def test_exact_match_case_sensitive_and_unicode_normalization():
    assert verdict({"type": "exact_match", "case_sensitive": True}, view({"answer": "Yes"}, {"answer": "yes"})).passed is False
    # NFKC: a full-width digit equals its ASCII form.
    assert verdict({"type": "exact_match"}, view({"answer": "\uff11\uff14 days"}, {"answer": "14 days"})).passed is True


def test_exact_match_list_of_answers():
    expected = {"answer": ["yes", "yep"]}
    assert verdict({"type": "exact_match"}, view({"answer": "YEP"}, expected)).passed is True
    assert verdict({"type": "exact_match"}, view({"answer": "no"}, expected)).passed is False


def test_exact_match_missing_field_and_missing_expected():
    assert verdict({"type": "exact_match"}, view({}, {"answer": "yes"})) == Verdict(
        score=0.0, passed=False, reason="output_field_missing"
    )
    assert verdict({"type": "exact_match"}, view({"answer": "yes"}, {"answer": None})) == Verdict(
        status="excluded", reason="no_expected_answer"
    )


def test_answer_evaluators_default_criterion_and_spec():
    evaluator = build({"type": "exact_match"})
    assert evaluator.criterion == "exact_match"
    assert build({"type": "contains", "criterion": "answer_correct"}).criterion == "answer_correct"
    assert evaluator.spec() == {
        "type": "exact_match",
        "version": "1",
        "options": {
            "type": "exact_match",
            "criterion": None,
            "field": "answer",
            "expected_field": "answer",
            "case_sensitive": False,
        },
    }
    assert evaluator.kind == "proportion" and evaluator.needs_retrieval is False


# --- regex --------------------------------------------------------------------


def test_regex_searches_the_output_field():
    entry = {"type": "regex", "pattern": r"\b14 days\b"}
    assert verdict(entry, view({"answer": "within 14 days."})).passed is True
    assert verdict(entry, view({"answer": "within 140 days."})).passed is False


def test_regex_ignore_case():
    case = view({"answer": "REFUND approved"})
    assert verdict({"type": "regex", "pattern": "refund"}, case).passed is False
    assert verdict({"type": "regex", "pattern": "refund", "ignore_case": True}, case).passed is True


def test_regex_missing_field_fails_and_needs_no_expected():
    assert verdict({"type": "regex", "pattern": "x"}, view({"text": "x"})) == Verdict(
        score=0.0, passed=False, reason="output_field_missing"
    )
    assert build({"type": "regex", "pattern": "x"}).criterion == "regex"


def test_regex_invalid_pattern_is_a_config_error():
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "contains"}, {"type": "regex", "pattern": "(unclosed"}], rag=False)
    error = raised.value
    assert isinstance(error, ConfigError)
    assert error.field == "evaluators.1.pattern"
    assert error.message == (
        "invalid regular expression: missing ), unterminated subpattern at position 0"
    )


def test_regex_requires_a_pattern():
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "regex"}], rag=False)
    assert (raised.value.field, raised.value.message) == (
        "evaluators.0.pattern",
        "required option of regex is missing",
    )


# --- build_evaluators ---------------------------------------------------------


def test_unknown_type_and_unknown_option_name_their_field():
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "bleu"}], rag=True)
    assert raised.value.field == "evaluators.0.type"
    assert raised.value.message.startswith("unknown evaluator type 'bleu' (known: ")
    assert "contains" in raised.value.message and "ndcg" in raised.value.message
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "contains", "feild": "answer"}], rag=False)
    assert (raised.value.field, raised.value.message) == ("evaluators.0.feild", "unknown option for contains")


def test_two_entries_with_one_criterion_are_rejected():
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "contains"}, {"type": "exact_match", "criterion": "contains"}], rag=False)
    assert raised.value.field == "evaluators.1.criterion"
    assert raised.value.message == "criterion 'contains' is already produced by evaluator 0"


def test_a_non_mapping_entry_is_rejected():
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators(["contains"], rag=False)
    assert (raised.value.field, raised.value.message) == ("evaluators.0", "expected a mapping with a 'type'")
