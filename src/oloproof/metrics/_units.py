"""From a ranked list of retrieved units and graded judgements to gain arrays.

A *unit* is whatever the caller judges relevance on: a document id, or a
``"doc_id#chunk_id"`` string when chunks are judged. The caller maps the retrieved
passages to units; this module only looks the units up in the judgements.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oloproof._exceptions import StatsError

__all__ = ["best_relevant_position", "relevance_gains"]


def relevance_gains(
    retrieved_units: Sequence[str], grades: Mapping[str, float]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Turn a ranking of units into per-rank gains and the ideal gain vector.

    A unit that occurs more than once in the ranking (for example two chunks of
    one document when the unit is the document) earns its grade only at its first,
    best-ranked occurrence. Later occurrences get gain 0 but keep their rank: they
    still occupy a slot, so they count against precision and push lower units down.
    This is what keeps recall at or below 1 and nDCG at or below 1.

    Grades of 0 or below mean "judged, not relevant" and give gain 0; such units do
    not appear in the ideal vector.

    Args:
        retrieved_units: Unit ids in rank order, best first.
        grades: The judged grade of each unit; units not in it are unjudged and get
            gain 0.

    Returns:
        ``(gains, ideal)``: ``gains[i]`` is the gain of the unit at rank ``i + 1``;
        ``ideal`` holds every positive grade in ``grades``, sorted descending,
        including relevant units that were never retrieved.

    Raises:
        StatsError: If ``retrieved_units`` is a single string rather than a sequence
            of them, or a grade is not a finite number.
    """
    if isinstance(retrieved_units, str):
        raise StatsError(
            "retrieved_units must be a sequence of unit ids, got a single string "
            f"{retrieved_units!r}"
        )
    checked: dict[str, float] = {}
    for unit, grade in grades.items():
        if isinstance(grade, bool) or not isinstance(grade, int | float | np.number):
            raise StatsError(f"grade of unit {unit!r} must be a number, got {grade!r}")
        value = float(grade)
        if not math.isfinite(value):
            raise StatsError(f"grade of unit {unit!r} must be finite, got {grade!r}")
        checked[unit] = value
    seen: set[str] = set()
    gains = np.zeros(len(retrieved_units), dtype=np.float64)
    for rank, unit in enumerate(retrieved_units):
        if unit in seen:
            continue
        seen.add(unit)
        grade = checked.get(unit, 0.0)
        if grade > 0.0:
            gains[rank] = grade
    positive = [g for g in checked.values() if g > 0.0]
    ideal = np.sort(np.asarray(positive, dtype=np.float64))[::-1].copy()
    return gains, ideal


def best_relevant_position(gains: ArrayLike) -> int | None:
    """The 1-based rank of the first unit with a positive gain.

    Args:
        gains: Per-rank gains, as returned by :func:`relevance_gains`.

    Returns:
        The rank, or ``None`` if no gain is positive.

    Raises:
        StatsError: If ``gains`` is not one-dimensional.
    """
    array = np.asarray(gains, dtype=np.float64)
    if array.ndim != 1:
        raise StatsError(f"gains must be one-dimensional, got shape {array.shape}")
    hits = np.flatnonzero(array > 0.0)
    return int(hits[0]) + 1 if hits.size else None
