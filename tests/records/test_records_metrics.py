"""Metric rows: overall and per-slice estimates."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from oloproof.records import MetricRow

OVERALL = {
    "run_id": "run_1", "criterion": "answer_correct", "kind": "proportion", "slice": None,
    "slice_value": None, "estimate": 0.75, "low": 0.2, "high": 0.99, "confidence": 0.95,
    "method": "clopper-pearson", "observed": 4, "successes": 3, "missing": 1, "excluded": 0,
    "scored": True,
}  # fmt: skip


def test_an_overall_row():
    row = MetricRow(**OVERALL)
    assert row.slice is None and row.successes == 3


def test_an_unscored_slice_row_carries_no_estimate():
    row = MetricRow(**{**OVERALL, "slice": "metadata.topic", "slice_value": "billing", "estimate": None,
                       "low": None, "high": None, "method": None, "successes": None, "scored": False})
    assert (row.estimate, row.low, row.high, row.method) == (None, None, None, None)


def test_counts_are_required():
    values = {key: value for key, value in OVERALL.items() if key != "missing"}
    with pytest.raises(ValidationError, match="missing"):
        MetricRow(**values)
