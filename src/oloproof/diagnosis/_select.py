"""Selecting the failures of a recorded run to diagnose."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from oloproof._exceptions import UsageError
from oloproof.records import StoredCase, StoredJudgment

__all__ = ["Passes", "Selection", "case_passes", "passed_cases", "select_failures"]


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


@dataclass(frozen=True)
class Passes:
    """How many of a case's observed repeats passed."""

    passed: int
    """Repeats that passed."""
    repeats: int
    """Observed repeats."""

    @property
    def all(self) -> bool:
        """Whether every observed repeat passed (none observed: no)."""
        return 0 < self.repeats == self.passed

    @property
    def some(self) -> bool:
        """Whether some observed repeats passed and some failed."""
        return 0 < self.passed < self.repeats

    @property
    def failed(self) -> bool:
        """Whether the case failed: in more than half its repeats (its only one, without repeats)."""
        return 2 * self.passed < self.repeats


def case_passes(judgments: Sequence[StoredJudgment], criterion: str, threshold: float | None) -> dict[str, Passes]:
    """Each observed case's passes on ``criterion`` over its repeats.

    A repeat passes when more than half its observed judge repeats pass (its one
    verdict, without ``judge_repeats``): a judge's own samples of one output are not
    independent draws of the system, so they decide the repeat, not the count.
    Rows of runs made before repeats are each a case's one repeat.
    """
    # Votes of each (case, repeat): [passed, observed]. Flat, not nested by case: a run
    # of 100,000 cases reads 100,000 rows a criterion, and their tallies are most of it.
    votes: dict[tuple[str, int], list[int]] = {}
    for row in judgments:
        if row["criterion"] == criterion and row["status"] == "observed":
            key = (row["case_id"], row.get("repeat") or 0)
            tally = votes.get(key)
            if tally is None:
                votes[key] = tally = [0, 0]
            tally[0] += bool(_passes(row, threshold))
            tally[1] += 1
    repeats: dict[str, list[int]] = {}  # [repeats passed, repeats], cases in order of first row
    for (case_id, _), (passed, observed) in votes.items():
        count = repeats.get(case_id)
        if count is None:
            repeats[case_id] = count = [0, 0]
        count[0] += 2 * passed > observed
        count[1] += 1
    # Cases share their tally's one (frozen) instance: a run of 100,000 cases has a few.
    made: dict[tuple[int, int], Passes] = {}
    out: dict[str, Passes] = {}
    for case_id, (passed, n) in repeats.items():
        shared = made.get((passed, n))
        if shared is None:
            shared = made[passed, n] = Passes(passed=passed, repeats=n)
        out[case_id] = shared
    return out


def passed_cases(judgments: Sequence[StoredJudgment], criterion: str, threshold: float | None) -> dict[str, bool]:
    """Each observed case's pass/fail on ``criterion`` (a score passes at ``threshold``);
    with repeats, whether it passed in every repeat."""
    return {case_id: passes.all for case_id, passes in case_passes(judgments, criterion, threshold).items()}


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
    selected. Failed cases without ``expected.gold_context`` are listed apart. With
    repeats, a case failed when it failed in more than half its observed repeats.

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
    failed = sorted(case_id for case_id, passes in case_passes(observed, criterion, threshold).items()
                    if passes.failed)
    with_gold = tuple(c for c in failed if expected.get(c, {}).get("gold_context"))
    without = tuple(c for c in failed if not expected.get(c, {}).get("gold_context"))
    return Selection(criterion=criterion, with_gold=with_gold, without_gold=without)
