"""Decision rows: a rule's verdict, with or without an estimated difference."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from oloproof.records import DecisionRow

DECIDED = {
    "rule": "no_regression", "criterion": "answer_correct", "kind": "non-inferiority", "margin": 2.0,
    "difference": 1.5, "low": -0.5, "high": 3.5, "paired": 40, "verdict": "PASS",
    "reason": "interval_above_margin", "confidence": 0.95,
}  # fmt: skip


def test_a_decided_rule():
    row = DecisionRow.pick(DECIDED, comparison_id="sha256:c")
    assert (row.verdict, row.paired, row.difference) == ("PASS", 40, 1.5)


def test_a_rule_without_pairs_has_no_difference():
    undecided = {key: DECIDED[key] for key in ("rule", "criterion", "kind", "margin", "confidence")}
    row = DecisionRow.pick(
        {**undecided, "verdict": "INSUFFICIENT_EVIDENCE", "reason": "no_pairs"}, comparison_id="sha256:c"
    )
    assert (row.difference, row.low, row.high, row.paired) == (None, None, None, None)


def test_an_integer_margin_is_a_float():
    row = DecisionRow.pick({**DECIDED, "margin": 0}, comparison_id="sha256:c")
    assert row.margin == 0.0 and isinstance(row.margin, float)


def test_the_verdict_is_required():
    values = {key: value for key, value in DECIDED.items() if key != "verdict"}
    with pytest.raises(ValidationError, match="verdict"):
        DecisionRow.pick(values, comparison_id="sha256:c")
