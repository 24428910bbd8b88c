"""Rows of the ``diagnosis_labels`` table: one per diagnosed case."""

from __future__ import annotations

from oloproof.records._base import Record

__all__ = ["DiagnosisLabelRow"]


class DiagnosisLabelRow(Record):
    """The label a diagnosis gave one failed case."""

    diagnosis_id: str
    """The diagnosis, ``sha256:`` of its content."""

    case_id: str
    """The diagnosed case."""

    label: str
    """The failure label, e.g. ``RANKED_OUT`` or ``GENERATION_FAILURE``."""

    reason: str
    """The label's reason code."""

    strength: str
    """What the label rests on, e.g. ``intervention_recovery``."""

    best_relevant_position: int | None = None
    """1-based position of the first relevant candidate in the parent run."""

    control_passed: bool
    """Whether the plain re-execution passed."""

    intervention_passed: bool
    """Whether the re-execution with the intervention passed (with repeats: in every repeat)."""

    repeats: int | None = None
    """With repeats: the repeats the gold-context re-execution observed."""

    original_passes: int | None = None
    """With repeats: the repeats that passed in the diagnosed run."""

    control_passes: int | None = None
    """With repeats: the repeats that passed in the control."""

    intervention_passes: int | None = None
    """With repeats: the repeats that passed with the gold context."""
