"""Judgment rows: the status vocabulary and the evaluator's detail."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from oloproof.records import JudgmentRow

ROW = {
    "run_id": "run_1", "case_id": "c1", "criterion": "answer_correct", "evaluator": "exact_match",
    "spec_hash": "abc", "status": "observed", "outcome": "completed", "reason": None, "value": 1.0, "passed": True,
    "detail": {}, "judgment_key": "sha256:k", "hit": False,
}  # fmt: skip


@pytest.mark.parametrize("status", ["observed", "missing", "excluded"])
def test_the_three_statuses(status):
    assert JudgmentRow(**{**ROW, "status": status}).status == status


def test_another_status_is_an_error():
    with pytest.raises(ValidationError, match="status"):
        JudgmentRow(**{**ROW, "status": "skipped"})


def test_a_missing_judgment_has_no_value():
    row = JudgmentRow(**{**ROW, "status": "missing", "reason": "generate_error", "value": None,
                         "passed": None, "judgment_key": None})
    assert (row.value, row.passed, row.judgment_key) == (None, None, None)


def test_computed_by_is_not_a_column():
    with pytest.raises(ValidationError, match="computed_by"):
        JudgmentRow(**ROW, computed_by="run_0")


@pytest.mark.parametrize("outcome", ["completed", "skipped", "error"])
def test_the_three_outcomes(outcome):
    assert JudgmentRow(**{**ROW, "outcome": outcome}).outcome == outcome


def test_another_outcome_is_an_error():
    with pytest.raises(ValidationError, match="outcome"):
        JudgmentRow(**{**ROW, "outcome": "missing"})
