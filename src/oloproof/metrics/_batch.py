"""Many queries' gain arrays as one batch: what every ranking kernel reads.

A :class:`GainBatch` holds every query's per-rank gains as one zero-padded matrix
(row ``i`` is query ``i``, column ``j`` rank ``j + 1``) and the judged relevant
grades of every query in compressed rows (descending within a row). The kernels
of :mod:`oloproof.metrics._kernels` compute a metric for all rows at once; zero
padding changes nothing, as ranks past a ranking's end count as non-relevant.

Build a batch from unit ids and judgements with :func:`gain_batch` (what
:func:`~oloproof.metrics.relevance_gains` does for one query), from per-query
gain arrays with :func:`stack_gains`, or from one query's arrays with
:func:`one_query` (what the per-query functions do).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oloproof._exceptions import StatsError
from oloproof.metrics._checks import check_k, check_relevance_level, validated

__all__ = ["GainBatch", "gain_batch", "one_query", "stack_gains"]


@dataclass(frozen=True)
class GainBatch:
    """The gain arrays of many queries, ready for the batch kernels.

    Attributes:
        gains: ``(n, width)`` float matrix: ``gains[i, j]`` is the gain of query
            ``i``'s unit at rank ``j + 1``; 0 past the end of its ranking.
        ideal_values: Every query's positive judged grades, query after query,
            each query's in descending order.
        ideal_lengths: ``(n,)`` ints: how many of ``ideal_values`` each query has.
        depth: ``None`` when the rankings are whole; otherwise they were cut to
            their first ``depth`` ranks, and a metric that needs deeper ranks
            raises rather than read the missing ones as non-relevant.
    """

    gains: NDArray[np.float64]
    ideal_values: NDArray[np.float64]
    ideal_lengths: NDArray[np.int64]
    depth: int | None = None

    def __len__(self) -> int:
        return int(self.gains.shape[0])

    @functools.cached_property
    def _ideal_rows(self) -> NDArray[np.intp]:
        return np.repeat(np.arange(len(self), dtype=np.intp), self.ideal_lengths)

    def relevant_counts(self, relevance_level: float | None = None) -> NDArray[np.int64]:
        """How many judged units of each query are relevant at ``relevance_level``.

        Args:
            relevance_level: The lowest grade that counts; ``None``: any grade above 0.

        Raises:
            ConfigError: If ``relevance_level`` is invalid.
        """
        level = check_relevance_level(relevance_level)
        if level is None:
            return self.ideal_lengths.astype(np.int64, copy=True)
        rows = self._ideal_rows[self.ideal_values >= level]
        return np.bincount(rows, minlength=len(self)).astype(np.int64)

    def ideal_top(self, k: int) -> NDArray[np.float64]:
        """``(n, k)``: each query's ``k`` highest judged grades, descending, 0-padded."""
        k = check_k(k)
        starts = np.cumsum(self.ideal_lengths) - self.ideal_lengths
        positions = np.arange(self.ideal_values.size) - np.repeat(starts, self.ideal_lengths)
        keep = positions < k
        top = np.zeros((len(self), k), dtype=np.float64)
        top[self._ideal_rows[keep], positions[keep]] = self.ideal_values[keep]
        return top


def _padded(
    values: NDArray[np.float64], lengths: NDArray[np.int64], width: int
) -> NDArray[np.float64]:
    matrix = np.zeros((lengths.size, width), dtype=np.float64)
    rows = np.repeat(np.arange(lengths.size, dtype=np.intp), lengths)
    starts = np.cumsum(lengths) - lengths
    columns = np.arange(values.size) - np.repeat(starts, lengths)
    matrix[rows, columns] = values
    return matrix


def _check_depth(depth: int | None) -> int | None:
    return None if depth is None else check_k(depth)


def _bad_grade(judged: Mapping[str, object]) -> StatsError | None:
    for unit, grade in judged.items():
        if isinstance(grade, bool) or not isinstance(grade, int | float | np.number):
            return StatsError(f"grade of unit {unit!r} must be a number, got {grade!r}")
        if not math.isfinite(float(grade)):
            return StatsError(f"grade of unit {unit!r} must be finite, got {grade!r}")
    return None


_NUMBER_TYPES = frozenset({float, int})


def gain_batch(
    rankings: Sequence[Sequence[str]],
    grades: Sequence[Mapping[str, float]],
    *,
    depth: int | None = None,
) -> GainBatch:
    """The gain arrays of many queries from their rankings and judgements.

    Row ``i`` holds exactly what :func:`~oloproof.metrics.relevance_gains` returns
    for ``rankings[i]`` and ``grades[i]``: a unit earns its grade only at its
    first occurrence, grades of 0 or below give gain 0, unjudged units gain 0.

    Args:
        rankings: Per query, unit ids in rank order, best first.
        grades: Per query, the judged grade of each unit.
        depth: Keep only the first ``depth`` ranks of each ranking (what metrics
            at a cutoff ``k <= depth`` read); ``None`` keeps them whole.

    Returns:
        The batch, one row per query.

    Raises:
        StatsError: If the two sequences differ in length, a ranking is a single
            string, or a grade is not a finite number.
        ConfigError: If ``depth`` is not ``None`` or an int >= 1.
    """
    depth = _check_depth(depth)
    if len(rankings) != len(grades):
        raise StatsError(
            f"rankings and grades must have one entry per query, got {len(rankings)} "
            f"and {len(grades)}"
        )
    gains: list[float] = []
    lengths: list[int] = []
    every_grade: list[float] = []
    grade_counts: list[int] = []
    # A plain Python loop doing only dictionary look-ups, all at C speed (map);
    # everything numeric happens on the whole batch below.
    for index, (ranking, judged) in enumerate(zip(rankings, grades, strict=True)):
        if isinstance(ranking, str):
            raise StatsError(
                f"ranking {index} must be a sequence of unit ids, got a single string {ranking!r}"
            )
        values = judged.values()
        if not set(map(type, values)) <= _NUMBER_TYPES:
            error = _bad_grade(judged)
            if error is not None:
                raise error
        top = ranking if depth is None else ranking[:depth]
        if len(set(top)) == len(top):
            gains.extend(map(judged.get, top, repeat(0.0)))
        else:
            seen: set[str] = set()
            for unit in top:
                gains.append(0.0 if unit in seen else judged.get(unit, 0.0))
                seen.add(unit)
        lengths.append(len(top))
        every_grade.extend(values)
        grade_counts.append(len(values))
    grade_values = np.asarray(every_grade, dtype=np.float64)
    if not np.all(np.isfinite(grade_values)):
        first = int(np.flatnonzero(~np.isfinite(grade_values))[0])
        query = int(np.searchsorted(np.cumsum(grade_counts), first, side="right"))
        raise _bad_grade(grades[query]) or StatsError("grades must be finite")
    gain_values = np.asarray(gains, dtype=np.float64)
    # Judged non-relevant (grade <= 0) earns nothing, as in relevance_gains.
    gain_values[~(gain_values > 0.0)] = 0.0
    length_array = np.asarray(lengths, dtype=np.int64)
    width = int(length_array.max(initial=0))
    grade_rows = np.repeat(np.arange(len(grade_counts)), np.asarray(grade_counts, dtype=np.int64))
    positive = grade_values > 0.0
    ideal_values, ideal_rows = grade_values[positive], grade_rows[positive]
    ideal_values = ideal_values[np.lexsort((-ideal_values, ideal_rows))]
    ideal_length_array = np.bincount(ideal_rows, minlength=len(grade_counts)).astype(np.int64)
    return GainBatch(
        gains=_padded(gain_values, length_array, width),
        ideal_values=ideal_values,
        ideal_lengths=ideal_length_array,
        depth=depth,
    )


def stack_gains(
    pairs: Iterable[tuple[ArrayLike, ArrayLike]], *, depth: int | None = None
) -> GainBatch:
    """A batch from per-query ``(gains, ideal)`` arrays, each checked as the kernels do.

    Args:
        pairs: Per query, ``(gains, ideal)`` as :func:`relevance_gains` returns them.
        depth: Keep only the first ``depth`` ranks; ``None`` keeps them whole.

    Returns:
        The batch, one row per pair.

    Raises:
        StatsError: If a pair is invalid (the per-query kernels' checks) or has no
            relevant unit.
        ConfigError: If ``depth`` is not ``None`` or an int >= 1.
    """
    depth = _check_depth(depth)
    rows: list[NDArray[np.float64]] = []
    ideals: list[NDArray[np.float64]] = []
    for index, (gains, ideal) in enumerate(pairs):
        try:
            gain_array, ideal_array = validated(gains, ideal)
        except StatsError as error:
            raise StatsError(f"query {index}: {error}") from None
        rows.append(gain_array if depth is None else gain_array[:depth])
        ideals.append(ideal_array)
    lengths = np.asarray([row.size for row in rows], dtype=np.int64)
    width = int(lengths.max(initial=0))
    values = np.concatenate(rows) if rows else np.zeros(0)
    return GainBatch(
        gains=_padded(values, lengths, width),
        ideal_values=np.concatenate(ideals) if ideals else np.zeros(0),
        ideal_lengths=np.asarray([ideal.size for ideal in ideals], dtype=np.int64),
        depth=depth,
    )


def one_query(gains: ArrayLike, ideal: ArrayLike) -> GainBatch:
    """A batch of one query, from its ``(gains, ideal)`` arrays.

    Raises:
        StatsError: If the arrays are invalid (see :func:`validated`) or the query
            has no relevant unit.
    """
    gain_array, ideal_array = validated(gains, ideal)
    return GainBatch(
        gains=gain_array.reshape(1, -1),
        ideal_values=ideal_array,
        ideal_lengths=np.array([ideal_array.size], dtype=np.int64),
    )
