"""Confidence interval for the mean paired difference of two bounded scores.

Each difference ``d = candidate - baseline`` lies in [-1, 1]; mapped to
``(d + 1) / 2`` it lies in [0, 1], where Gaffke's bound of
:func:`oloproof.stats.mean_interval` applies, and the bounds are mapped back.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from oloproof._exceptions import StatsError
from oloproof.stats._interval import Interval
from oloproof.stats._mean import mean_interval
from oloproof.stats._validation import check_unit_values

__all__ = ["PAIRED_METHOD", "paired_difference_interval", "paired_method_name"]

PAIRED_METHOD = (
    "paired Gaffke bound (Gaffke 2005; Learned-Miller & Thomas 2019) "
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
) -> Interval:
    """Confidence interval for ``mean(candidate - baseline)`` over paired cases.

    Each difference ``d`` lies in [-1, 1]; it is mapped to ``(d + 1) / 2`` in
    [0, 1], the interval of :func:`oloproof.stats.mean_interval` is computed for
    that mean, and the bounds are mapped back. Whatever guarantee that interval
    has for a distribution on [0, 1] carries over to the joint distribution of
    the pairs: proven coverage when the differences take two values, Gaffke's
    conjecture otherwise (measured in ``docs/intervals.md``).

    Pairs that all agree do not shrink the interval to a point: a real change
    that touches a fraction ``p`` of the cases goes unseen in ``n`` pairs with
    probability ``(1 - p) ** n``, so 13 agreeing pairs give
    ``[-24.7, +24.7]`` points (``1 - 0.025 ** (1/13)``), the least that an
    interval erring by at most 2.5% on each side can give if it must hold for
    every joint distribution. The price shrinks as ``1/n``: about 0.4 point at
    1,000 pairs.

    The result depends only on the multiset of pairs: any order of the cases,
    under any ids, gives the same bits.

    Args:
        candidate: Per-case scores of the candidate system, each in [0, 1].
        baseline: Per-case scores of the baseline system, same cases, same order.
        confidence: Nominal coverage in (0, 1).
        seed: Seed of the Monte Carlo draws (see :func:`oloproof.stats.mean_interval`).

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
    unit = mean_interval(to_unit_differences(cand, base), confidence, seed=seed)
    return Interval(
        low=max(-1.0, 2.0 * unit.low - 1.0),
        high=min(1.0, 2.0 * unit.high - 1.0),
        confidence=unit.confidence,
        method=PAIRED_METHOD,
    )
