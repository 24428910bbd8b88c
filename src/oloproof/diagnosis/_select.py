"""Selecting the failures of a recorded run to diagnose."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from oloproof._exceptions import UsageError
from oloproof.records import StoredCase, StoredJudgment

__all__ = ["Selection", "passed_cases", "select_failures"]


@dataclass(frozen=True)
class Selection:
    """Failed cases of one criterion, split by whether they can be diagnosed."""

    criterion: str
    with_gold: tuple[str, ...]
    without_gold: tuple[str, ...]


def _passes(row: StoredJudgment, threshold: float | None) -> bool | None:
    """Whether an observed row passes; ``None`` when it cannot say (a score without threshold)."""
    if threshold is not None:
        return row["value"] is not None and float(row["value"]) >= threshold
    return row["passed"]


def passed_cases(judgments: Sequence[StoredJudgment], criterion: str, threshold: float | None) -> dict[str, bool]:
    """Each observed case's pass/fail on ``criterion`` (a score passes at ``threshold``)."""
    return {
        row["case_id"]: bool(_passes(row, threshold))
        for row in judgments
        if row["criterion"] == criterion and row["status"] == "observed"
    }


def select_failures(
    judgments: Sequence[StoredJudgment],
    cases: Sequence[StoredCase],
    *,
    criterion: str,
    threshold: float | None,
    run_id: str,
) -> Selection:
    """The observed failures of ``criterion`` in a run.

    A pass/fail criterion fails where ``passed`` is false; a score criterion needs
    ``threshold`` (a score below it fails). Missing and excluded cases are never
    selected. Failed cases without ``expected.gold_context`` are listed apart.

    Raises:
        UsageError: The run has no such criterion, or a score criterion lacks a threshold.
    """
    rows = [row for row in judgments if row["criterion"] == criterion]
    if not rows:
        known = sorted({row["criterion"] for row in judgments})
        raise UsageError(
            f"run {run_id} has no criterion {criterion!r} (it has: {', '.join(known)})",
            field="--criterion",
        )
    observed = [row for row in rows if row["status"] == "observed"]
    if threshold is None and any(row["passed"] is None for row in observed):
        raise UsageError(
            f"{criterion} is a score, not pass/fail: give --threshold to say what fails",
            field="--threshold",
        )
    expected = {row["case_id"]: row.get("expected") or {} for row in cases}
    failed = sorted(row["case_id"] for row in observed if _passes(row, threshold) is False)
    with_gold = tuple(c for c in failed if expected.get(c, {}).get("gold_context"))
    without = tuple(c for c in failed if not expected.get(c, {}).get("gold_context"))
    return Selection(criterion=criterion, with_gold=with_gold, without_gold=without)
