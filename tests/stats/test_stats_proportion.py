"""Clopper–Pearson interval: reference values and exact coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from oloproof._exceptions import StatsError
from oloproof.stats import clopper_pearson, format_percent_interval

SMALL_NS = (5, 10, 13, 20, 40)


def test_reference_values_at_n13() -> None:
    assert format_percent_interval(clopper_pearson(9, 13)) == "[38.5%, 91.0%]"
    assert format_percent_interval(clopper_pearson(12, 13)).startswith("[63.9%, ")
    assert format_percent_interval(clopper_pearson(13, 13)) == "[75.2%, 100.0%]"


def test_extremes_are_exact() -> None:
    none = clopper_pearson(0, 13)
    assert none.low == 0.0
    assert none.high == pytest.approx(1 - 0.025 ** (1 / 13))
    every = clopper_pearson(13, 13)
    assert every.high == 1.0
    assert every.low == pytest.approx(0.025 ** (1 / 13))
    assert every.method == "clopper-pearson"
    assert every.confidence == 0.95


def test_symmetry() -> None:
    for k in range(14):
        left, right = clopper_pearson(k, 13), clopper_pearson(13 - k, 13)
        assert left.low == pytest.approx(1 - right.high, abs=1e-12)
        assert left.high == pytest.approx(1 - right.low, abs=1e-12)


def test_higher_confidence_is_wider() -> None:
    narrow, wide = clopper_pearson(9, 13, 0.9), clopper_pearson(9, 13, 0.99)
    assert wide.low < narrow.low and narrow.high < wide.high


@pytest.mark.parametrize(
    ("successes", "n", "confidence"),
    [(-1, 10, 0.95), (11, 10, 0.95), (0, 0, 0.95), (1.5, 10, 0.95), (1, 10, 1.0), (1, 10, -0.1)],
)
def test_invalid_input(successes: int, n: int, confidence: float) -> None:
    with pytest.raises(StatsError):
        clopper_pearson(successes, n, confidence)


@pytest.mark.parametrize("n", SMALL_NS)
def test_exact_coverage_is_at_least_nominal(n: int) -> None:
    # Coverage at p is the binomial probability of the outcomes whose interval
    # contains p: an exact sum, no Monte Carlo.
    intervals = [clopper_pearson(k, n) for k in range(n + 1)]
    lows = np.array([i.low for i in intervals])
    highs = np.array([i.high for i in intervals])
    ps = np.linspace(0.001, 0.999, 999)[:, np.newaxis]
    pmf = scipy_stats.binom.pmf(np.arange(n + 1), n, ps)
    coverage = (pmf * ((lows <= ps) & (ps <= highs))).sum(axis=1)
    assert coverage.min() >= 0.95 - 1e-12
    # Not vacuous: near some p the coverage comes close to the nominal level.
    assert coverage.min() < 0.98
