"""Confidence interval for the mean paired difference of two bounded scores."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from oloproof._exceptions import StatsError
from oloproof.stats._betting import betting_mean_interval
from oloproof.stats._interval import Interval
from oloproof.stats._validation import check_unit_values

__all__ = ["PAIRED_METHOD", "paired_difference_interval", "paired_method_name"]

PAIRED_METHOD = (
    "paired betting (Waudby-Smith & Ramdas 2024, hedged capital) "
    "on differences mapped to [0, 1]"
)


def paired_method_name() -> str:
    """Name of the paired-difference method, for reports and ``--help`` text.

    Returns:
        The value of ``PAIRED_METHOD``.
    """
    return PAIRED_METHOD


def to_unit_differences(candidate: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Map paired differences ``d`` in [-1, 1] to ``(d + 1) / 2`` in [0, 1]."""
    return np.clip((candidate - baseline + 1.0) / 2.0, 0.0, 1.0)


def paired_difference_interval(
    candidate: Iterable[float],
    baseline: Iterable[float],
    confidence: float = 0.95,
    *,
    seed: int = 0,
    orderings: int = 8,
) -> Interval:
    """Confidence interval for ``mean(candidate - baseline)`` over paired cases.

    Each difference ``d`` lies in [-1, 1]; it is mapped to ``(d + 1) / 2`` in
    [0, 1], the betting interval of :func:`betting_mean_interval` is computed for
    that mean, and the bounds are mapped back. The guarantee carries over: the
    coverage is at least ``confidence`` for any joint distribution of the pairs.

    Pairs that all agree do not shrink the interval to a point: 13 identical
    pairs are weak evidence of "no change", and the interval says so.

    Args:
        candidate: Per-case scores of the candidate system, each in [0, 1].
        baseline: Per-case scores of the baseline system, same cases, same order.
        confidence: Nominal coverage in (0, 1).
        seed: Seed of the random orderings (see :func:`betting_mean_interval`).
        orderings: Number of random orderings whose wealth is averaged.

    Returns:
        The interval for the mean difference, within [-1, 1].

    Raises:
        StatsError: If the inputs are empty, differ in length, contain NaN or
            values outside [0, 1], or the other arguments are invalid.
    """
    cand = check_unit_values(candidate, "candidate")
    base = check_unit_values(baseline, "baseline")
    if cand.shape != base.shape:
        raise StatsError(
            f"candidate and baseline must have the same length, got {cand.size} and {base.size}"
        )
    unit = betting_mean_interval(
        to_unit_differences(cand, base), confidence, seed=seed, orderings=orderings
    )
    return Interval(
        low=max(-1.0, 2.0 * unit.low - 1.0),
        high=min(1.0, 2.0 * unit.high - 1.0),
        confidence=unit.confidence,
        method=PAIRED_METHOD,
    )
