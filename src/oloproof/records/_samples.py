"""A case's samples: its judgment rows over repeats, as the case-level metrics read them.

With ``repeats`` (or ``judge_repeats``) a case has several judgment rows per criterion,
one per sample. The case is the unit of every interval: each case contributes the mean
of its observed samples, so a run's samples are never counted as independent cases.
A case is observed when at least one of its samples is; missing when none is and one
failed; excluded when the criterion applies to none of them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from oloproof.records._judgments import JudgmentBrief, JudgmentRow
from oloproof.records._stored import StoredJudgment

__all__ = ["FLAKY_SLICE", "CaseSamples", "case_samples", "flaky_cases", "judge_disagreement", "stored_samples"]

FLAKY_SLICE = "flaky"
"""The slice of a run with repeats: ``flaky`` (some criterion's samples disagree) or ``stable``."""


@dataclass
class CaseSamples:
    """One case's samples of one criterion."""

    values: list[float] = field(default_factory=list)
    """The observed samples' values."""
    missing: int = 0
    """Samples missing (a stage or the judge failed)."""
    judge_errors: int = 0
    """Of those, the ones the judge failed on."""
    excluded: int = 0
    """Samples the criterion does not apply to."""
    repeats: set[int] = field(default_factory=set)
    """The generation repeats its samples come from."""

    @property
    def mean(self) -> float:
        """The case's value: the mean of its observed samples (exactly rounded)."""
        return math.fsum(self.values) / len(self.values)

    @property
    def flaky(self) -> bool:
        """Whether its observed samples disagree."""
        return len(set(self.values)) > 1

    def add(self, status: str, value: float | None, outcome: str | None, repeat: int) -> None:
        """Count one judgment row of the case: a value when observed, else missing or excluded."""
        self.repeats.add(repeat)
        if status == "observed" and value is not None:
            self.values.append(float(value))
        elif status == "missing":
            self.missing += 1
            self.judge_errors += outcome == "error"
        elif status == "excluded":
            self.excluded += 1

    @property
    def count(self) -> int:
        """Every sample, observed or not."""
        return len(self.values) + self.missing + self.excluded


def case_samples(rows: Sequence[JudgmentRow | JudgmentBrief]) -> dict[str, CaseSamples]:
    """Each case's samples, by case id, in the order the cases first appear."""
    cases: dict[str, CaseSamples] = {}
    for row in rows:
        cases.setdefault(row.case_id, CaseSamples()).add(row.status, row.value, row.outcome, row.repeat)
    return cases


def stored_samples(rows: Sequence[StoredJudgment], criterion: str) -> dict[str, CaseSamples]:
    """Each case's samples of ``criterion``, from rows of the judgments table as read
    (rows of runs made before repeats, without ``repeat``, are each a case's one sample)."""
    cases: dict[str, CaseSamples] = {}
    for row in rows:
        if row["criterion"] == criterion:
            samples = cases.setdefault(row["case_id"], CaseSamples())
            samples.add(row["status"], row.get("value"), row.get("outcome"), row.get("repeat") or 0)
    return cases


def flaky_cases(rows: Sequence[JudgmentRow | JudgmentBrief]) -> dict[str, str | None]:
    """Each case's `FLAKY_SLICE` value: ``flaky`` when its samples disagree on any criterion."""
    by_criterion: dict[str, list[JudgmentRow | JudgmentBrief]] = defaultdict(list)
    for row in rows:
        by_criterion[row.criterion].append(row)
    flaky: dict[str, str | None] = {row.case_id: "stable" for row in rows}
    for criterion_rows in by_criterion.values():
        for case_id, samples in case_samples(criterion_rows).items():
            if samples.flaky:
                flaky[case_id] = "flaky"
    return flaky


def judge_disagreement(rows: Sequence[JudgmentRow | JudgmentBrief]) -> float | None:
    """The share of judged samples on which the judge's own repeats disagree; ``None``
    when no sample was judged more than once."""
    verdicts: dict[tuple[str, int], set[float]] = defaultdict(set)
    calls: dict[tuple[str, int], int] = defaultdict(int)
    for row in rows:
        if row.status == "observed" and row.value is not None:
            sample = (row.case_id, row.repeat)
            verdicts[sample].add(float(row.value))
            calls[sample] += 1
    judged = [sample for sample, count in calls.items() if count > 1]
    if not judged:
        return None
    return sum(1 for sample in judged if len(verdicts[sample]) > 1) / len(judged)
