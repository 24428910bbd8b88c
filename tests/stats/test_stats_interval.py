"""Interval type, outward rounding and formatting."""

from __future__ import annotations

import pytest

from oloproof._exceptions import StatsError
from oloproof.stats import Interval, format_percent_interval, format_score_interval, round_outward


def _interval(low: float, high: float) -> Interval:
    return Interval(low=low, high=high, confidence=0.95, method="test")


def test_round_outward_floors_low_and_ceils_high() -> None:
    rounded = round_outward(_interval(0.38571, 0.90903), 3)
    assert (rounded.low, rounded.high) == (0.385, 0.910)
    assert rounded.confidence == 0.95
    assert rounded.method == "test"


def test_round_outward_keeps_values_already_on_the_grid() -> None:
    # 0.91 * 1000 is 910.0000000000001 in binary floating point.
    rounded = round_outward(_interval(0.91, 0.91), 3)
    assert (rounded.low, rounded.high) == (0.91, 0.91)
    assert round_outward(_interval(0.1 + 0.2, 0.7), 1).low == 0.3


def test_round_outward_handles_negative_bounds() -> None:
    rounded = round_outward(_interval(-0.33601, 0.33601), 3)
    assert (rounded.low, rounded.high) == (-0.337, 0.337)


def test_round_outward_rejects_bad_decimals() -> None:
    with pytest.raises(StatsError):
        round_outward(_interval(0.1, 0.2), -1)
    with pytest.raises(StatsError):
        round_outward(_interval(0.1, 0.2), 1.5)  # type: ignore[arg-type]


def test_formats() -> None:
    assert format_percent_interval(_interval(0.385711, 0.909697)) == "[38.5%, 91.0%]"
    assert format_percent_interval(_interval(0.0, 1.0)) == "[0.0%, 100.0%]"
    assert format_percent_interval(_interval(-0.0000001, 0.0)) == "[-0.1%, 0.0%]"
    assert format_score_interval(_interval(0.50649, 0.98912)) == "[0.506, 0.990]"
    assert format_score_interval(_interval(0.99, 1.0)) == "[0.990, 1.000]"


@pytest.mark.parametrize(
    ("low", "high", "confidence"),
    [(0.6, 0.5, 0.95), (0.1, float("nan"), 0.95), (0.1, 0.2, 1.0), (0.1, 0.2, 0.0)],
)
def test_interval_rejects_invalid_fields(low: float, high: float, confidence: float) -> None:
    with pytest.raises(StatsError):
        Interval(low=low, high=high, confidence=confidence, method="test")


def test_interval_is_frozen_and_has_width() -> None:
    interval = _interval(0.25, 0.75)
    assert interval.width == 0.5
    with pytest.raises(AttributeError):
        interval.low = 0.0  # type: ignore[misc]
