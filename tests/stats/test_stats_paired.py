"""Paired-difference interval: mapping, identical pairs, coverage."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from oloproof._exceptions import StatsError
from oloproof.stats import (
    PAIRED_METHOD,
    mean_interval,
    paired_difference_interval,
    paired_method_name,
)

SMALL_NS = (5, 10, 13, 20, 40)


def test_identical_pairs_are_not_proof_of_no_change() -> None:
    scores = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0.63, 0.63, 0.5, 0.5]
    interval = paired_difference_interval(scores, scores)
    # 13 agreeing pairs leave +-24.7 points: a change touching 24.7% of the
    # cases would go unseen in 13 pairs with probability 2.5%.
    half = 1 - 0.025 ** (1 / 13)
    assert interval.low == pytest.approx(-half, abs=1e-12)
    assert interval.high == pytest.approx(half, abs=1e-12)
    assert interval.method == PAIRED_METHOD == paired_method_name()
    # The price of what was not seen shrinks as 1/n, never to zero.
    many = paired_difference_interval([0.5] * 1000, [0.5] * 1000)
    assert many.high == pytest.approx(1 - 0.025 ** (1 / 1000), abs=1e-12)
    assert 0.0 < many.high < 0.004


def test_is_the_mean_interval_of_mapped_differences() -> None:
    rng = np.random.default_rng(8)
    baseline = rng.random(25)
    candidate = np.clip(baseline + rng.normal(0.05, 0.1, 25), 0, 1)
    paired = paired_difference_interval(candidate, baseline, 0.9, seed=3)
    unit = mean_interval((candidate - baseline + 1) / 2, 0.9, seed=3)
    assert paired.low == pytest.approx(2 * unit.low - 1, abs=1e-12)
    assert paired.high == pytest.approx(2 * unit.high - 1, abs=1e-12)
    assert paired.confidence == 0.9


def test_small_differences_are_resolved_at_large_n() -> None:
    rng = np.random.default_rng(10)
    baseline = rng.beta(4.0, 1.5, 1000)
    candidate = np.clip(baseline + rng.normal(0.02, 0.1, 1000), 0, 1)
    interval = paired_difference_interval(candidate, baseline)
    differences = candidate - baseline
    t_half = 1.962 * differences.std(ddof=1) / np.sqrt(1000)
    assert interval.low > 0.0
    assert interval.width < 2 * 1.3 * t_half


def test_clear_improvement_excludes_zero() -> None:
    interval = paired_difference_interval([1.0] * 20, [0.0] * 20)
    assert interval.high == 1.0
    assert interval.low > 0.5
    worse = paired_difference_interval([0.0] * 20, [1.0] * 20)
    assert worse.low == -1.0 and worse.high < -0.5


@pytest.mark.parametrize(
    ("candidate", "baseline"),
    [([], []), ([0.5, 0.5], [0.5]), ([0.5, 1.5], [0.5, 0.5]), ([0.5, float("nan")], [0.5, 0.5])],
)
def test_invalid_input(candidate: list[float], baseline: list[float]) -> None:
    with pytest.raises(StatsError):
        paired_difference_interval(candidate, baseline)


PairSampler = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]


def _binary_pairs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    # Baseline passes 80%; the candidate fixes 30% of its failures and breaks
    # 10% of its passes: discordance in both directions, mean difference -0.02.
    baseline = (rng.random(n) < 0.8).astype(float)
    flip = rng.random(n)
    candidate = np.where(baseline == 1.0, (flip >= 0.1).astype(float), (flip < 0.3).astype(float))
    return candidate, baseline


def _continuous_pairs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    # Correlated scores in [0, 1] with an exactly known mean difference.
    baseline = rng.beta(4.0, 1.5, n)
    candidate = 0.7 * baseline + 0.3 * rng.beta(2.0, 1.0, n)
    return candidate, baseline


PAIR_MODELS: dict[str, tuple[PairSampler, float]] = {
    "binary-discordant": (_binary_pairs, 0.2 * 0.3 - 0.8 * 0.1),
    "continuous-correlated": (_continuous_pairs, 0.3 * (2.0 / 3.0 - 4.0 / 5.5)),
}
REPLICATIONS = 2000


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PAIR_MODELS))
def test_coverage_at_small_n(name: str) -> None:
    sampler, difference = PAIR_MODELS[name]
    floor = 0.95 - 3 * np.sqrt(0.95 * 0.05 / REPLICATIONS)
    for index, n in enumerate(SMALL_NS):
        rng = np.random.default_rng(500 + index)
        hits = 0
        # The interval is a function of the multiset of pairs: equal multisets
        # (frequent for pass/fail pairs) are computed once.
        cache: dict[bytes, bool] = {}
        for _ in range(REPLICATIONS):
            candidate, baseline = sampler(rng, n)
            key = np.sort(candidate - baseline).tobytes()
            if key not in cache:
                interval = paired_difference_interval(candidate, baseline)
                cache[key] = interval.low <= difference <= interval.high
            hits += cache[key]
        coverage = hits / REPLICATIONS
        assert coverage >= floor, f"{name}, n={n}: coverage {coverage:.3f} < {floor:.3f}"
