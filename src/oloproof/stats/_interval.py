"""The interval type shared by every statistic, and its outward rounding."""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

from oloproof._exceptions import StatsError

__all__ = ["Interval", "format_percent_interval", "format_score_interval", "round_outward"]

# Scaled values within this distance of an integer count as that integer, so that
# 0.91 (stored as 0.91000000000000003) is not ceiled to 0.911 by round-off.
_ROUNDING_SLACK = 1e-9


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval.

    Attributes:
        low: Lower bound.
        high: Upper bound, at least ``low``.
        confidence: Nominal coverage in (0, 1), e.g. ``0.95``.
        method: Human-readable name of the method that produced the interval.
    """

    low: float
    high: float
    confidence: float
    method: str

    def __post_init__(self) -> None:
        low, high, confidence = float(self.low), float(self.high), float(self.confidence)
        if not (math.isfinite(low) and math.isfinite(high)):
            raise StatsError(f"interval bounds must be finite, got [{low}, {high}]")
        if low > high:
            raise StatsError(f"interval low {low} is above high {high}")
        if not 0.0 < confidence < 1.0:
            raise StatsError(f"confidence must be in (0, 1), got {confidence}")
        # Store plain floats so numpy scalars never leak into reports or JSON.
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "confidence", confidence)

    @property
    def width(self) -> float:
        """The length ``high - low``."""
        return self.high - self.low


def round_outward(interval: Interval, decimals: int) -> Interval:
    """Round an interval outward so that the rounded one contains the original.

    The lower bound is floored and the upper bound ceiled at ``decimals`` decimal
    places. A bound that already sits on that grid (up to floating-point noise)
    is kept as it is: ``0.91`` stays ``0.91`` at 2 or 3 decimals.

    Args:
        interval: The interval to round.
        decimals: Number of decimal places to keep, at least 0.

    Returns:
        A new interval with the same confidence and method.

    Raises:
        StatsError: If ``decimals`` is not a non-negative integer.
    """
    try:
        places = operator.index(decimals)
    except TypeError:
        raise StatsError(f"decimals must be an integer, got {decimals!r}") from None
    if places < 0:
        raise StatsError(f"decimals must be at least 0, got {places}")
    scale = 10.0**places
    low = math.floor(interval.low * scale + _ROUNDING_SLACK) / scale
    high = math.ceil(interval.high * scale - _ROUNDING_SLACK) / scale
    # round() strips the representation noise the division leaves behind; adding
    # 0.0 turns a -0.0 into 0.0 so it never prints as "-0.0".
    return Interval(
        low=round(low, places) + 0.0,
        high=round(high, places) + 0.0,
        confidence=interval.confidence,
        method=interval.method,
    )


def format_percent_interval(interval: Interval) -> str:
    """Format an interval of fractions as percentages, rounded outward to 0.1 point.

    Args:
        interval: Bounds as fractions (``0.385`` means 38.5%).

    Returns:
        A string such as ``"[38.5%, 91.0%]"``.
    """
    rounded = round_outward(interval, 3)
    return f"[{rounded.low * 100:.1f}%, {rounded.high * 100:.1f}%]"


def format_score_interval(interval: Interval) -> str:
    """Format an interval of scores with 3 decimals, rounded outward.

    Args:
        interval: Bounds on the score scale (e.g. nDCG in [0, 1]).

    Returns:
        A string such as ``"[0.506, 0.990]"``.
    """
    rounded = round_outward(interval, 3)
    return f"[{rounded.low:.3f}, {rounded.high:.3f}]"
