"""Decision rules, and the pairs a rule needs, checked against simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof._exceptions import StatsError
from oloproof.stats import (
    Interval,
    binary_pass_probability,
    decide_rule,
    paired_interval,
    required_pairs,
)
from oloproof.stats._paired_binary import tango_bounds


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


BINARY_BASELINE = [1.0] * 7 + [0.0] * 3


def _simulated_pass_rate(
    n: int, *, discordance: float, difference: float, margin: float, kind: str,
    replications: int = 4000, baseline_rate: float = 0.7,
) -> float:
    """Pass rate of the gate's rule on simulated 2x2 tables of n pairs."""
    candidate_only, baseline_only = (discordance + difference) / 2, (discordance - difference) / 2
    both = baseline_rate - baseline_only
    cells = [both, candidate_only, baseline_only, 1.0 - both - candidate_only - baseline_only]
    tables = np.random.default_rng([7, n]).multinomial(n, cells, size=replications)
    # tango_bounds is paired_binary_interval's vectorised core (checked equal in
    # test_stats_paired_binary); decide_rule is applied to each interval as the gate does.
    low, high = tango_bounds(tables[:, 1], tables[:, 2], n)
    verdicts = [decide_rule(Interval(lo, hi, 0.95, "sim"), kind=kind, margin=margin)[0]
                for lo, hi in zip(low, high, strict=True)]
    return verdicts.count("PASS") / replications


@pytest.mark.parametrize(
    ("kind", "margin", "discordance", "difference", "expected"),
    [
        # The setting: non-inferiority at 5 points, 10% of cases discordant;
        # "about 330 pairs with Newcombe's or Tango's".
        ("non-inferiority", 0.05, 0.10, 0.0, (290, 370)),
        ("superiority", 0.0, 0.20, 0.10, (100, 200)),
    ],
)
def test_the_plan_agrees_with_simulation_within_ten_percent(kind, margin, discordance, difference, expected):
    n = required_pairs(BINARY_BASELINE, true_difference=difference, margin=margin, kind=kind,
                       discordance=discordance)
    assert n is not None and expected[0] < n < expected[1]
    # At 4000 replications the simulated pass rate has an SE of 0.6 points, and
    # 10% fewer or more pairs move the power by about 4 points: the simulated
    # 80% crossing lies within 10% of the plan's figure.
    below = _simulated_pass_rate(round(0.9 * n), discordance=discordance, difference=difference,
                                 margin=margin, kind=kind)
    at = _simulated_pass_rate(n, discordance=discordance, difference=difference, margin=margin, kind=kind)
    above = _simulated_pass_rate(round(1.1 * n), discordance=discordance, difference=difference,
                                 margin=margin, kind=kind)
    assert below < 0.8 < above, (n, below, at, above)
    assert abs(at - 0.8) < 0.03


def test_the_exact_power_is_the_simulated_power():
    for kind, margin, n in (("equivalence", 0.05, 600), ("non-inferiority", 0.02, 400), ("superiority", 0.0, 90)):
        exact = binary_pass_probability(n, discordance=0.2, true_difference=0.05 if kind == "superiority" else 0.0,
                                        margin=margin, kind=kind)
        simulated = _simulated_pass_rate(n, discordance=0.2, difference=0.05 if kind == "superiority" else 0.0,
                                         margin=margin, kind=kind)
        assert abs(exact - simulated) < 4 * math.sqrt(exact * (1 - exact) / 4000) + 1e-3, (kind, exact, simulated)


def test_copying_the_baseline_was_the_mistake():
    # With no discordance the interval is +-z^2/(n+z^2) and clears a 5-point margin
    # at 73 pairs, every time; 13 identical pairs never suffice.
    assert required_pairs(BINARY_BASELINE, true_difference=0.0, margin=0.05, kind="non-inferiority",
                          discordance=0.0) == 73
    assert binary_pass_probability(13, discordance=0.0, true_difference=0.0, margin=0.05,
                                   kind="non-inferiority") == 0.0
    # At 10% discordance the 98 pairs that copying the baseline suggested pass
    # about one time in three, even with this interval.
    assert 0.2 < binary_pass_probability(98, discordance=0.1, true_difference=0.0, margin=0.05,
                                         kind="non-inferiority") < 0.5


def test_more_disagreement_or_power_needs_more_pairs():
    def plan(**kwargs: float) -> int | None:
        options = {"true_difference": 0.0, "margin": 0.05, "kind": "non-inferiority", "discordance": 0.1}
        return required_pairs(BINARY_BASELINE, **{**options, **kwargs})  # type: ignore[arg-type]

    base = plan()
    assert base is not None and base == plan()
    assert plan(discordance=0.05) < base < plan(discordance=0.2)  # type: ignore[operator]
    assert base < plan(power=0.9)  # type: ignore[operator]
    assert plan(margin=0.1) < base  # type: ignore[operator]


def test_a_pass_fail_pilot_supplies_the_discordance():
    baseline = [1.0] * 14 + [0.0] * 6
    pilot = [0.0] + [1.0] * 13 + [1.0] + [0.0] * 5  # one case breaks, one is fixed: 2 of 20
    options = {"true_difference": 0.0, "margin": 0.05, "kind": "non-inferiority"}
    assert required_pairs(baseline, pilot_values=pilot, **options) == required_pairs(
        baseline, discordance=0.1, **options)
    # Identical pilot pairs: the least discordance the assumed difference needs.
    better = {"true_difference": 0.1, "margin": 0.0, "kind": "superiority"}
    assert required_pairs(baseline, pilot_values=baseline, **better) == required_pairs(
        baseline, discordance=0.1, **better)


SCORES = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 0.63, 0.63, 0.5, 0.5] * 3, dtype=float)
# Mid-range scores on a coarse grid, so that a pilot's changes and the shift that
# recentres them never reach 0 or 1 (no clipping: the shift is minus the mean
# difference), and few distinct differences keep each score interval cheap.
MIDDLE = np.random.default_rng(5).choice([0.2, 0.35, 0.5, 0.65, 0.8], 40)
CHANGES = np.random.default_rng(3).choice([-0.15, 0.0, 0.15], MIDDLE.size, p=[0.2, 0.6, 0.2])


def _score_pass_rate(n: int, pilot: np.ndarray, margin: float, runs: int = 200) -> float:
    # Independent re-implementation of the pilot model: pairs resampled whole,
    # the candidate recentred so that the mean difference is 0.
    shift = float(np.mean(MIDDLE - pilot))
    rng = np.random.default_rng(99)
    passes = 0
    for _ in range(runs):
        index = rng.integers(0, MIDDLE.size, size=n)
        interval = paired_interval(pilot[index] + shift, MIDDLE[index], 0.95)
        passes += decide_rule(interval, kind="non-inferiority", margin=margin)[0] == "PASS"
    return passes / runs


@pytest.mark.slow
def test_a_score_pilot_supplies_the_spread():
    pilot = MIDDLE - 0.03 + CHANGES
    recentred = pilot + np.mean(MIDDLE - pilot)
    assert 0.0 < recentred.min() and recentred.max() < 1.0
    options = {"true_difference": 0.0, "margin": 0.05, "kind": "non-inferiority"}
    n = required_pairs(MIDDLE, pilot_values=pilot, **options)
    assert n is not None and 13 < n < 1000
    assert n == required_pairs(MIDDLE, pilot_values=pilot, **options)
    # The simulated pass rate around the figure (each simulation has an SE of
    # about 3 points, so the bands are wide).
    assert _score_pass_rate(round(1.25 * n), pilot, 0.05) >= 0.8
    assert _score_pass_rate(n // 2, pilot, 0.05) < 0.7
    # A noisier pilot needs more pairs.
    wider = required_pairs(MIDDLE, pilot_values=np.clip(MIDDLE + 2 * CHANGES, 0.0, 1.0), **options)
    assert wider is not None and wider > n


@pytest.mark.slow
def test_score_plan_by_discordance():
    wide = required_pairs(SCORES, true_difference=0.0, margin=0.1, kind="equivalence", discordance=0.2)
    narrow = required_pairs(SCORES, true_difference=0.0, margin=0.1, kind="equivalence", discordance=0.4)
    assert wide is not None and narrow is not None and 13 < wide < narrow


def test_required_pairs_returns_none_when_unreachable():
    # The true difference is on the wrong side of the margin: never reachable.
    assert required_pairs(BINARY_BASELINE, true_difference=0.02, margin=0.05, kind="superiority",
                          discordance=0.1) is None
    # Reachable in principle, but not within max_n.
    assert required_pairs(BINARY_BASELINE, true_difference=0.02, margin=0.0, kind="superiority",
                          discordance=0.1, max_n=50) is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"true_difference": 0.0, "margin": 0.0, "kind": "equivalence", "discordance": 0.1},
        {"true_difference": 0.0, "margin": 0.1, "kind": "non-inferiority"},
        {"true_difference": 0.0, "margin": 0.1, "kind": "non-inferiority", "discordance": 0.1,
         "pilot_values": BINARY_BASELINE},
        {"true_difference": 0.1, "margin": 0.0, "kind": "superiority", "discordance": 0.05},
        {"true_difference": 0.0, "margin": 0.1, "kind": "superiority", "discordance": 1.5},
        {"true_difference": 0.0, "margin": 0.1, "kind": "superiority", "pilot_values": [1.0, 0.0]},
        {"true_difference": 0.0, "margin": -0.1, "kind": "non-inferiority", "discordance": 0.1},
        {"true_difference": 0.0, "margin": 0.1, "kind": "nope", "discordance": 0.1},
        {"true_difference": 0.0, "margin": 0.1, "kind": "equivalence", "power": 1.0, "discordance": 0.1},
        {"true_difference": float("nan"), "margin": 0.1, "kind": "equivalence", "discordance": 0.1},
    ],
)
def test_required_pairs_rejects_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(StatsError):
        required_pairs(BINARY_BASELINE, **kwargs)  # type: ignore[arg-type]


def test_a_score_difference_beyond_the_scale_is_refused():
    with pytest.raises(StatsError):
        required_pairs([0.9, 0.8, 0.95], true_difference=0.5, margin=0.0, kind="superiority", discordance=0.1)


def test_a_large_pass_fail_answer():
    n = required_pairs(BINARY_BASELINE, true_difference=-0.01, margin=0.02, kind="non-inferiority",
                       discordance=0.1)
    assert n is not None and 5000 < n < 20000
