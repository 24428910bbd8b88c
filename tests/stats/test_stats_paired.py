"""Paired-difference interval: mapping, identical pairs, coverage."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from oloproof._exceptions import StatsError
from oloproof.stats import (
    PAIRED_METHOD,
    betting_mean_interval,
    paired_difference_interval,
    paired_method_name,
)

SMALL_NS = (5, 10, 13, 20, 40)


def test_identical_pairs_are_not_proof_of_no_change() -> None:
    scores = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0.63, 0.63, 0.5, 0.5]
    interval = paired_difference_interval(scores, scores)
    assert interval.low == pytest.approx(-interval.high, abs=1e-6)
    # 13 agreeing pairs still leave about +-31 points of doubt.
    assert 0.25 < interval.high < 0.40
    assert interval.width > 0.5
    assert interval.method == PAIRED_METHOD == paired_method_name()


def test_is_the_betting_interval_of_mapped_differences() -> None:
    rng = np.random.default_rng(8)
    baseline = rng.random(25)
    candidate = np.clip(baseline + rng.normal(0.05, 0.1, 25), 0, 1)
    paired = paired_difference_interval(candidate, baseline, 0.9, seed=3, orderings=4)
    unit = betting_mean_interval((candidate - baseline + 1) / 2, 0.9, seed=3, orderings=4)
    assert paired.low == pytest.approx(2 * unit.low - 1, abs=1e-12)
    assert paired.high == pytest.approx(2 * unit.high - 1, abs=1e-12)
    assert paired.confidence == 0.9


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
        for replication in range(REPLICATIONS):
            candidate, baseline = sampler(rng, n)
            interval = paired_difference_interval(candidate, baseline, seed=replication)
            hits += interval.low <= difference <= interval.high
        coverage = hits / REPLICATIONS
        assert coverage >= floor, f"{name}, n={n}: coverage {coverage:.3f} < {floor:.3f}"
