"""Paired pass/fail intervals: published values, edge cases, monotonicity, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof._exceptions import StatsError
from oloproof.stats import (
    NEWCOMBE_METHOD,
    PAIRED_BINARY_METHOD,
    PAIRED_METHOD,
    TANGO_METHOD,
    is_pass_fail,
    newcombe_interval,
    paired_binary_interval,
    paired_counts,
    paired_difference_interval,
    paired_interval,
    tango_interval,
)
from oloproof.stats._paired_binary import newcombe_bounds, tango_bounds, tango_statistic

Z95 = 1.959963984540054

# Published 2x2 examples as (both, candidate_only, baseline_only, neither), i.e.
# (a, b, c, d) with the difference (b - c) / n, and the published bounds. The
# sources are the papers named; the values are those the R package ratesci
# (P. Laud) checks itself against in tests/testthat/test3.R.
TANGO_EXAMPLES = [
    # Fagerland, Lydersen & Laake (2014), Bentur et al. airway data.
    ((1, 1, 7, 12), 0.95, (-0.517, -0.026), 3),
    # Tango's examples (ratesci's "Tango RD" checks): 44 pairs with one
    # discordant, at 90%; and 32 pairs, 9 against 3.
    ((43, 0, 1, 0), 0.90, (-0.096, 0.037), 3),
    ((4, 9, 3, 16), 0.95, (-0.027, 0.390), 3),
    # Agresti & Min (2005).
    ((53, 16, 8, 9), 0.95, (-0.020, 0.207), 3),
    # Tang, Ling & Tian (2010).
    ((8, 3, 1, 2), 0.95, (-0.1670, 0.4327), 4),
]
NEWCOMBE_EXAMPLES = [
    # Newcombe (1998), Table III, method 10 rows (also checked by ratesci for the
    # first): 50 pairs, 12 against 2; one-way and all-agreeing tables.
    ((20, 12, 2, 16), 0.95, (0.0562, 0.3292), 4),
    ((36, 12, 2, 0), 0.95, (0.0569, 0.3404), 4),
    ((0, 30, 0, 0), 0.95, (0.8395, 1.0), 4),
    ((0, 29, 1, 0), 0.95, (0.6666, 0.9882), 4),
    ((54, 0, 0, 0), 0.95, (-0.0664, 0.0664), 4),
    ((27, 0, 0, 27), 0.95, (-0.0351, 0.0351), 4),
    # Fagerland, Lydersen & Laake (2014), Bentur et al. data, "MOVER Wilson" (method 10).
    ((1, 1, 7, 12), 0.95, (-0.507, -0.026), 3),
    # Tang, Ling & Tian (2010).
    ((8, 3, 1, 2), 0.95, (-0.1574, 0.4136), 4),
]


@pytest.mark.parametrize(("counts", "confidence", "expected", "places"), TANGO_EXAMPLES)
def test_tango_matches_published_values(counts, confidence, expected, places):
    interval = tango_interval(*counts, confidence)
    tolerance = 0.5 * 10.0**-places + 1e-9
    assert interval.low == pytest.approx(expected[0], abs=tolerance)
    assert interval.high == pytest.approx(expected[1], abs=tolerance)
    assert interval.method == TANGO_METHOD


@pytest.mark.parametrize(("counts", "confidence", "expected", "places"), NEWCOMBE_EXAMPLES)
def test_newcombe_matches_published_values(counts, confidence, expected, places):
    interval = newcombe_interval(*counts, confidence)
    tolerance = 0.5 * 10.0**-places + 1e-9
    assert interval.low == pytest.approx(expected[0], abs=tolerance)
    assert interval.high == pytest.approx(expected[1], abs=tolerance)
    assert interval.method == NEWCOMBE_METHOD


def test_the_gate_uses_tango():
    assert PAIRED_BINARY_METHOD == TANGO_METHOD
    assert paired_binary_interval(9, 2, 1, 1) == tango_interval(9, 2, 1, 1)


@pytest.mark.parametrize("split", [(13, 0), (9, 4), (0, 13), (7, 6)])
def test_thirteen_identical_pairs_leave_plus_minus_22_8_points(split):
    both, neither = split
    interval = paired_binary_interval(both, 0, 0, neither)
    half = Z95**2 / (13 + Z95**2)
    assert interval.low == pytest.approx(-half, abs=1e-12)
    assert interval.high == pytest.approx(half, abs=1e-12)
    assert 0.228 < interval.high < 0.2281


def test_newcombe_narrows_on_agreement_alone():
    # One reason it is not the gate's interval: with no discordant pair its width
    # depends on how the agreeing pairs split between pass and fail.
    assert newcombe_interval(27, 0, 0, 27).high < 0.6 * newcombe_interval(54, 0, 0, 0).high
    assert tango_interval(27, 0, 0, 27) == tango_interval(54, 0, 0, 0)
    assert tango_interval(27, 0, 0, 27).high == pytest.approx(Z95**2 / (54 + Z95**2))


def test_all_discordant_one_way():
    n = 13
    edge = (n - Z95**2) / (n + Z95**2)
    better = tango_interval(0, n, 0, 0)
    assert better.high == 1.0 and better.low == pytest.approx(edge, abs=1e-12)
    worse = tango_interval(0, 0, n, 0)
    assert worse.low == -1.0 and worse.high == pytest.approx(-edge, abs=1e-12)


def test_a_single_pair():
    agree = tango_interval(1, 0, 0, 0)
    assert agree.high == pytest.approx(Z95**2 / (1 + Z95**2)) and agree.low == pytest.approx(-agree.high)
    better = tango_interval(0, 1, 0, 0)
    assert better.high == 1.0 and better.low == pytest.approx((1 - Z95**2) / (1 + Z95**2))


def test_ends_are_where_the_score_statistic_crosses_z():
    for counts in [(20, 12, 2, 16), (1, 1, 7, 12), (43, 0, 1, 0), (500, 40, 60, 400)]:
        interval = tango_interval(*counts)
        _, b, c, _ = counts
        n = sum(counts)
        assert tango_statistic(interval.low, b, c, n) == pytest.approx(Z95, abs=1e-6)
        assert tango_statistic(interval.high, b, c, n) == pytest.approx(-Z95, abs=1e-6)
        # Z decreases on the whole range, so bisection finds the only crossing.
        grid = np.linspace(-0.999, 0.999, 4001)
        assert np.all(np.diff(tango_statistic(grid, b, c, n)) < 0)


def test_swapping_the_systems_mirrors_the_interval():
    for counts in [(20, 12, 2, 16), (1, 1, 7, 12), (0, 5, 0, 0)]:
        a, b, c, d = counts
        for method in (tango_interval, newcombe_interval):
            forward, backward = method(a, b, c, d), method(a, c, b, d)
            assert backward.low == pytest.approx(-forward.high, abs=1e-12)
            assert backward.high == pytest.approx(-forward.low, abs=1e-12)


def test_monotone_in_each_discordant_count_and_in_confidence():
    n = 20
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    possible = b + c <= n
    low, high = tango_bounds(b, c, n)
    low, high = np.where(possible, low, np.nan), np.where(possible, high, np.nan)
    # One more candidate-only pair (one fewer concordant) never lowers a bound;
    # one more baseline-only pair never raises one.
    with np.errstate(invalid="ignore"):
        assert not np.any(np.diff(low, axis=0) < -1e-12)
        assert not np.any(np.diff(high, axis=0) < -1e-12)
        assert not np.any(np.diff(low, axis=1) > 1e-12)
        assert not np.any(np.diff(high, axis=1) > 1e-12)
    for counts in [(20, 12, 2, 16), (9, 0, 0, 4), (0, 3, 1, 0)]:
        narrow, middle, wide = (tango_interval(*counts, level) for level in (0.8, 0.95, 0.99))
        assert wide.low <= middle.low <= narrow.low <= narrow.high <= middle.high <= wide.high


def test_counts_of_paired_values_and_their_order():
    candidate = [1, 1, 0, 0, 1, 0, 1]
    baseline = [1, 0, 1, 0, 0, 0, 1]
    assert paired_counts(candidate, baseline) == (2, 2, 1, 2)
    order = np.random.default_rng(4).permutation(len(candidate))
    shuffled = paired_interval(np.array(candidate)[order], np.array(baseline)[order])
    assert shuffled == paired_interval(candidate, baseline) == paired_binary_interval(2, 2, 1, 2)


def test_paired_interval_chooses_by_the_values():
    assert paired_interval([1.0, 0.0, 1.0], [1.0, 1.0, 0.0]).method == PAIRED_BINARY_METHOD
    scores = [0.5, 1.0, 0.25, 0.0]
    chosen = paired_interval(scores, [0.0, 1.0, 0.5, 0.5], 0.9, seed=3)
    assert chosen == paired_difference_interval(scores, [0.0, 1.0, 0.5, 0.5], 0.9, seed=3)
    assert chosen.method == PAIRED_METHOD
    assert is_pass_fail([0, 1, 1.0]) and not is_pass_fail([0, 0.5]) and not is_pass_fail([])


@pytest.mark.parametrize(
    "counts",
    [(-1, 2, 3, 4), (0, 0, 0, 0), (1.5, 2, 3, 4), (True, 2, 3, 4), ("1", 2, 3, 4)],
)
def test_invalid_counts(counts):
    with pytest.raises(StatsError):
        tango_interval(*counts)
    with pytest.raises(StatsError):
        newcombe_interval(*counts)


def test_invalid_values_and_confidence():
    with pytest.raises(StatsError):
        paired_counts([0.5, 1.0], [1.0, 1.0])
    with pytest.raises(StatsError):
        paired_counts([1.0], [1.0, 0.0])
    with pytest.raises(StatsError):
        tango_interval(1, 2, 3, 4, confidence=1.0)


# -- coverage ------------------------------------------------------------------

REPLICATIONS = 2000
FLOOR = 0.95 - 2 * math.sqrt(0.95 * 0.05 / REPLICATIONS)  # nominal - 2 Monte Carlo SE


def _cells(discordance: float, difference: float) -> list[float]:
    """(both, candidate-only, baseline-only, neither) with a baseline pass rate of 0.7."""
    candidate_only, baseline_only = (discordance + difference) / 2, (discordance - difference) / 2
    both = 0.7 - baseline_only
    return [both, candidate_only, baseline_only, 1.0 - both - candidate_only - baseline_only]


@pytest.mark.slow
@pytest.mark.parametrize("n", [13, 30])
@pytest.mark.parametrize(("discordance", "difference"), [(0.05, 0.0), (0.2, 0.0), (0.3, 0.0), (0.2, 0.1), (0.3, 0.1)])
def test_coverage_at_small_n(n, discordance, difference):
    # The full grid (n up to 1000, widths against Newcombe's) is
    # benchmarks/paired_binary_coverage.py; these are its small-n cells.
    rng = np.random.default_rng([n, round(100 * discordance), round(100 * difference)])
    tables = rng.multinomial(n, _cells(discordance, difference), size=REPLICATIONS)
    low, high = tango_bounds(tables[:, 1], tables[:, 2], n)
    coverage = float(np.mean((low <= difference + 1e-12) & (difference - 1e-12 <= high)))
    assert coverage >= FLOOR, f"n={n}, discordance {discordance}, difference {difference}: {coverage:.4f}"
    # The vectorised core is the interval the gate computes, table by table.
    for table, lo, hi in list(zip(tables, low, high, strict=True))[:20]:
        interval = paired_binary_interval(*(int(x) for x in table))
        assert (interval.low, interval.high) == (pytest.approx(lo, abs=1e-15), pytest.approx(hi, abs=1e-15))


def test_newcombe_vectorised_core_matches_the_scalar_function():
    tables = np.random.default_rng(2).multinomial(30, _cells(0.2, 0.1), size=50)
    low, high = newcombe_bounds(*tables.T)
    for table, lo, hi in zip(tables, low, high, strict=True):
        interval = newcombe_interval(*(int(x) for x in table))
        assert (interval.low, interval.high) == (pytest.approx(lo), pytest.approx(hi))
