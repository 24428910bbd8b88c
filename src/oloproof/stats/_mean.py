"""Confidence interval for the mean of scores bounded in [0, 1]: Gaffke's bound.

Gaffke (2005), "Three test statistics for a nonparametric one-sided hypothesis on
the mean of a nonnegative variable"; Learned-Miller & Thomas (2019), "A new
confidence interval for the mean of a bounded random variable" (arXiv:1905.06208).

For values sorted as ``z_(1) <= ... <= z_(n)`` in [0, 1], put ``z_(n+1) = 1`` (the
bound) and let ``D`` be uniform on the simplex of ``n + 1`` weights (the spacings
of ``n`` sorted uniforms). The upper bound is the ``1 - alpha/2`` quantile of

    S = sum_i D_i z_(i).

Why it holds: a mean is ``integral_0^1 F^-1(p) dp``, and with the data written as
``F^-1(U_(i))`` for sorted uniforms ``U``, ``S`` is the upper Riemann sum of that
integral over the random spacings, the last cell priced at the bound 1. The lower
bound is the same construction applied to ``1 - z`` and reflected.

Guarantee: for scores that are all 0 or 1 the bounds are the binomial test
inverted, i.e. exactly Clopper-Pearson (so pass rates get the same interval either
way); for any distribution on two points coverage is at least the nominal level
at every ``n``, proven. For other distributions on [0, 1] coverage at every ``n``
is Gaffke's conjecture, open since 2005: no counterexample has been found, and
the simulations of ``benchmarks/interval_table.py`` (``docs/intervals.md``)
measure it.
The weight on the bound is what keeps the interval from collapsing when every
value agrees: 13 identical values ``v`` give ``[v q, v + (1 - v)(1 - q)]`` with
``q = 0.025 ** (1/13) = 0.753``, the Clopper-Pearson bounds for 13 out of 13. At
large ``n`` ``S`` is close to normal with the sample variance, so the interval
approaches the Student t interval's width (1.01-1.07 times it at n = 1,000 in
``docs/intervals.md``). The weight on the bound adds about ``(1 - mean)/n`` on
the upper side and ``mean/n`` on the lower one: negligible for scores, but not
for paired differences of small spread, which sit half a range from both ends
(1.27-1.61 times the t width at n = 1,000 there).

The quantiles are computed exactly where ``S`` has a beta law (values in
``{w, 1}`` for the upper bound, in ``{0, w}`` for the lower one), otherwise by
seeded Monte Carlo over ``D``. The data enter only through their sorted distinct
values and counts, so the interval is a function of the multiset of values: any
order, the same bits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import numpy as np
from scipy.special import betaincinv

from oloproof.stats._interval import Interval
from oloproof.stats._validation import check_confidence, check_int, check_unit_values

__all__ = ["MEAN_METHOD", "gaffke_bounds", "mean_interval"]

MEAN_METHOD = "Gaffke bound (Gaffke 2005; Learned-Miller & Thomas 2019)"

# Monte Carlo draws of D. With B + 1 = 4096 the 97.5% quantile is the 3994th of
# 4095 draws; its Monte Carlo standard error is about 4% of the statistic's
# standard deviation, i.e. about 2% of a 95% interval's half-width.
_DRAWS = 4095
# At least this many draws fall beyond each reported quantile, so that higher
# confidence levels get proportionally more draws.
_TAIL_DRAWS = 100
# Cap on the draws at extreme confidence levels (memory is bounded by blocks).
_MAX_DRAWS = (1 << 20) - 1
# Above this many distinct values, runs of consecutive values are merged into
# this many groups, each priced at its largest value for the upper bound and its
# smallest for the lower one: the bounds can only move outward, by at most the
# widest group's range.
_MAX_GROUPS = 2048
# Random numbers generated per block, which bounds memory.
_BLOCK_ELEMENTS = 1 << 22


def _draw_count(tail: float) -> int:
    """Monte Carlo draws for a one-sided tail probability ``tail``."""
    needed = math.ceil(_TAIL_DRAWS / tail) - 1
    return min(_MAX_DRAWS, max(_DRAWS, needed))


def _upper_rank(draws: int, tail: float) -> int:
    """1-based rank of the draw reported as the ``1 - tail`` quantile.

    ``ceil((B + 1)(1 - tail))``: if the p-value of the exact statistic is
    uniform, a bound at this rank among ``B`` draws misses with probability at
    most ``tail`` on average over the draws, so Monte Carlo error does not
    erode the level.
    """
    # The small slack keeps 4096 * 0.975 = 3993.6 from rounding either way.
    return min(draws, math.ceil((draws + 1) * (1.0 - tail) - 1e-9))


def weight_blocks(
    counts: np.ndarray, draws: int, rng: np.random.Generator
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Dirichlet weights of the groups and of the two bounds, block by block.

    A group of ``c`` tied values carries the sum of ``c`` uniform spacings, a
    ``Gamma(c)`` share of the total; the bound carries an exponential share.

    Args:
        counts: Number of values in each group, shape ``(k,)``.
        draws: Total number of weight vectors.
        rng: Source of randomness; consumed in a fixed order for given inputs.

    Yields:
        ``(groups, upper_atom, lower_atom)``: unnormalised weights of shapes
        ``(m, k)``, ``(m,)`` and ``(m,)``, the ``m`` summing to ``draws``.
    """
    shapes = counts.astype(float)
    block = max(1, _BLOCK_ELEMENTS // (shapes.size + 2))
    done = 0
    while done < draws:
        size = min(block, draws - done)
        groups = rng.standard_gamma(shapes, size=(size, shapes.size))
        atoms = rng.standard_exponential((2, size))
        yield groups, atoms[0], atoms[1]
        done += size


def _grouped(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct values merged into at most ``_MAX_GROUPS`` groups.

    Returns:
        ``(high, low, counts)``: each group's largest and smallest value and its
        number of observations.
    """
    values, counts = np.unique(data, return_counts=True)
    if values.size <= _MAX_GROUPS:
        return values, values, counts
    edges = np.linspace(0, values.size, _MAX_GROUPS + 1).round().astype(int)
    starts, ends = edges[:-1], edges[1:]
    totals = np.add.reduceat(counts, starts)
    return values[ends - 1], values[starts], totals


def _exact_upper(values: np.ndarray, counts: np.ndarray, tail: float) -> float | None:
    """The upper bound in closed form when ``S`` has a beta law, else ``None``.

    With values in ``{w, 1}`` only, ``S = w + (1 - w) B`` where ``B`` is
    ``Beta(ones + 1, others)``.
    """
    inside = values < 1.0
    if np.count_nonzero(inside) > 1:
        return None
    others = int(counts[inside].sum())
    if others == 0:
        return 1.0
    w = float(values[inside][0])
    ones = int(counts.sum()) - others
    return w + (1.0 - w) * float(betaincinv(ones + 1, others, 1.0 - tail))


def gaffke_bounds(
    data: np.ndarray, confidence: float, seed: int
) -> tuple[float, float]:
    """Two-sided Gaffke bounds for the mean of ``data`` in [0, 1].

    Args:
        data: Validated 1-D array of values in [0, 1].
        confidence: Two-sided nominal coverage; each side gets half the rest.
        seed: Seed of the Monte Carlo draws (unused where the law is exact).

    Returns:
        ``(low, high)`` with ``low <= high``.
    """
    tail = (1.0 - confidence) / 2.0
    high_values, low_values, counts = _grouped(data)
    high = _exact_upper(high_values, counts, tail)
    # The lower bound of the mean of z is 1 minus the upper bound for 1 - z.
    flipped = _exact_upper(1.0 - low_values[::-1], counts[::-1], tail)
    low = None if flipped is None else 1.0 - flipped
    if high is None or low is None:
        draws = _draw_count(tail)
        rank = _upper_rank(draws, tail)
        upper_draws: list[np.ndarray] = []
        lower_draws: list[np.ndarray] = []
        rng = np.random.default_rng(seed)
        for groups, upper_atom, lower_atom in weight_blocks(counts, draws, rng):
            # Row sums rather than a matrix product: numpy's pairwise summation
            # does not depend on memory alignment, so equal inputs give equal bits.
            total = groups.sum(axis=1)
            upper_draws.append(((groups * high_values).sum(axis=1) + upper_atom) / (total + upper_atom))
            lower_draws.append((groups * low_values).sum(axis=1) / (total + lower_atom))
        if high is None:
            high = float(np.partition(np.concatenate(upper_draws), rank - 1)[rank - 1])
        if low is None:
            # The lower statistic is 1 minus the upper one of the reflected data,
            # so its quantile sits at the mirrored rank.
            lower_rank = draws + 1 - rank
            low = float(np.partition(np.concatenate(lower_draws), lower_rank - 1)[lower_rank - 1])
    low, high = min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0)
    return min(low, high), max(low, high)


def mean_interval(
    values: Iterable[float],
    confidence: float = 0.95,
    *,
    seed: int = 0,
) -> Interval:
    """Confidence interval for the mean of values bounded in [0, 1] (Gaffke's bound).

    Each side is a one-sided Gaffke bound at level ``(1 - confidence) / 2``. For
    values that take at most two values in {0, 1} this is exactly the
    Clopper-Pearson interval; see the module docstring for the guarantee
    elsewhere. The result depends only on the multiset of values (and the seed):
    reordering the values never changes a bit of it.

    Args:
        values: Observations, each in [0, 1] (e.g. per-case nDCG).
        confidence: Nominal coverage in (0, 1).
        seed: Seed of the Monte Carlo draws; equal multisets and seed give an
            equal interval.

    Returns:
        The interval for the mean, within [0, 1].

    Raises:
        StatsError: If ``values`` is empty, contains NaN, or has values outside
            [0, 1]; or if ``confidence`` or ``seed`` is invalid.
    """
    data = check_unit_values(values)
    level = check_confidence(confidence)
    seed = check_int(seed, "seed", 0)
    low, high = gaffke_bounds(data, level, seed)
    return Interval(low=low, high=high, confidence=level, method=MEAN_METHOD)
