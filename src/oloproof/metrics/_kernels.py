"""The ranking metrics, one numpy kernel each, over a :class:`GainBatch`.

Each kernel computes its metric for every query (row) of a batch with a handful
of numpy operations and returns one value per row; the per-query functions of
:mod:`oloproof.metrics._per_query` call the same kernel on a batch of one, so a
value never depends on how many queries were computed with it.

Sums run rank by rank, in rank order, as trec_eval accumulates them; the DCG
discount comes from one table (:func:`log2_ranks`) and exponential gains from
one grade-by-grade computation (:func:`exponential_gains`), so every value is
the same bit for bit wherever it is computed.

A row without a relevant unit makes every kernel raise
:class:`~oloproof._exceptions.StatsError`, naming the row.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import NDArray

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics._batch import GainBatch
from oloproof.metrics._checks import (
    UNDERFLOW,
    Gain,
    check_gain,
    check_k,
    check_relevance_level,
    no_relevant,
)
from oloproof.metrics._spec import MetricSpec

__all__ = [
    "RANKED_METRICS",
    "average_precision_at_k_batch",
    "check_ranked",
    "dcg_rows",
    "exponential_gains",
    "hit_rate_at_k_batch",
    "log2_ranks",
    "ndcg_at_k_batch",
    "precision_at_k_batch",
    "r_precision_batch",
    "ranked_metric_batch",
    "recall_at_k_batch",
    "reciprocal_rank_at_k_batch",
]

_LOG2_RANKS = np.log2(np.arange(2, 258, dtype=np.float64))


def log2_ranks(n: int) -> NDArray[np.float64]:
    """``log2(rank + 1)`` for ranks ``1..n``: the DCG discount's divisors.

    One table, grown on demand, serves every kernel, so every DCG divides by the
    very same numbers.
    """
    global _LOG2_RANKS
    if n > _LOG2_RANKS.size:
        size = max(n, 2 * _LOG2_RANKS.size)
        _LOG2_RANKS = np.log2(np.arange(2, size + 2, dtype=np.float64))
    return _LOG2_RANKS[:n]


def exponential_gains(grades: NDArray[np.float64]) -> NDArray[np.float64]:
    """``2**grade - 1``, elementwise, any shape (0 stays 0, integer grades are exact)."""
    # numpy's exp2 can differ in the last bit between its vectorised loop and the
    # short tail of an array, so a value would depend on its neighbours: compute
    # each distinct grade once, with Python's pow, for every caller alike.
    values, inverse = np.unique(grades, return_inverse=True)
    table = np.array([2.0**value - 1.0 for value in values.tolist()], dtype=np.float64)
    return table[inverse].reshape(np.shape(grades))


def _row(batch: GainBatch, row: int) -> str:
    # A batch of one is one query's own call: its errors read as that query's.
    return "" if len(batch) == 1 else f"query {row} of the batch: "



def _top(batch: GainBatch, k: int) -> NDArray[np.float64]:
    if batch.depth is not None and k > batch.depth:
        raise ConfigError(
            f"the batch holds only the first {batch.depth} ranks of each ranking; "
            f"a cutoff of {k} needs more",
            field="k",
        )
    return batch.gains[:, :k]


def _relevant_counts(batch: GainBatch, level: float | None) -> NDArray[np.int64]:
    counts = batch.relevant_counts(level)
    empty = np.flatnonzero(counts == 0)
    if empty.size and len(batch) == 1:
        raise StatsError(no_relevant(level))
    if empty.size:
        at = "" if level is None else f" at relevance_level {level:g}"
        raise StatsError(
            f"query {int(empty[0])} of the batch ({empty.size} in all) has no relevant "
            f"unit{at}, so the metric is undefined (exclude it with reason "
            "'no_relevance_labels')"
        )
    return counts


def _binary(
    batch: GainBatch, k: int | None, level: float | None
) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    level = check_relevance_level(level)
    counts = _relevant_counts(batch, level)
    top = batch.gains if k is None else _top(batch, k)
    relevant = top > 0.0 if level is None else top >= level
    return relevant, counts


def _ranked_sums(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    # Column by column, in rank order: each row adds rank by rank, left to right.
    total = np.zeros(matrix.shape[0], dtype=np.float64)
    for column in range(matrix.shape[1]):
        total += matrix[:, column]
    return total


def hit_rate_at_k_batch(
    batch: GainBatch, k: int, *, relevance_level: float | None = None
) -> NDArray[np.float64]:
    """The metric :func:`~oloproof.metrics.hit_rate_at_k` defines, for every query of ``batch``.

    Args:
        batch: The queries' gains.
        k: Rank cutoff, an int >= 1.
        relevance_level: The lowest grade that counts as relevant; ``None``: any
            grade above 0.

    Returns:
        ``(n,)`` values, one per query.

    Raises:
        StatsError: If a query has no relevant unit.
        ConfigError: If ``k`` or ``relevance_level`` is invalid, or ``k`` exceeds
            the batch's depth.
    """
    relevant, _ = _binary(batch, check_k(k), relevance_level)
    # numpy types any(axis=...) as a scalar or an array; on a 2-D array it is an array.
    return cast(NDArray[np.bool_], relevant.any(axis=1)).astype(np.float64)


def recall_at_k_batch(
    batch: GainBatch, k: int, *, relevance_level: float | None = None
) -> NDArray[np.float64]:
    """The metric :func:`~oloproof.metrics.recall_at_k` defines, for every query of ``batch``.

    Args, returns and raises as :func:`hit_rate_at_k_batch`.
    """
    relevant, counts = _binary(batch, check_k(k), relevance_level)
    return np.count_nonzero(relevant, axis=1) / counts


def precision_at_k_batch(
    batch: GainBatch, k: int, *, relevance_level: float | None = None
) -> NDArray[np.float64]:
    """The metric :func:`~oloproof.metrics.precision_at_k` defines, for every query of ``batch``.

    Args, returns and raises as :func:`hit_rate_at_k_batch`.
    """
    k = check_k(k)
    relevant, _ = _binary(batch, k, relevance_level)
    return np.count_nonzero(relevant, axis=1) / float(k)


def reciprocal_rank_at_k_batch(
    batch: GainBatch, k: int, *, relevance_level: float | None = None
) -> NDArray[np.float64]:
    """The metric :func:`~oloproof.metrics.reciprocal_rank_at_k` defines, for every query of ``batch``.

    Args, returns and raises as :func:`hit_rate_at_k_batch`.
    """
    relevant, _ = _binary(batch, check_k(k), relevance_level)
    if relevant.shape[1] == 0:
        return np.zeros(relevant.shape[0], dtype=np.float64)
    first = np.argmax(relevant, axis=1).astype(np.float64)
    return np.where(relevant.any(axis=1), 1.0 / (first + 1.0), 0.0)


def average_precision_at_k_batch(
    batch: GainBatch, k: int, *, relevance_level: float | None = None
) -> NDArray[np.float64]:
    """The metric :func:`~oloproof.metrics.average_precision_at_k` defines, for every query of ``batch``.

    Args, returns and raises as :func:`hit_rate_at_k_batch`.
    """
    relevant, counts = _binary(batch, check_k(k), relevance_level)
    ranks = np.arange(1, relevant.shape[1] + 1, dtype=np.float64)
    precisions = np.where(relevant, np.cumsum(relevant, axis=1, dtype=np.float64) / ranks, 0.0)
    return _ranked_sums(precisions) / counts


def r_precision_batch(
    batch: GainBatch, *, relevance_level: float | None = None
) -> NDArray[np.float64]:
    """The metric :func:`~oloproof.metrics.r_precision` defines, for every query of ``batch``.

    Args:
        batch: The queries' gains; a cut batch must reach every query's ``R``.
        relevance_level: The lowest grade that counts as relevant; ``None``: any
            grade above 0.

    Returns:
        ``(n,)`` values, one per query.

    Raises:
        StatsError: If a query has no relevant unit.
        ConfigError: If ``relevance_level`` is invalid, or a query's ``R``
            exceeds the batch's depth.
    """
    relevant, counts = _binary(batch, None, relevance_level)
    deepest = int(counts.max(initial=0))
    if batch.depth is not None and deepest > batch.depth:
        raise ConfigError(
            f"the batch holds only the first {batch.depth} ranks of each ranking; "
            f"R-precision of a query with {deepest} relevant units needs more",
            field="depth",
        )
    within = np.arange(relevant.shape[1])[None, :] < counts[:, None]
    return np.count_nonzero(relevant & within, axis=1) / counts


def ndcg_at_k_batch(batch: GainBatch, k: int, *, gain: Gain = "linear") -> NDArray[np.float64]:
    """The metric :func:`~oloproof.metrics.ndcg_at_k` defines, for every query of ``batch``.

    Args:
        batch: The queries' gains.
        k: Rank cutoff, an int >= 1.
        gain: ``linear`` (the grade) or ``exponential`` (``2**grade - 1``).

    Returns:
        ``(n,)`` values, one per query.

    Raises:
        StatsError: If a query has no relevant unit.
        ConfigError: If ``k`` or ``gain`` is invalid, or ``k`` exceeds the
            batch's depth.
    """
    k = check_k(k)
    check_gain(gain)
    _relevant_counts(batch, None)
    top = _top(batch, k)
    best = batch.ideal_top(k)
    dcg, idcg = dcg_rows(top, gain), dcg_rows(best, gain)
    zero = np.flatnonzero(idcg == 0.0)
    if zero.size:
        raise StatsError(f"{_row(batch, int(zero[0]))}{UNDERFLOW}")
    return dcg / idcg


def dcg_rows(gains: NDArray[np.float64], gain: Gain = "linear") -> NDArray[np.float64]:
    """The discounted cumulative gain of each row of a ``(n, ranks)`` gain matrix.

    ``DCG = sum over ranks r of g(gains[r - 1]) / log2(r + 1)``, with ``g(x) = x``
    (linear) or ``2**x - 1`` (exponential).

    Raises:
        ConfigError: If ``gain`` is unknown.
    """
    check_gain(gain)
    if gain == "exponential":
        gains = exponential_gains(gains)
    return _ranked_sums(gains / log2_ranks(gains.shape[1]))


def ranked_metric_batch(
    spec: MetricSpec,
    batch: GainBatch,
    *,
    relevance_level: float | None = None,
    gain: Gain = "linear",
) -> NDArray[np.float64]:
    """The metric :func:`~oloproof.metrics.ranked_metric` defines, for every query of ``batch``.

    Args:
        spec: A ``hit_rate``, ``recall``, ``precision``, ``mrr``, ``map`` or
            ``ndcg`` spec with a cutoff, or ``r_precision``.
        batch: The queries' gains.
        relevance_level: For the binary metrics (all but ``ndcg``).
        gain: For ``ndcg``.

    Returns:
        ``(n,)`` values, one per query.

    Raises:
        ConfigError: As :func:`~oloproof.metrics.ranked_metric`, or if the cutoff
            exceeds the batch's depth.
        StatsError: If a query has no relevant unit.
    """
    check_ranked(spec, relevance_level=relevance_level, gain=gain)
    if spec.name == "ndcg":
        return ndcg_at_k_batch(batch, spec.k, gain=gain)  # type: ignore[arg-type]
    if spec.name == "r_precision":
        return r_precision_batch(batch, relevance_level=relevance_level)
    kernel = _BATCH_AT_K[spec.name]
    return kernel(batch, spec.k, relevance_level=relevance_level)  # type: ignore[arg-type]


def check_ranked(spec: MetricSpec, *, relevance_level: float | None, gain: str) -> None:
    """Refuse a spec :func:`ranked_metric_batch` has no kernel for, or a misplaced option.

    Raises:
        ConfigError: As :func:`ranked_metric_batch` documents.
    """
    if spec.name not in RANKED_METRICS:
        raise ConfigError(
            f"metric {str(spec)!r} is not a ranking metric; use one of "
            f"{', '.join(sorted(RANKED_METRICS))}",
            field="name",
        )
    check_relevance_level(relevance_level)
    check_gain(gain)
    if spec.name == "ndcg" and relevance_level is not None:
        raise ConfigError(
            "ndcg uses graded gains and takes no relevance_level", field="relevance_level"
        )
    if spec.name != "ndcg" and gain != "linear":
        raise ConfigError(f"{spec.name} is a binary metric and takes no gain", field="gain")


_BATCH_AT_K = {
    "hit_rate": hit_rate_at_k_batch,
    "recall": recall_at_k_batch,
    "precision": precision_at_k_batch,
    "mrr": reciprocal_rank_at_k_batch,
    "map": average_precision_at_k_batch,
}
#: Every metric :func:`ranked_metric_batch` computes.
RANKED_METRICS: frozenset[str] = frozenset({*_BATCH_AT_K, "ndcg", "r_precision"})
