"""A comparison's decision rows, built as typed records, and the table written from them."""

from __future__ import annotations

from oloproof.records import DecisionRow
from oloproof.store import ResultsStore, comparison_decisions
from oloproof.tasks._compare import decision_rows, write_comparison

DECIDED = {
    "rule": "no_regression", "criterion": "answer_correct", "kind": "non-inferiority", "margin": 2.0,
    "difference": 1.5, "low": -0.5, "high": 3.5, "paired": 40, "verdict": "PASS",
    "reason": "interval_above_margin", "confidence": 0.95,
}  # fmt: skip
NO_PAIRS = {
    "rule": "faithful", "criterion": "faithfulness", "kind": "superiority", "margin": 0.0,
    "verdict": "INSUFFICIENT_EVIDENCE", "reason": "no_pairs", "confidence": 0.95,
}  # fmt: skip
RECORD = {"comparison_id": "sha256:" + "c" * 64, "decisions": [DECIDED, NO_PAIRS], "gate": "BLOCK"}

EXPECTED = [
    {"comparison_id": RECORD["comparison_id"], **DECIDED},
    {"comparison_id": RECORD["comparison_id"], **NO_PAIRS, "difference": None, "low": None, "high": None,
     "paired": None},
]


def test_one_typed_row_per_rule():
    rows = decision_rows(RECORD)
    assert all(isinstance(row, DecisionRow) for row in rows)
    assert [dict(row.as_mapping()) for row in rows] == EXPECTED


def test_no_policy_gives_no_rows():
    assert decision_rows({**RECORD, "decisions": []}) == []


def test_the_decisions_table_holds_the_rows(tmp_path):
    store = ResultsStore(str(tmp_path / "results"))
    assert write_comparison.fn(store, RECORD) == RECORD["comparison_id"]
    assert store.read_table(comparison_decisions("c" * 64)) == EXPECTED
