"""Case rows: scalar columns are validated, nested payloads pass through untouched."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from oloproof.records import CaseRow


def _row(**changes):
    values = {
        "run_id": "run_1", "case_id": "c1", "status": "ok", "execution_hit": False,
        "retrieve_hit": True, "generate_hit": False, "input": {"question": "Refunds?"},
        "expected": {"answer": "14 days"}, "metadata": {"topic": "billing"},
    }  # fmt: skip
    values.update(changes)
    return CaseRow(**values)


def test_optional_columns_default_to_none():
    row = _row()
    assert (row.error, row.output, row.context, row.dropped, row.retrieve_ms) == (None,) * 5


def test_status_is_ok_or_missing():
    assert _row(status="missing", error_stage="generate", error="boom").status == "missing"
    with pytest.raises(ValidationError, match="status"):
        _row(status="failed")


def test_cache_flags_are_required():
    values = _row().model_dump()
    del values["retrieve_hit"]
    with pytest.raises(ValidationError, match="retrieve_hit"):
        CaseRow(**values)


def test_nested_payloads_are_kept_as_given():
    output = {"answer": "14 days", "scores": np.array([0.5, 0.25])}  # the store encodes NumPy
    context = [{"doc_id": "kb-1", "chunk_id": None, "position": 1, "tokens": None}]
    row = _row(output=output, context=context, input="plain text")
    assert row.output is output
    assert row.context is context
    assert row.input == "plain text"


def test_timings_are_floats():
    row = _row(retrieve_ms=3, generate_ms=None)
    assert row.retrieve_ms == 3.0 and isinstance(row.retrieve_ms, float)
