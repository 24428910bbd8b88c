"""Betting interval for a bounded mean: behaviour, exactness of the search, coverage."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from oloproof._exceptions import StatsError
from oloproof.stats import betting_mean_interval, format_score_interval
from oloproof.stats._betting import (
    log_mean_wealth,
    plug_in_bets,
    rejection_level,
    shuffled_copies,
)

SMALL_NS = (5, 10, 13, 20, 40)
NDCG_EXAMPLE = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0.63, 0.63, 0.5, 0.5]


def test_example_vector() -> None:
    interval = betting_mean_interval(NDCG_EXAMPLE)
    assert interval.low < np.mean(NDCG_EXAMPLE) <= interval.high
    # Pinned: a change here changes every report.
    assert format_score_interval(interval) == "[0.586, 1.000]"
    assert interval.method == "betting (Waudby-Smith & Ramdas 2024, hedged capital)"
    assert interval.confidence == 0.95


def test_identical_values_do_not_collapse() -> None:
    ones = betting_mean_interval([1.0] * 13)
    assert ones.high == 1.0
    assert 0.65 < ones.low < 0.75
    zeros = betting_mean_interval([0.0] * 13)
    assert zeros.low == 0.0
    assert zeros.high == pytest.approx(1.0 - ones.low, abs=1e-6)
    halves = betting_mean_interval([0.5] * 13)
    assert halves.low < 0.4 and halves.high > 0.6


def test_deterministic_for_a_seed() -> None:
    values = np.random.default_rng(3).beta(2, 1, size=30)
    first = betting_mean_interval(values, seed=7)
    assert betting_mean_interval(values, seed=7) == first
    assert betting_mean_interval(list(values), seed=7) == first


def test_higher_confidence_and_more_data() -> None:
    values = np.random.default_rng(4).beta(5, 1, size=40)
    narrow = betting_mean_interval(values, confidence=0.8)
    wide = betting_mean_interval(values, confidence=0.99)
    assert wide.low < narrow.low and narrow.high < wide.high
    many = np.random.default_rng(5).beta(5, 1, size=4000)
    big = betting_mean_interval(many)
    assert big.width < 0.03
    assert big.low < 5 / 6 < big.high


def test_interval_is_exactly_the_non_rejected_set() -> None:
    # Check the bisection against a dense scan of candidate means, using the
    # same orderings the function draws from its seed (of the sorted values).
    rng = np.random.default_rng(11)
    for n in (3, 13, 40):
        values = rng.choice([0.0, 0.5, 0.63, 1.0], size=n)
        interval = betting_mean_interval(values, seed=5)
        ordered = shuffled_copies(np.sort(values), 8, np.random.default_rng(5))
        bets = plug_in_bets(ordered, 0.95)
        threshold = rejection_level(0.95)
        for m in np.linspace(0.0, 1.0, 2001):
            kept = (
                log_mean_wealth(ordered, bets, m, upper=True) < threshold
                and log_mean_wealth(ordered, bets, m, upper=False) < threshold
            )
            if kept:
                assert interval.low <= m <= interval.high
            elif interval.low + 1e-6 < m < interval.high - 1e-6:
                pytest.fail(f"rejected mean {m} lies inside {interval}")
        assert interval.high - interval.low > 0.05


def test_tolerates_round_off_but_rejects_out_of_range() -> None:
    interval = betting_mean_interval([1.0 + 1e-13, -1e-13, 0.5])
    assert 0.0 <= interval.low <= interval.high <= 1.0
    for bad in ([], [0.5, float("nan")], [0.5, 1.01], [-0.1, 0.5], [[0.5, 0.5]], "0.5"):
        with pytest.raises(StatsError):
            betting_mean_interval(bad)  # type: ignore[arg-type]
    for kwargs in ({"confidence": 1.0}, {"orderings": 0}, {"seed": -1}, {"seed": 1.5}):
        with pytest.raises(StatsError):
            betting_mean_interval([0.5, 0.6], **kwargs)  # type: ignore[arg-type]


def test_a_large_input_gives_a_narrow_interval_around_its_mean() -> None:
    values = np.random.default_rng(0).random(100_000)
    interval = betting_mean_interval(values)
    assert interval.low < values.mean() < interval.high
    assert interval.width < 0.01


Sampler = Callable[[np.random.Generator, int], np.ndarray]

DISTRIBUTIONS: dict[str, tuple[Sampler, float]] = {
    "bernoulli-0.9": (lambda rng, n: (rng.random(n) < 0.9).astype(float), 0.9),
    "bernoulli-0.5": (lambda rng, n: (rng.random(n) < 0.5).astype(float), 0.5),
    "beta-5-1": (lambda rng, n: rng.beta(5.0, 1.0, n), 5.0 / 6.0),
    "ones-with-15%-zeros": (lambda rng, n: (rng.random(n) >= 0.15).astype(float), 0.85),
    "ndcg-3-atoms": (
        lambda rng, n: rng.choice([1.0, 0.63, 0.5], size=n, p=[0.7, 0.15, 0.15]),
        0.7 + 0.15 * 0.63 + 0.15 * 0.5,
    ),
}
REPLICATIONS = 2000


def _coverage(sampler: Sampler, mean: float, n: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for replication in range(REPLICATIONS):
        interval = betting_mean_interval(sampler(rng, n), seed=replication)
        hits += interval.low <= mean <= interval.high
    return hits / REPLICATIONS


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_coverage_at_small_n(name: str) -> None:
    sampler, mean = DISTRIBUTIONS[name]
    floor = 0.95 - 3 * np.sqrt(0.95 * 0.05 / REPLICATIONS)
    for index, n in enumerate(SMALL_NS):
        coverage = _coverage(sampler, mean, n, seed=1000 * index + len(name))
        assert coverage >= floor, f"{name}, n={n}: coverage {coverage:.3f} < {floor:.3f}"


def _percentile_bootstrap_covers(values: np.ndarray, mean: float, rng: np.random.Generator) -> bool:
    resamples = values[rng.integers(0, values.size, size=(2000, values.size))].mean(axis=1)
    low, high = np.quantile(resamples, [0.025, 0.975])
    return bool(low <= mean <= high)


@pytest.mark.slow
def test_percentile_bootstrap_under_covers_where_betting_does_not() -> None:
    # Why we do not use the bootstrap: at n = 13 with 90% successes, a quarter of
    # the samples are all successes, and the bootstrap then returns [1, 1].
    rng = np.random.default_rng(2024)
    samples = [(rng.random(13) < 0.9).astype(float) for _ in range(REPLICATIONS)]
    bootstrap = np.mean([_percentile_bootstrap_covers(s, 0.9, rng) for s in samples])
    intervals = [betting_mean_interval(s, seed=i) for i, s in enumerate(samples)]
    betting = np.mean([i.low <= 0.9 <= i.high for i in intervals])
    assert bootstrap < 0.80
    assert betting >= 0.95
