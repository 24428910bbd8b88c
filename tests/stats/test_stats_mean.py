"""Gaffke's interval for a bounded mean: exact cases, Monte Carlo, coverage, width."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy.special import stdtrit

from oloproof._exceptions import StatsError
from oloproof.stats import (
    MEAN_METHOD,
    _mean,
    clopper_pearson,
    format_score_interval,
    mean_interval,
)

NDCG_EXAMPLE = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0.63, 0.63, 0.5, 0.5]


def test_example_vector() -> None:
    interval = mean_interval(NDCG_EXAMPLE)
    assert interval.low < np.mean(NDCG_EXAMPLE) <= interval.high
    # Pinned: a change here changes every report.
    assert format_score_interval(interval) == "[0.620, 0.962]"
    assert interval.method == MEAN_METHOD
    assert interval.confidence == 0.95


@pytest.mark.parametrize("n", [1, 2, 13, 40, 250])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_pass_fail_values_give_clopper_pearson(n: int, confidence: float) -> None:
    for successes in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        values = [1.0] * successes + [0.0] * (n - successes)
        interval = mean_interval(values, confidence)
        exact = clopper_pearson(successes, n, confidence)
        assert interval.low == pytest.approx(exact.low, abs=1e-12)
        assert interval.high == pytest.approx(exact.high, abs=1e-12)


def test_identical_values_keep_the_price_of_what_was_not_seen() -> None:
    q = 0.025 ** (1 / 13)
    for v in (0.0, 0.3, 0.5, 1.0):
        interval = mean_interval([v] * 13)
        assert interval.low == pytest.approx(v * q, abs=1e-12)
        assert interval.high == pytest.approx(v + (1 - v) * (1 - q), abs=1e-12)
    assert mean_interval([0.5] * 13).width == pytest.approx(1 - q, abs=1e-12)


def test_monte_carlo_agrees_with_the_exact_law(monkeypatch: pytest.MonkeyPatch) -> None:
    # Force the Monte Carlo path where the beta law is known: the rank rule and
    # the reflected lower bound must land on Clopper-Pearson up to draw noise.
    monkeypatch.setattr(_mean, "_exact_upper", lambda values, counts, tail: None)
    for successes, n in ((9, 13), (0, 13), (30, 40), (400, 1000)):
        values = [1.0] * successes + [0.0] * (n - successes)
        estimate = mean_interval(values)
        exact = clopper_pearson(successes, n)
        scale = math.sqrt(max(successes, 1) * max(n - successes, 1) / n**3)
        assert estimate.low == pytest.approx(exact.low, abs=0.3 * scale)
        assert estimate.high == pytest.approx(exact.high, abs=0.3 * scale)


def test_deterministic_for_a_seed() -> None:
    values = np.random.default_rng(3).beta(2, 1, size=30)
    first = mean_interval(values, seed=7)
    assert mean_interval(values, seed=7) == first
    assert mean_interval(list(values), seed=7) == first
    other = mean_interval(values, seed=8)
    # Another seed moves the bounds by Monte Carlo noise only.
    assert other != first
    assert abs(other.low - first.low) < 0.01 and abs(other.high - first.high) < 0.01


def test_higher_confidence_and_more_data() -> None:
    values = np.random.default_rng(4).beta(5, 1, size=40)
    narrow = mean_interval(values, confidence=0.8)
    wide = mean_interval(values, confidence=0.99)
    assert wide.low < narrow.low and narrow.high < wide.high
    many = np.random.default_rng(5).beta(5, 1, size=4000)
    big = mean_interval(many)
    assert big.width < 0.012
    assert big.low < 5 / 6 < big.high


def test_grouping_many_distinct_values_only_moves_bounds_outward() -> None:
    values = np.random.default_rng(6).random(6000)
    low, high = _mean.gaffke_bounds(values, 0.95, 0)
    high_values, low_values, counts = _mean._grouped(values)
    assert counts.sum() == values.size and high_values.size == _mean._MAX_GROUPS
    # Each bound is exactly the bound of the data moved to its group's edge:
    # up for the upper bound, down for the lower one. Moving data outward can
    # only move a bound outward, and by at most the widest group's range.
    assert _mean.gaffke_bounds(np.repeat(high_values, counts), 0.95, 0)[1] == high
    assert _mean.gaffke_bounds(np.repeat(low_values, counts), 0.95, 0)[0] == low
    assert float((high_values - low_values).max()) < 0.005
    assert low < values.mean() < high


def test_tolerates_round_off_but_rejects_out_of_range() -> None:
    interval = mean_interval([1.0 + 1e-13, -1e-13, 0.5])
    assert 0.0 <= interval.low <= interval.high <= 1.0
    for bad in ([], [0.5, float("nan")], [0.5, 1.01], [-0.1, 0.5], [[0.5, 0.5]], "0.5"):
        with pytest.raises(StatsError):
            mean_interval(bad)  # type: ignore[arg-type]
    for kwargs in ({"confidence": 1.0}, {"confidence": 0.0}, {"seed": -1}, {"seed": 1.5}):
        with pytest.raises(StatsError):
            mean_interval([0.5, 0.6], **kwargs)  # type: ignore[arg-type]


def test_extreme_confidence_draws_enough() -> None:
    values = np.random.default_rng(9).beta(2, 2, size=50)
    interval = mean_interval(values, confidence=0.999)
    assert 0.0 <= interval.low < values.mean() < interval.high <= 1.0
    assert interval.width > mean_interval(values, confidence=0.99).width


def test_a_large_input_gives_a_narrow_interval_around_its_mean() -> None:
    # How long it takes is a benchmark's business (benchmarks/interval_table.py), not a test's.
    values = np.random.default_rng(0).random(100_000)
    interval = mean_interval(values)
    assert interval.low < values.mean() < interval.high
    assert interval.width < 0.01


Sampler = Callable[[np.random.Generator, tuple[int, int]], np.ndarray]

ATOMS = np.array([0.0, 0.39, 0.5, 0.63, 1.0])
ATOM_WEIGHTS = np.array([0.1, 0.1, 0.15, 0.15, 0.5])
DISTRIBUTIONS: dict[str, tuple[Sampler, float]] = {
    "beta-0.5-0.5": (lambda rng, shape: rng.beta(0.5, 0.5, shape), 0.5),
    "beta-5-1": (lambda rng, shape: rng.beta(5.0, 1.0, shape), 5.0 / 6.0),
    "ndcg-atoms": (lambda rng, shape: rng.choice(ATOMS, size=shape, p=ATOM_WEIGHTS), float(ATOMS @ ATOM_WEIGHTS)),
}
REPLICATIONS = 2000


def _gaffke_rows(samples: np.ndarray, confidence: float = 0.95, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """mean_interval for each row, vectorised where every value is distinct.

    The weights depend only on the counts of distinct values and the seed, so
    rows without ties share one draw; rows with ties go through the function.
    """
    n = samples.shape[1]
    ordered = np.sort(samples, axis=1)
    tail = (1.0 - confidence) / 2.0
    draws = _mean._draw_count(tail)
    rank = _mean._upper_rank(draws, tail)
    blocks = list(_mean.weight_blocks(np.ones(n, dtype=int), draws, np.random.default_rng(seed)))
    groups = np.concatenate([b[0] for b in blocks])
    upper_atom = np.concatenate([b[1] for b in blocks])
    lower_atom = np.concatenate([b[2] for b in blocks])
    total = groups.sum(axis=1)
    weighted = ordered @ groups.T
    upper = np.partition((weighted + upper_atom) / (total + upper_atom), rank - 1, axis=1)[:, rank - 1]
    lower_rank = draws + 1 - rank
    lower = np.partition(weighted / (total + lower_atom), lower_rank - 1, axis=1)[:, lower_rank - 1]
    tied = (np.diff(ordered, axis=1) == 0.0).any(axis=1)
    cache: dict[bytes, tuple[float, float]] = {}
    for row in np.flatnonzero(tied):
        key = ordered[row].tobytes()
        if key not in cache:
            interval = mean_interval(ordered[row], confidence, seed=seed)
            cache[key] = (interval.low, interval.high)
        lower[row], upper[row] = cache[key]
    return lower, upper


def test_vectorised_helper_matches_the_function() -> None:
    samples = np.random.default_rng(12).beta(2.0, 5.0, (4, 20))
    samples[3, :5] = 0.5  # one row with ties
    lower, upper = _gaffke_rows(samples)
    for row in range(4):
        interval = mean_interval(samples[row])
        assert lower[row] == pytest.approx(interval.low, abs=1e-12)
        assert upper[row] == pytest.approx(interval.high, abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_coverage_and_width(name: str) -> None:
    sampler, mean = DISTRIBUTIONS[name]
    floor = 0.95 - 2 * math.sqrt(0.95 * 0.05 / REPLICATIONS)
    rng = np.random.default_rng(len(name))
    for n in (13, 30, 100):
        samples = sampler(rng, (REPLICATIONS, n))
        lower, upper = _gaffke_rows(samples)
        coverage = float(np.mean((lower <= mean) & (mean <= upper)))
        assert coverage >= floor, f"{name}, n={n}: coverage {coverage:.3f} < {floor:.3f}"
        # Never wider than the distribution-free trivial bound, and at n = 100
        # within 1.6 times the t interval, which covers here.
        t = stdtrit(n - 1, 0.975) * samples.std(axis=1, ddof=1) / math.sqrt(n)
        ratio = float(np.mean(upper - lower) / np.mean(2 * t))
        if n == 100:
            assert ratio < 1.6, f"{name}: width {ratio:.2f} times t"
