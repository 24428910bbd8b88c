"""Batches: how a run's cases are grouped into Prefect task runs.

One task run per case per stage costs milliseconds of engine time and far more
of API-server ingest at 10,000+ cases, so stages run over batches. Small runs
get one case per batch, so the Prefect UI shows ``generate refund_review``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["MAX_BATCH", "PER_CASE_LIMIT", "TARGET_BATCHES", "Batch", "group_batches", "plan_batches"]

PER_CASE_LIMIT = 32
"""Runs up to this many cases get one task run per case per stage."""

TARGET_BATCHES = 8
"""Larger runs are split into about this many batches per stage."""

MAX_BATCH = 1000
"""No batch holds more cases than this: a batch's result is encoded and decoded
whole, so unbounded batches grow a large run's peak memory."""


@dataclass(frozen=True)
class Batch:
    """An ordered group of case ids run by one task run per stage."""

    index: int
    case_ids: tuple[str, ...]
    repeat: int = 0
    """Which sample of its cases' generations (and what follows them) the batch runs;
    retrieval and assembly are never repeated."""

    @property
    def label(self) -> str:
        """A name a person can read in the Prefect UI."""
        cases = self.case_ids[0] if len(self.case_ids) == 1 else (
            f"{self.case_ids[0]} … {self.case_ids[-1]} ({len(self.case_ids)} cases)")  # fmt: skip
        return cases if self.repeat == 0 else f"{cases} · repeat {self.repeat + 1}"

    def at(self, repeat: int, case_ids: tuple[str, ...] | None = None) -> Batch:
        """This batch's ``repeat``-th sample, of ``case_ids`` (default: all its cases)."""
        return Batch(self.index, self.case_ids if case_ids is None else case_ids, repeat)


def plan_batches(case_ids: list[str], batch_size: int | None = None) -> list[Batch]:
    """Split case ids, in order, into batches.

    Args:
        case_ids: The run's case ids.
        batch_size: Cases per batch; chosen from the count when ``None``.

    Returns:
        The batches, covering every case once.
    """
    if not case_ids:
        return []
    if batch_size is None:
        batch_size = (
            1
            if len(case_ids) <= PER_CASE_LIMIT
            else min(MAX_BATCH, math.ceil(len(case_ids) / TARGET_BATCHES))
        )
    return [
        Batch(index=number, case_ids=tuple(case_ids[start : start + batch_size]))
        for number, start in enumerate(range(0, len(case_ids), batch_size))
    ]


def group_batches(batches: list[Batch], min_cases: int = PER_CASE_LIMIT) -> list[tuple[list[Batch], Batch]]:
    """Consecutive batches gathered until each group holds at least ``min_cases`` cases.

    A run's rows are encoded once a group is judged: one task run per group rather
    than per batch, so a small run of one-case batches does not pay a task run a
    case for it, while a large run's batches (hundreds of cases each) stay apart and
    are let go one by one.

    Returns:
        Per group, its batches and one batch spanning them (the first one's index,
        every case id in order), which names the group.
    """
    groups: list[tuple[list[Batch], Batch]] = []
    current: list[Batch] = []
    for batch in batches:
        current.append(batch)
        if sum(len(b.case_ids) for b in current) >= min_cases:
            groups.append((current, _spanning(current)))
            current = []
    if current:
        groups.append((current, _spanning(current)))
    return groups


def _spanning(batches: list[Batch]) -> Batch:
    return Batch(batches[0].index, tuple(case_id for b in batches for case_id in b.case_ids))
