"""Exact (Clopper–Pearson) confidence interval for a binomial proportion."""

from __future__ import annotations

import operator

# The beta quantile straight from scipy.special: importing scipy.stats would add
# most of a second to every command's start.
from scipy.special import betaincinv

from oloproof._exceptions import StatsError
from oloproof.stats._interval import Interval
from oloproof.stats._validation import check_confidence

__all__ = ["CLOPPER_PEARSON_METHOD", "clopper_pearson"]

CLOPPER_PEARSON_METHOD = "clopper-pearson"


def clopper_pearson(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Exact two-sided confidence interval for a binomial proportion.

    Inverts two one-sided binomial tests, each at level ``(1 - confidence) / 2``,
    through the beta quantiles. Coverage is at least ``confidence`` for every true
    proportion and every ``n``; it is conservative, which is the price of
    exactness at the small ``n`` of real evaluation sets.

    Args:
        successes: Number of successes, ``0 <= successes <= n``.
        n: Number of trials, at least 1.
        confidence: Nominal coverage in (0, 1).

    Returns:
        The interval for the proportion, as fractions in [0, 1]. With 0 successes
        the lower bound is exactly 0; with ``n`` successes the upper bound is
        exactly 1.

    Raises:
        StatsError: If the counts are not integers, ``n < 1``, ``successes`` is out
            of range, or ``confidence`` is not in (0, 1).
    """
    try:
        k = operator.index(successes)
        trials = operator.index(n)
    except TypeError:
        raise StatsError(
            f"successes and n must be integers, got {successes!r} and {n!r}"
        ) from None
    if trials < 1:
        raise StatsError(f"n must be at least 1, got {trials}")
    if not 0 <= k <= trials:
        raise StatsError(f"successes must be between 0 and n={trials}, got {k}")
    level = check_confidence(confidence)
    tail = (1.0 - level) / 2.0
    low = 0.0 if k == 0 else float(betaincinv(k, trials - k + 1, tail))
    high = 1.0 if k == trials else float(betaincinv(k + 1, trials - k, 1.0 - tail))
    return Interval(low=low, high=high, confidence=level, method=CLOPPER_PEARSON_METHOD)
