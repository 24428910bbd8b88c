"""Confidence intervals for the difference of two pass rates measured on the same cases.

A paired pass/fail comparison is a 2x2 table of counts: cases both systems pass
(``both``), cases only the candidate passes (``candidate_only``), cases only the
baseline passes (``baseline_only``) and cases both fail (``neither``). The
difference of pass rates is ``(candidate_only - baseline_only) / n``. Every
function here is a function of those four counts, so the order of the cases
can never change an interval.

Two score-based methods are implemented:

* :func:`tango_interval` - Tango, "Equivalence test and confidence interval for
  the difference in proportions for the paired-sample design", Statistics in
  Medicine 17 (1998) 891-908: the set of differences that a score test, with the
  nuisance parameter at its constrained maximum-likelihood value, does not
  reject. It depends on the discordant counts and ``n`` only.
* :func:`newcombe_interval` - Newcombe, "Improved confidence intervals for the
  difference between binomial proportions based on paired data", Statistics in
  Medicine 17 (1998) 2635-2650, method 10: the hybrid of the two Wilson score
  intervals with his corrected phi coefficient weighting their cross term.

The gate uses :func:`paired_binary_interval`, which is Tango's. The choice was
measured (``benchmarks/paired_binary_coverage.py``), not taken from a name. On
the grid n = 13, 30, 100, 1000, baseline rate 0.7, discordance 0-30% and
differences 0 and +10 points both cover at least 94.3% of 2,000 replications
in every cell, and at n = 1000 their widths agree within 2% wherever a pair
disagrees. They part where a gate is exposed: when the candidate is worse by
exactly a non-inferiority margin and the loss is one-way (it breaks cases and
fixes none), Newcombe's interval passes the rule up to 5.8% of the time at
n <= 100, against a nominal 2.5%; Tango's never exceeds 2.5% in that table.
The cause is agreement: Newcombe's phi correction narrows the interval when the
pairs agree, by an amount that depends on the pass rate, while Tango's interval
at 0 discordant pairs of ``n`` is ``+-z^2 / (n + z^2)`` whatever the pass rate
(+-22.8 points at 13 pairs and 95%; it is the one cell where it is wider than
Newcombe's at n = 1000, +-0.38 against +-0.25 points).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

# The normal quantile straight from scipy.special (importing scipy.stats would add
# most of a second to every command's start).
from scipy.special import ndtri

from oloproof._exceptions import StatsError
from oloproof.stats._interval import Interval
from oloproof.stats._paired import paired_difference_interval
from oloproof.stats._validation import check_confidence, check_int, check_unit_values

__all__ = [
    "NEWCOMBE_METHOD",
    "PAIRED_BINARY_METHOD",
    "TANGO_METHOD",
    "is_pass_fail",
    "newcombe_bounds",
    "newcombe_interval",
    "paired_binary_interval",
    "paired_counts",
    "paired_interval",
    "tango_bounds",
    "tango_interval",
    "tango_statistic",
]

TANGO_METHOD = "Tango score interval (1998) for paired pass/fail"
NEWCOMBE_METHOD = "Newcombe hybrid score interval, method 10 (1998), for paired pass/fail"
PAIRED_BINARY_METHOD = TANGO_METHOD

# Bisection on [-1, 1] halves the bracket each step; 64 steps reach the spacing of
# doubles near 1, so the bounds are exact to floating-point resolution.
_BISECTION_STEPS = 64


def _z(confidence: float) -> float:
    level = check_confidence(confidence)
    return float(ndtri(0.5 + level / 2.0))


def _check_counts(
    both: int, candidate_only: int, baseline_only: int, neither: int
) -> tuple[int, int, int, int]:
    counts = []
    for name, value in (
        ("both", both),
        ("candidate_only", candidate_only),
        ("baseline_only", baseline_only),
        ("neither", neither),
    ):
        counts.append(check_int(value, name, 0))
    if sum(counts) == 0:
        raise StatsError("a paired interval needs at least one pair; all four counts are 0")
    return counts[0], counts[1], counts[2], counts[3]


def is_pass_fail(values: Iterable[float]) -> bool:
    """Whether every value is exactly 0 or 1 (a pass/fail metric).

    Args:
        values: Per-case values.

    Returns:
        ``True`` when the sequence is non-empty and each value is 0 or 1.
    """
    array = np.asarray(list(values), dtype=float)
    return bool(array.size > 0 and np.all((array == 0.0) | (array == 1.0)))


def paired_counts(
    candidate: Iterable[float], baseline: Iterable[float]
) -> tuple[int, int, int, int]:
    """The 2x2 table of paired pass/fail values.

    Args:
        candidate: Per-case values of the candidate, each 0 or 1.
        baseline: The baseline's values on the same cases, in the same order.

    Returns:
        ``(both, candidate_only, baseline_only, neither)``: cases both pass, only
        the candidate passes, only the baseline passes, and both fail.

    Raises:
        StatsError: If the inputs are empty, differ in length, or hold a value
            other than 0 or 1.
    """
    cand = check_unit_values(candidate, "candidate")
    base = check_unit_values(baseline, "baseline")
    if cand.shape != base.shape:
        raise StatsError(
            f"candidate and baseline must have the same length, got {cand.size} and {base.size}"
        )
    if not (is_pass_fail(cand) and is_pass_fail(base)):
        raise StatsError("paired pass/fail counts need values that are each 0 or 1")
    passed, held = cand == 1.0, base == 1.0
    return (
        int(np.sum(passed & held)),
        int(np.sum(passed & ~held)),
        int(np.sum(~passed & held)),
        int(np.sum(~passed & ~held)),
    )


def tango_statistic(
    delta: np.ndarray | float,
    candidate_only: np.ndarray | int,
    baseline_only: np.ndarray | int,
    n: np.ndarray | int,
) -> np.ndarray:
    """Tango's score statistic for the hypothesis that the difference is ``delta``.

    ``Z = (b - c - n delta) / sqrt(n (2 q + delta (1 - delta)))`` with ``b`` the
    candidate-only and ``c`` the baseline-only count, and ``q`` the maximum
    likelihood estimate of P(baseline only) under the constraint
    P(candidate only) - P(baseline only) = delta (the root of a quadratic).
    ``Z`` decreases in ``delta``; the interval is where ``|Z| <= z``.

    Args:
        delta: Hypothesised difference(s), each in [-1, 1].
        candidate_only: Count(s) of pairs only the candidate passes.
        baseline_only: Count(s) of pairs only the baseline passes.
        n: Number(s) of pairs. All arguments broadcast together.

    Returns:
        ``Z`` as an array; ``+-inf`` where the variance is 0 and the numerator is
        not, 0 where both are 0 (no pair disagrees and ``delta`` is 0).
    """
    d = np.asarray(delta, dtype=float)
    b = np.asarray(candidate_only, dtype=float)
    c = np.asarray(baseline_only, dtype=float)
    total = np.asarray(n, dtype=float)
    a = 2.0 * total
    slope = -b - c + (2.0 * total - b + c) * d
    constant = -c * d * (1.0 - d)
    root = np.sqrt(np.maximum(slope * slope - 4.0 * a * constant, 0.0))
    q = np.maximum((root - slope) / (2.0 * a), 0.0)
    variance = total * (2.0 * q + d * (1.0 - d))
    numerator = b - c - total * d
    with np.errstate(divide="ignore", invalid="ignore"):
        z = numerator / np.sqrt(np.maximum(variance, 0.0))
    # The quadratic's root carries rounding of order 1e-16 relative, so a variance
    # that is zero in exact arithmetic can come out as a tiny positive number or 0;
    # either way only the numerator's sign matters there.
    degenerate = ~(variance > 0.0)
    if not degenerate.any():
        return z
    infinite = np.where(numerator > 0.0, np.inf, -np.inf)
    return np.where(degenerate, np.where(numerator == 0.0, 0.0, infinite), z)


def _decreasing_root(
    function, target: float, below: np.ndarray, above: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bisect ``function(x) = target`` for a function decreasing in ``x``.

    ``function(below) > target >= function(above)`` elementwise on entry; returns
    the final bracket, whose ``below`` side is still above the target.
    """
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (below + above)
        high = function(middle) > target
        below = np.where(high, middle, below)
        above = np.where(high, above, middle)
    return below, above


def tango_bounds(
    candidate_only: np.ndarray | int,
    baseline_only: np.ndarray | int,
    n: np.ndarray | int,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Tango's interval for many tables at once (the vectorised core).

    Args:
        candidate_only: Count(s) of pairs only the candidate passes.
        baseline_only: Count(s) of pairs only the baseline passes.
        n: Number(s) of pairs, at least the sum of the two counts.
        confidence: Nominal coverage in (0, 1).

    Returns:
        ``(low, high)`` arrays of the same broadcast shape, within [-1, 1].
    """
    z = _z(confidence)
    b, c, total = np.broadcast_arrays(
        np.asarray(candidate_only, dtype=float),
        np.asarray(baseline_only, dtype=float),
        np.asarray(n, dtype=float),
    )
    estimate = (b - c) / total

    def statistic(delta: np.ndarray) -> np.ndarray:
        return tango_statistic(delta, b, c, total)

    # Z(estimate) = 0 and Z decreases, so the lower bound is the crossing of +z
    # in [-1, estimate] and the upper bound the crossing of -z in [estimate, 1].
    # Each is returned from the side of the bracket the test rejects, so rounding
    # can only widen the interval. A bound whose whole half-range is accepted
    # (e.g. the estimate is -1) stays at the end of the range.
    minus_one = np.full_like(estimate, -1.0)
    plus_one = np.full_like(estimate, 1.0)
    low_open = statistic(minus_one) > z
    high_open = statistic(plus_one) < -z
    low, _ = _decreasing_root(statistic, z, minus_one, estimate)
    _, high = _decreasing_root(statistic, -z, estimate, plus_one)
    low = np.where(low_open, low, -1.0)
    high = np.where(high_open, high, 1.0)
    return np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0)


def tango_interval(
    both: int, candidate_only: int, baseline_only: int, neither: int, confidence: float = 0.95
) -> Interval:
    """Tango's score interval for the paired difference of pass rates.

    The interval is ``{delta : |Z(delta)| <= z}`` for Tango's score statistic
    (:func:`tango_statistic`), each end found by bisection. It depends only on
    the discordant counts and ``n``; the concordant cases count through ``n``.

    Agreement alone never gives a zero width: with 0 discordant pairs out of
    ``n`` the interval is ``[-z^2 / (n + z^2), z^2 / (n + z^2)]``, which is
    +-0.228 (+-22.8 points) for 13 identical pairs at 95% and +-0.793 for one.

    Args:
        both: Pairs both systems pass.
        candidate_only: Pairs only the candidate passes.
        baseline_only: Pairs only the baseline passes.
        neither: Pairs both systems fail.
        confidence: Nominal coverage in (0, 1).

    Returns:
        The interval for ``P(candidate passes) - P(baseline passes)``, within
        [-1, 1], containing the observed difference.

    Raises:
        StatsError: If a count is negative or not an integer, all are 0, or
            ``confidence`` is not in (0, 1).
    """
    counts = _check_counts(both, candidate_only, baseline_only, neither)
    level = check_confidence(confidence)
    low, high = tango_bounds(counts[1], counts[2], sum(counts), level)
    return Interval(low=float(low), high=float(high), confidence=level, method=TANGO_METHOD)


def _wilson(successes: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denominator
    half = z * np.sqrt(np.maximum(p * (1.0 - p) / n + z * z / (4.0 * n * n), 0.0)) / denominator
    # 0 and n successes have their exact ends at 0 and 1 (round-off aside).
    low = np.where(successes == 0, 0.0, centre - half)
    high = np.where(successes == n, 1.0, centre + half)
    return low, high


def newcombe_bounds(
    both: np.ndarray | int,
    candidate_only: np.ndarray | int,
    baseline_only: np.ndarray | int,
    neither: np.ndarray | int,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's method 10 for many tables at once (the vectorised core).

    Args:
        both: Count(s) of pairs both pass.
        candidate_only: Count(s) of pairs only the candidate passes.
        baseline_only: Count(s) of pairs only the baseline passes.
        neither: Count(s) of pairs both fail.
        confidence: Nominal coverage in (0, 1).

    Returns:
        ``(low, high)`` arrays of the same broadcast shape, within [-1, 1].
    """
    z = _z(confidence)
    a, b, c, d = np.broadcast_arrays(
        *(np.asarray(x, dtype=float) for x in (both, candidate_only, baseline_only, neither))
    )
    n = a + b + c + d
    rate_candidate, rate_baseline = (a + b) / n, (a + c) / n
    low_candidate, high_candidate = _wilson(a + b, n, z)
    low_baseline, high_baseline = _wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    # Newcombe's corrected phi: a positive ad - bc is reduced by n/2 (not below
    # 0), which keeps agreeing pairs from shrinking the interval to a point.
    cross = a * d - b * c
    cross = np.where(cross > 0.0, np.maximum(cross - n / 2.0, 0.0), cross)
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(margins > 0.0, cross / np.sqrt(margins), 0.0)
    down_candidate = rate_candidate - low_candidate
    up_candidate = high_candidate - rate_candidate
    down_baseline = rate_baseline - low_baseline
    up_baseline = high_baseline - rate_baseline
    below = np.sqrt(np.maximum(
        down_candidate**2 - 2.0 * phi * down_candidate * up_baseline + up_baseline**2, 0.0))
    above = np.sqrt(np.maximum(
        up_candidate**2 - 2.0 * phi * up_candidate * down_baseline + down_baseline**2, 0.0))
    estimate = rate_candidate - rate_baseline
    return np.clip(estimate - below, -1.0, 1.0), np.clip(estimate + above, -1.0, 1.0)


def newcombe_interval(
    both: int, candidate_only: int, baseline_only: int, neither: int, confidence: float = 0.95
) -> Interval:
    """Newcombe's hybrid score interval (method 10) for the paired difference.

    The two pass rates' Wilson intervals are combined as the square-and-add
    method does, with the cross term weighted by Newcombe's corrected phi
    coefficient of the 2x2 table: ``(ad - bc - n/2) / sqrt(efgh)`` when
    ``ad > bc`` (not below 0), ``(ad - bc) / sqrt(efgh)`` otherwise, and 0 when
    a margin is empty. It is here as the reference the chosen method is
    measured against; the gate does not use it, because agreement alone narrows
    it by an amount that depends on the pass rate: 54 identical pairs give
    +-6.6 points when all pass but +-3.5 points when half pass (Tango's
    interval gives +-6.6 for both).

    Args:
        both: Pairs both systems pass.
        candidate_only: Pairs only the candidate passes.
        baseline_only: Pairs only the baseline passes.
        neither: Pairs both systems fail.
        confidence: Nominal coverage in (0, 1).

    Returns:
        The interval for ``P(candidate passes) - P(baseline passes)``.

    Raises:
        StatsError: If a count is negative or not an integer, all are 0, or
            ``confidence`` is not in (0, 1).
    """
    counts = _check_counts(both, candidate_only, baseline_only, neither)
    level = check_confidence(confidence)
    low, high = newcombe_bounds(*counts, confidence=level)
    return Interval(low=float(low), high=float(high), confidence=level, method=NEWCOMBE_METHOD)


def paired_binary_interval(
    both: int, candidate_only: int, baseline_only: int, neither: int, confidence: float = 0.95
) -> Interval:
    """The interval the comparison and the gate use for paired pass/fail metrics.

    It is :func:`tango_interval` (see the module's docstring for why). With 0
    discordant pairs of 13 it is +-22.8 points at 95%: agreement alone is weak
    evidence of no change, and the interval says so.

    Args:
        both: Pairs both systems pass.
        candidate_only: Pairs only the candidate passes.
        baseline_only: Pairs only the baseline passes.
        neither: Pairs both systems fail.
        confidence: Nominal coverage in (0, 1).

    Returns:
        The interval, named by ``PAIRED_BINARY_METHOD``.

    Raises:
        StatsError: As :func:`tango_interval`.
    """
    return tango_interval(both, candidate_only, baseline_only, neither, confidence)


def paired_interval(
    candidate: Iterable[float],
    baseline: Iterable[float],
    confidence: float = 0.95,
    *,
    seed: int = 0,
) -> Interval:
    """The paired interval a comparison reports and decides on, for any metric.

    Pass/fail values (every value of both runs 0 or 1) get
    :func:`paired_binary_interval` on their 2x2 counts; anything else gets
    :func:`paired_difference_interval` with ``seed``.

    Args:
        candidate: Per-case values of the candidate, each in [0, 1].
        baseline: The baseline's values on the same cases, in the same order.
        confidence: Nominal coverage in (0, 1).
        seed: Seed of the score interval's draws where it is not in closed form
            (unused for pass/fail values).

    Returns:
        The interval for ``mean(candidate - baseline)``.

    Raises:
        StatsError: If the inputs are invalid (see the two intervals).
    """
    cand = check_unit_values(candidate, "candidate")
    base = check_unit_values(baseline, "baseline")
    seed = check_int(seed, "seed", 0)
    if cand.shape == base.shape and is_pass_fail(cand) and is_pass_fail(base):
        return paired_binary_interval(*paired_counts(cand, base), confidence)
    return paired_difference_interval(cand, base, confidence, seed=seed)
