"""Variance components of repeated samples: between cases, within them, and what helps more."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof import stats
from oloproof.stats import variance_components


def test_samples_that_agree_within_each_case_leave_nothing_for_repeats():
    share = variance_components([[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]])
    assert share is not None
    assert (share.within, share.within_share) == (0.0, 0.0)
    assert math.isinf(share.case_over_repeat(3))


def test_cases_that_differ_only_by_chance_are_all_within():
    share = variance_components([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    assert share is not None and share.between == 0.0 and share.within_share == 1.0


def test_the_components_are_recovered_from_a_large_seeded_sample():
    rng = np.random.default_rng(7)
    values = rng.normal(0.0, 0.2, size=4000)  # between-case SD 0.2: b = 0.04
    samples = [list(value + rng.normal(0.0, 0.4, size=5)) for value in values]  # within SD 0.4: w = 0.16
    share = variance_components(samples)
    assert share is not None
    assert share.between == pytest.approx(0.04, rel=0.1) and share.within == pytest.approx(0.16, rel=0.05)
    assert share.repeats == 5.0
    # V(n, r) = (b + w / r) / n: per generation, a case buys (b + w/r)(r + 1)n / ((n + 1) w) times a repeat.
    assert share.case_over_repeat(4000) == pytest.approx((0.04 + 0.16 / 5) * 6 * 4000 / (4001 * 0.16), rel=0.1)


def test_too_little_to_split_is_none():
    assert variance_components([[1.0, 0.0]]) is None  # one case
    assert variance_components([[1.0], [0.0]]) is None  # no case of two samples


@pytest.mark.parametrize(("rate", "repeats"), [(0.2, 5), (0.5, 5), (0.5, 10), (0.9, 3)])
def test_two_samples_of_one_rate_are_called_different_at_most_at_the_stated_level(rate, repeats):
    rng = np.random.default_rng(int(rate * 100) + repeats)
    draws = rng.binomial(repeats, rate, size=(4000, 2))
    called = np.mean([stats.rates_differ(int(a), repeats, int(b), repeats) for a, b in draws])
    assert called <= stats.RATES_DIFFER_LEVEL  # Fisher's test is conservative at few repeats


def test_a_failure_that_turns_into_a_pass_at_five_repeats_is_told_apart():
    assert stats.rates_differ(5, 5, 0, 5)
    assert stats.rates_differ(4, 5, 0, 5)
    assert not stats.rates_differ(3, 5, 0, 5)
    assert not stats.rates_differ(1, 1, 0, 1)  # one sample each can never tell
    assert not stats.rates_differ(0, 0, 0, 5)
