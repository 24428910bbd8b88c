"""The repeats `plan` recommends for a sampled candidate: at them, a gate's verdict on two
identical runs does not flip, where at one repeat it is close to a coin toss."""

from __future__ import annotations

import numpy as np
import pytest

from oloproof import stats
from oloproof._exceptions import StatsError


def _real_flips(rates: np.ndarray, baseline: np.ndarray, repeats: int, margin: float, rng, pairs: int) -> float:
    """Two runs of the true system against the stored baseline: how often their verdicts differ."""
    flips = 0
    for _ in range(pairs):
        verdicts = [stats.decide_rule(stats.paired_interval(rng.binomial(repeats, rates) / repeats, baseline),
                                      kind="non-inferiority", margin=margin)[0] for _ in range(2)]  # fmt: skip
        flips += verdicts[0] != verdicts[1]
    return flips / pairs


@pytest.mark.slow
def test_at_the_recommended_repeats_two_identical_runs_get_the_same_verdict():
    # Six sampled systems (benchmarks/gate_stability.py runs more): each case its own pass
    # probability, a baseline stored at 5 repeats, the repeats recommended from it alone.
    rng = np.random.default_rng(7)
    at_recommended, at_one = [], []
    for system in range(6):
        rates = rng.beta(0.4, 0.4, size=100)
        samples = (rng.random((100, 5)) < rates[:, None]).astype(float)
        baseline = samples.mean(axis=1)
        stable = stats.stable_repeats(samples.tolist(), baseline.tolist(), kind="non-inferiority", margin=0.10,
                                      seed=system)  # fmt: skip
        assert stable.repeats is not None and stable.repeats > 1
        assert stable.flip_rate <= stats.STABLE_FLIP_RATE
        at_recommended.append(_real_flips(rates, baseline, stable.repeats, 0.10, rng, pairs=200))
        at_one.append(_real_flips(rates, baseline, 1, 0.10, rng, pairs=200))
    # On average over systems the verdict repeats; at one repeat a case it is close to a coin toss.
    assert np.mean(at_recommended) <= 0.05
    assert np.mean(at_one) >= 0.25


def test_a_gate_near_its_margin_gets_no_recommendation_it_cannot_keep():
    rng = np.random.default_rng(4)
    rates = rng.beta(0.4, 0.4, size=40)
    samples = (rng.random((40, 5)) < rates[:, None]).astype(float)
    stable = stats.stable_repeats(samples.tolist(), samples.mean(axis=1).tolist(), kind="non-inferiority",
                                  margin=0.10, simulations=100)  # fmt: skip
    assert stable.repeats is None and stable.flip_rate > stats.STABLE_FLIP_RATE


def test_a_deterministic_candidate_is_stable_at_one_repeat():
    samples = [[1.0] * 5] * 75 + [[0.0] * 5] * 25
    stable = stats.stable_repeats(samples, [s[0] for s in samples], kind="non-inferiority", margin=0.10,
                                  simulations=50)  # fmt: skip
    assert (stable.repeats, stable.flip_rate) == (1, 0.0)


def test_scores_are_resampled_from_each_cases_own_samples():
    rng = np.random.default_rng(5)
    samples = [list(rng.uniform(0.2, 0.8, size=4)) for _ in range(30)]
    rate, verdict = stats.flip_rate(samples, [float(np.mean(s)) for s in samples], 3, kind="equivalence",
                                    margin=0.2, simulations=50)  # fmt: skip
    assert 0.0 <= rate <= 1.0 and verdict in ("PASS", "FAIL", "INSUFFICIENT_EVIDENCE")
    with pytest.raises(StatsError):
        stats.flip_rate(samples, [0.5], 3, kind="equivalence", margin=0.2)
