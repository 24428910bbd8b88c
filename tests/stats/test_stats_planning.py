"""Decision rules and simulated sample sizes."""

from __future__ import annotations

import time

import numpy as np
import pytest

from oloproof._exceptions import StatsError
from oloproof.stats import (
    Interval,
    decide_rule,
    paired_difference_interval,
    required_pairs,
)
from oloproof.stats._betting import (
    log_mean_wealth,
    plug_in_bets,
    rejection_level,
    shuffled_copies,
)


def _interval(low: float, high: float) -> Interval:
    return Interval(low=low, high=high, confidence=0.95, method="test")


@pytest.mark.parametrize(
    ("low", "high", "kind", "margin", "expected"),
    [
        (-0.04, 0.1, "non-inferiority", 0.05, ("PASS", "interval_above_margin")),
        (-0.3, -0.06, "non-inferiority", 0.05, ("FAIL", "interval_below_margin")),
        (-0.05, 0.1, "non-inferiority", 0.05, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.3, -0.05, "non-inferiority", 0.05, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (0.01, 0.2, "superiority", 0.0, ("PASS", "interval_above_margin")),
        (0.0, 0.2, "superiority", 0.0, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.2, 0.0, "superiority", 0.0, ("FAIL", "interval_below_margin")),
        (0.03, 0.2, "superiority", 0.05, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.04, 0.04, "equivalence", 0.05, ("PASS", "interval_within_margin")),
        (-0.05, 0.04, "equivalence", 0.05, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (0.05, 0.2, "equivalence", 0.05, ("FAIL", "interval_outside_margin")),
        (-0.3, -0.06, "equivalence", 0.05, ("FAIL", "interval_outside_margin")),
        (-0.31, 0.31, "equivalence", 0.05, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
    ],
)
def test_decide_rule(
    low: float, high: float, kind: str, margin: float, expected: tuple[str, str]
) -> None:
    assert decide_rule(_interval(low, high), kind=kind, margin=margin) == expected


def test_decide_rule_rejects_bad_arguments() -> None:
    with pytest.raises(StatsError):
        decide_rule(_interval(0, 1), kind="superiority", margin=-0.01)
    with pytest.raises(StatsError):
        decide_rule(_interval(0, 1), kind="better", margin=0.0)
    with pytest.raises(StatsError):
        decide_rule(_interval(0, 1), kind="equivalence", margin=float("inf"))


def test_one_wealth_evaluation_matches_the_full_interval() -> None:
    # required_pairs decides "low > -margin" from the wealth at one point; that
    # must agree with decide_rule on the full interval for the same orderings.
    rng = np.random.default_rng(21)
    threshold = rejection_level(0.95)
    agreements = 0
    for trial in range(300):
        n = int(rng.integers(5, 60))
        baseline = rng.choice([0.0, 0.5, 1.0], size=n)
        candidate = np.clip(baseline + rng.choice([-0.5, 0.0, 0.5], size=n, p=[0.1, 0.6, 0.3]), 0, 1)
        margin = float(rng.uniform(0.0, 0.3))
        interval = paired_difference_interval(candidate, baseline, seed=trial)
        verdict, _ = decide_rule(interval, kind="non-inferiority", margin=margin)
        unit = (candidate - baseline + 1.0) / 2.0
        ordered = shuffled_copies(unit, 8, np.random.default_rng(trial))
        bets = plug_in_bets(ordered, 0.95)
        shortcut = log_mean_wealth(ordered, bets, (1.0 - margin) / 2.0, upper=True) >= threshold
        assert shortcut == (verdict == "PASS"), (trial, interval, margin)
        agreements += verdict == "PASS"
    # Both outcomes occur, so the comparison is not vacuous.
    assert 30 < agreements < 270


BINARY_BASELINE = [1.0] * 9 + [0.0] * 4


def _pass_rate_with_public_api(n: int, true_difference: float, margin: float, kind: str) -> float:
    # Independent re-implementation of the binary model: failures flip to
    # successes at the rate that moves the mean by true_difference.
    rng = np.random.default_rng(99)
    base_values = np.array(BINARY_BASELINE)
    flip = true_difference / (1.0 - base_values.mean())
    passes = 0
    runs = 200
    for run in range(runs):
        baseline = rng.choice(base_values, size=n)
        candidate = np.where((baseline == 0.0) & (rng.random(n) < flip), 1.0, baseline)
        interval = paired_difference_interval(candidate, baseline, seed=run)
        passes += decide_rule(interval, kind=kind, margin=margin)[0] == "PASS"
    return passes / runs


def test_required_pairs_reaches_the_requested_power() -> None:
    n = required_pairs(BINARY_BASELINE, true_difference=0.15, margin=0.0, kind="superiority")
    assert n is not None
    assert 20 < n < 120
    # The estimate carries Monte-Carlo error (about +-10% of n across seeds), so
    # check the requested power within that band, and that half as many fail.
    assert _pass_rate_with_public_api(n, 0.15, 0.0, "superiority") >= 0.7
    assert _pass_rate_with_public_api(round(1.25 * n), 0.15, 0.0, "superiority") >= 0.8
    assert _pass_rate_with_public_api(n // 2, 0.15, 0.0, "superiority") < 0.6


def test_required_pairs_is_deterministic_and_ordered() -> None:
    kwargs = {"margin": 0.0, "kind": "superiority"}
    big = required_pairs(BINARY_BASELINE, true_difference=0.1, **kwargs)
    assert big == required_pairs(BINARY_BASELINE, true_difference=0.1, **kwargs)
    small = required_pairs(BINARY_BASELINE, true_difference=0.2, **kwargs)
    assert small is not None and big is not None and small < big
    stricter = required_pairs(BINARY_BASELINE, true_difference=0.1, power=0.95, **kwargs)
    assert stricter is not None and stricter > big


def test_required_pairs_continuous_and_equivalence() -> None:
    scores = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0.63, 0.63, 0.5, 0.5]
    wide = required_pairs(scores, true_difference=0.0, margin=0.1, kind="equivalence")
    narrow = required_pairs(scores, true_difference=0.0, margin=0.05, kind="equivalence")
    assert wide is not None and narrow is not None and 13 < wide < narrow
    shifted = required_pairs(scores, true_difference=-0.02, margin=0.05, kind="non-inferiority")
    assert shifted is not None and shifted > 13


def test_required_pairs_returns_none_when_unreachable() -> None:
    # The true difference is on the wrong side of the margin: never reachable.
    assert (
        required_pairs(BINARY_BASELINE, true_difference=0.02, margin=0.05, kind="superiority")
        is None
    )
    # Reachable in principle, but not within max_n.
    assert (
        required_pairs(
            BINARY_BASELINE, true_difference=0.02, margin=0.0, kind="superiority", max_n=50
        )
        is None
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"true_difference": 0.0, "margin": 0.0, "kind": "equivalence"},
        {"true_difference": 0.5, "margin": 0.0, "kind": "superiority"},
        {"true_difference": 0.0, "margin": -0.1, "kind": "non-inferiority"},
        {"true_difference": 0.0, "margin": 0.1, "kind": "nope"},
        {"true_difference": 0.0, "margin": 0.1, "kind": "equivalence", "power": 1.0},
        {"true_difference": 0.0, "margin": 0.1, "kind": "equivalence", "simulations": 0},
        {"true_difference": float("nan"), "margin": 0.1, "kind": "equivalence"},
    ],
)
def test_required_pairs_rejects_bad_arguments(kwargs: dict[str, object]) -> None:
    # A baseline passing 9 of 13 cannot improve by 0.5: at most 4/13.
    with pytest.raises(StatsError):
        required_pairs(BINARY_BASELINE, **kwargs)  # type: ignore[arg-type]


@pytest.mark.slow
def test_required_pairs_large_answer_is_fast_enough() -> None:
    start = time.perf_counter()
    n = required_pairs(BINARY_BASELINE, true_difference=-0.01, margin=0.02, kind="non-inferiority")
    elapsed = time.perf_counter() - start
    assert n is not None and 1000 < n < 5000
    assert elapsed < 10.0
