"""Input checks shared by the statistics; each raises StatsError, never asserts."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable

import numpy as np

from oloproof._exceptions import StatsError

# Values this far outside [0, 1] are treated as round-off (e.g. 1.0000000000000002
# from a metric's arithmetic) and clipped; anything further out is an error.
UNIT_TOLERANCE = 1e-12


def check_confidence(confidence: float, name: str = "confidence") -> float:
    """Return ``confidence`` as a float, or raise if it is not in (0, 1)."""
    try:
        level = float(confidence)
    except (TypeError, ValueError):
        raise StatsError(f"{name} must be a number in (0, 1), got {confidence!r}") from None
    if not 0.0 < level < 1.0:
        raise StatsError(f"{name} must be in (0, 1), got {confidence!r}")
    return level


def check_int(value: int, name: str, minimum: int) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= ``minimum``."""
    if isinstance(value, bool):
        raise StatsError(f"{name} must be an integer, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise StatsError(f"{name} must be an integer, got {value!r}") from None
    if number < minimum:
        raise StatsError(f"{name} must be at least {minimum}, got {number}")
    return number


def check_finite(value: float, name: str) -> float:
    """Return ``value`` as a float, or raise if it is not a finite number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise StatsError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise StatsError(f"{name} must be finite, got {value!r}")
    return number


def check_unit_values(values: Iterable[float], name: str = "values") -> np.ndarray:
    """Return a 1-D float array of values in [0, 1], or raise.

    Raises:
        StatsError: If the input is empty, not one-dimensional, not numeric,
            contains NaN, or has a value outside [0, 1] by more than round-off.
    """
    if isinstance(values, (str, bytes)):
        raise StatsError(f"{name} must be a sequence of numbers in [0, 1], got a string")
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise StatsError(f"{name} must be a sequence of numbers in [0, 1]") from None
    if array.ndim != 1:
        raise StatsError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size == 0:
        raise StatsError(f"{name} must not be empty")
    if np.isnan(array).any():
        raise StatsError(f"{name} must not contain NaN")
    low, high = float(array.min()), float(array.max())
    if low < -UNIT_TOLERANCE or high > 1.0 + UNIT_TOLERANCE:
        raise StatsError(f"{name} must lie in [0, 1], got values in [{low}, {high}]")
    return np.clip(array, 0.0, 1.0)
