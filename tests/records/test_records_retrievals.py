"""Retrieval rows: one per candidate, typed column by column."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from oloproof.records import RetrievalRow

ROW = {
    "run_id": "run_1", "case_id": "c1", "position": 1, "doc_id": "kb-1", "chunk_id": None,
    "score": 0.9, "text": "Refunds take 14 days.", "in_top_k": True, "in_context": True,
    "drop_reason": None, "relevant_grade": 1.0, "repeat": 0,
}  # fmt: skip


def test_a_full_row():
    assert dict(RetrievalRow(**ROW).as_mapping()) == ROW


def test_a_numpy_score_becomes_a_float():
    row = RetrievalRow(**{**ROW, "score": np.float32(0.5)})
    assert row.score == 0.5 and type(row.score) is float


def test_position_must_be_a_whole_number():
    with pytest.raises(ValidationError, match="position"):
        RetrievalRow(**{**ROW, "position": 1.5})


def test_the_document_is_required():
    with pytest.raises(ValidationError, match="doc_id"):
        RetrievalRow(**{key: value for key, value in ROW.items() if key != "doc_id"})
