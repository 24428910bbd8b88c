"""Metrics with intervals: one row per criterion, and per slice value.

Pass/fail criteria are proportions with the exact Clopper–Pearson interval. A
score criterion whose observed values are all 0 or 1 is a proportion too (the
interval is then exact); other scores in [0, 1] get Gaffke's interval for a
bounded mean (:func:`oloproof.stats.mean_interval`). A count criterion reports
its mean without an interval.

Every figure is a function of the multiset of observed values: the estimate is
an exactly rounded sum, so cases arriving in another order print the same bits.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from oloproof import stats
from oloproof.records import JudgmentBrief, JudgmentRow, MetricSummary
from oloproof.records._samples import CaseSamples, case_samples, judge_disagreement

__all__ = ["summarize_criterion", "summarize_metrics", "summarize_samples"]


def summarize_criterion(
    rows: Sequence[JudgmentRow | JudgmentBrief], *, kind: str, confidence: float, seed: int = 0
) -> MetricSummary:
    """Estimate, interval and counts of one criterion over judgment rows.

    Rows of repeated samples are summarized over cases (`summarize_samples`)."""
    # Only a run with repeats has a row past a case's first sample: others pay nothing here.
    if any(row.repeat or row.judge_repeat for row in rows):
        return summarize_samples(case_samples(rows), rows, kind=kind, confidence=confidence, seed=seed)
    observed = [row for row in rows if row.status == "observed"]
    values = [float(row.value) for row in observed if row.value is not None]
    summary: MetricSummary = {
        "observed": len(values),
        "missing": sum(1 for row in rows if row.status == "missing"),
        "judge_errors": sum(1 for row in rows if row.outcome == "error"),
        "excluded": sum(1 for row in rows if row.status == "excluded"),
        "successes": None,
        "estimate": None,
        "low": None,
        "high": None,
        "confidence": confidence,
        "method": None,
        "kind": kind,
        "samples": None,
        "repeats": None,
        "flaky": None,
        "judge_disagreement": None,
    }
    if not values:
        return summary
    # fsum is exactly rounded, so the mean does not depend on the cases' order.
    estimate = math.fsum(values) / len(values)
    if kind == "count":  # counts have no [0, 1] bound, so no interval is claimed
        summary.update({"estimate": estimate})
        return summary
    binary = kind == "proportion" or (kind == "auto" and all(v in (0.0, 1.0) for v in values))
    if binary:
        successes = sum(1 for value in values if value == 1.0)
        interval = stats.clopper_pearson(successes, len(values), confidence)
        summary.update({"kind": "proportion", "successes": successes})
    else:
        interval = stats.mean_interval(values, confidence, seed=seed)
        summary.update({"kind": "mean"})
    summary.update({"estimate": estimate, "low": interval.low, "high": interval.high, "method": interval.method})
    return summary


def summarize_samples(
    cases: dict[str, CaseSamples], rows: Sequence[JudgmentRow | JudgmentBrief], *, kind: str, confidence: float,
    seed: int = 0,
) -> MetricSummary:
    """Estimate, interval and counts over cases, each case the mean of its samples.

    The interval is over cases, by the method a case-level value takes: Clopper-Pearson
    when every case's samples agree on pass or fail, else Gaffke's interval for a
    bounded mean over the per-case means. Treating every sample as a case would make
    the interval as narrow as if the cases were repeats × as many, which they are not.
    """
    observed = [samples for samples in cases.values() if samples.values]
    unobserved = [samples for samples in cases.values() if not samples.values]
    means = [samples.mean for samples in observed]
    summary: MetricSummary = {
        "observed": len(observed),
        "missing": sum(1 for samples in unobserved if samples.missing),
        "judge_errors": sum(1 for samples in unobserved if samples.judge_errors),
        "excluded": sum(1 for samples in unobserved if not samples.missing),
        "successes": None, "estimate": None, "low": None, "high": None,
        "confidence": confidence, "method": None, "kind": kind,
        "samples": sum(len(samples.values) for samples in observed),
        "repeats": max(len(samples.repeats) for samples in cases.values()),
        "flaky": sum(1 for samples in observed if samples.flaky),
        "judge_disagreement": judge_disagreement(rows),
    }  # fmt: skip
    if not means:
        return summary
    estimate = math.fsum(means) / len(means)
    if kind == "count":
        summary.update({"estimate": estimate})
        return summary
    values = [value for samples in observed for value in samples.values]
    binary = kind == "proportion" or (kind == "auto" and all(v in (0.0, 1.0) for v in values))
    if all(mean in (0.0, 1.0) for mean in means):
        successes = sum(1 for mean in means if mean == 1.0)
        interval = stats.clopper_pearson(successes, len(means), confidence)
        summary.update({"successes": successes})
    else:
        interval = stats.mean_interval(means, confidence, seed=seed)
    summary.update({"kind": "proportion" if binary else "mean", "estimate": estimate, "low": interval.low,
                    "high": interval.high, "method": interval.method})  # fmt: skip
    return summary


def summarize_metrics(
    judgments: Sequence[JudgmentRow | JudgmentBrief],
    *,
    criteria: list[tuple[str, str]],
    slices: dict[str, dict[str, str | None]],
    min_slice_support: int,
    confidence: float,
) -> list[MetricSummary]:
    """Overall and per-slice metric rows.

    Args:
        judgments: The run's judgment rows.
        criteria: ``(criterion, kind)`` in report order.
        slices: For each slice name, each case's value (``None``: not in the slice).
        min_slice_support: Slice values observed on fewer cases are listed, not scored.
        confidence: The intervals' confidence level.
    """
    by_criterion: dict[str, list[JudgmentRow | JudgmentBrief]] = defaultdict(list)
    for row in judgments:
        by_criterion[row.criterion].append(row)
    metrics: list[MetricSummary] = []
    for criterion, kind in criteria:
        rows = by_criterion.get(criterion, [])
        overall = summarize_criterion(rows, kind="auto" if kind == "mean" else kind, confidence=confidence)
        # Slices report on the overall scale, so one metric never switches units.
        kind = overall["kind"]
        metrics.append({"criterion": criterion, "slice": None, "slice_value": None, "scored": True, **overall})
        for name, values in slices.items():
            groups: dict[str, list[JudgmentRow | JudgmentBrief]] = defaultdict(list)
            for row in rows:
                value = values.get(row.case_id)
                if value is not None:
                    groups[value].append(row)
            for value in sorted(groups):
                summary = summarize_criterion(groups[value], kind=kind, confidence=confidence)
                scored = summary["observed"] >= min_slice_support
                if not scored:
                    summary.update({"estimate": None, "low": None, "high": None, "method": None, "successes": None})
                metrics.append(
                    {"criterion": criterion, "slice": name, "slice_value": value, "scored": scored, **summary}
                )
    return metrics
