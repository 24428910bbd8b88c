"""Rows of the ``judgments`` table: one per case and criterion."""

from __future__ import annotations

from typing import Literal

from oloproof.records._base import JsonObject, Record

__all__ = ["JudgmentRow"]


class JudgmentRow(Record):
    """One evaluator's judgment of one case."""

    run_id: str
    """The run the judgment belongs to."""

    case_id: str
    """The judged case."""

    criterion: str
    """The criterion (metric name) the evaluator reports."""

    evaluator: str
    """The evaluator's registered type name."""

    spec_hash: str
    """Hash of the evaluator's spec: its type, version and options."""

    status: Literal["observed", "missing", "excluded"]
    """``observed`` when judged, ``missing`` when the case or the judge failed,
    ``excluded`` when the criterion does not apply to the case."""

    reason: str | None = None
    """Why the case was missing or excluded, or the evaluator's own reason."""

    value: float | None = None
    """The score in [0, 1] (1.0 or 0.0 for pass/fail criteria)."""

    passed: bool | None = None
    """Whether the case passed, for pass/fail criteria."""

    detail: JsonObject
    """What the evaluator reported besides the score."""

    judgment_key: str | None = None
    """Identity of the judgment; ``None`` when nothing was judged."""

    hit: bool
    """Whether the judgment was computed by an earlier run."""
