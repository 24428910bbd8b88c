"""The checks every ranking metric makes of its arguments, in one place.

Options (``k``, ``relevance_level``, ``gain``) raise
:class:`~oloproof._exceptions.ConfigError` naming the option; arrays raise
:class:`~oloproof._exceptions.StatsError`.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oloproof._exceptions import ConfigError, StatsError

__all__ = [
    "GAINS",
    "NO_RELEVANT",
    "UNDERFLOW",
    "Gain",
    "as_gains",
    "check_gain",
    "check_k",
    "check_relevance_level",
    "float_vector",
    "no_relevant",
    "validated",
]

Gain = Literal["linear", "exponential"]
"""How a grade becomes a gain in DCG: the grade itself, or ``2**grade - 1``."""

GAINS: tuple[str, ...] = ("linear", "exponential")

NO_RELEVANT = (
    "the query has no relevant unit, so the metric is undefined "
    "(exclude it with reason 'no_relevance_labels')"
)
"""Why a metric of a query without a relevant unit is undefined."""

UNDERFLOW = (
    "every relevant grade is so close to 0 that its exponential gain 2**grade - 1 "
    "is 0, so nDCG is undefined"
)
"""Why nDCG is undefined although a unit is relevant: ``2**grade - 1`` is 0."""


def no_relevant(level: float | None) -> str:
    """:data:`NO_RELEVANT`, saying which ``relevance_level`` no grade reaches."""
    if level is None:
        return NO_RELEVANT
    return f"{NO_RELEVANT[:-1]}; none reaches relevance_level {level:g})"


def check_k(k: int) -> int:
    """``k`` as an int, or a ConfigError (``field="k"``) unless it is an int >= 1."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ConfigError(f"the cutoff k must be an integer >= 1, got {k!r}", field="k")
    return int(k)


def check_relevance_level(level: float | None) -> float | None:
    """``level`` as a float, or a ConfigError unless it is ``None`` or a finite number > 0."""
    if level is None:
        return None
    if (
        isinstance(level, bool)
        or not isinstance(level, int | float | np.integer | np.floating)
        or not math.isfinite(level)
        or level <= 0
    ):
        raise ConfigError(
            f"relevance_level must be a number above 0, got {level!r}", field="relevance_level"
        )
    return float(level)


def check_gain(gain: str) -> str:
    """``gain`` itself, or a ConfigError unless it is ``linear`` or ``exponential``."""
    if gain not in GAINS:
        raise ConfigError(
            f"gain must be one of {', '.join(GAINS)}, got {gain!r}", field="gain"
        )
    return gain


def float_vector(values: ArrayLike, what: str) -> NDArray[np.float64]:
    """``values`` as a one-dimensional float array, or a StatsError naming ``what``."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise StatsError(f"{what} must be an array of numbers: {error}") from None
    if array.ndim != 1:
        raise StatsError(f"{what} must be one-dimensional, got shape {array.shape}")
    return array


def as_gains(values: ArrayLike, what: str) -> NDArray[np.float64]:
    """``values`` as a one-dimensional array of finite gains >= 0, or a StatsError."""
    array = float_vector(values, what)
    if not np.all(np.isfinite(array)):
        raise StatsError(f"{what} must be finite")
    if np.any(array < 0.0):
        raise StatsError(f"{what} must not be negative")
    return array


def validated(
    gains: ArrayLike, ideal: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One query's gains, and its positive ideal grades sorted descending (contiguous).

    Raises:
        StatsError: If an array is invalid, the query has no relevant unit, or the
            gains are not drawn from ``ideal``.
    """
    gain_array = as_gains(gains, "gains")
    ideal_array = as_gains(ideal, "ideal")
    ideal_array = np.ascontiguousarray(np.sort(ideal_array[ideal_array > 0.0])[::-1])
    if ideal_array.size == 0:
        raise StatsError(NO_RELEVANT)
    found = np.sort(gain_array[gain_array > 0.0])[::-1]
    if found.size > ideal_array.size or np.any(found > ideal_array[: found.size]):
        raise StatsError(
            "gains are not drawn from ideal: the retrieved relevant grades must be "
            "among the judged ones, each earned once"
        )
    return gain_array, ideal_array
