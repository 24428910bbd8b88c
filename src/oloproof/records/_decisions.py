"""Rows of the ``decisions`` table: one per rule of a comparison's policy."""

from __future__ import annotations

from oloproof.records._base import Record

__all__ = ["DecisionRow"]


class DecisionRow(Record):
    """A policy rule's verdict on the difference between two runs."""

    comparison_id: str
    """The comparison, ``sha256:`` of its content."""

    rule: str
    """The rule's name in the policy."""

    criterion: str
    """The metric the rule is about."""

    kind: str
    """``non-inferiority``, ``superiority`` or ``equivalence``."""

    margin: float
    """The rule's margin, in percentage points."""

    confidence: float
    """The confidence level of the interval decided on."""

    verdict: str
    """``PASS``, ``FAIL`` or ``INSUFFICIENT_EVIDENCE``."""

    reason: str
    """The reason code behind the verdict."""

    difference: float | None = None
    """Candidate minus baseline, in percentage points; ``None`` without pairs."""

    low: float | None = None
    """The difference interval's lower bound."""

    high: float | None = None
    """The difference interval's upper bound."""

    paired: int | None = None
    """How many cases were paired."""
