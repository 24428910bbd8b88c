"""Rows of the ``metrics`` table: one per criterion, and per slice value."""

from __future__ import annotations

from oloproof.records._base import Record

__all__ = ["MetricRow"]


class MetricRow(Record):
    """One criterion's estimate and interval, over the run or over one slice value."""

    run_id: str
    """The run the metric belongs to."""

    criterion: str
    """The criterion the metric estimates."""

    kind: str
    """``proportion``, ``mean`` or ``count``; the requested kind when nothing was observed."""

    slice: str | None = None
    """The slice's name; ``None`` for the overall metric."""

    slice_value: str | None = None
    """The slice value the row covers; ``None`` for the overall metric."""

    estimate: float | None = None
    """The observed proportion or mean; ``None`` when not scored."""

    low: float | None = None
    """The interval's lower bound."""

    high: float | None = None
    """The interval's upper bound."""

    confidence: float
    """The interval's confidence level."""

    method: str | None = None
    """How the interval was computed."""

    observed: int
    """How many cases were judged."""

    successes: int | None = None
    """How many of them passed, for proportions."""

    missing: int
    """How many cases have no judgment because a stage or the judge failed."""

    judge_errors: int = 0
    """How many of the missing cases are missing because the judge itself failed."""

    excluded: int
    """How many cases the criterion does not apply to."""

    scored: bool
    """Whether the row has enough support to carry an estimate."""

    samples: int | None = None
    """With repeats: the observed samples (cases × repeats) the per-case means rest on;
    ``observed`` then counts cases, the interval's unit."""

    repeats: int | None = None
    """With repeats: the most generation repeats of one case."""

    flaky: int | None = None
    """With repeats: how many observed cases have samples that disagree."""

    judge_disagreement: float | None = None
    """With judge repeats: the share of judged samples whose judge repeats disagree."""
