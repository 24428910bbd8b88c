"""Per-query ranking metrics over gain arrays, following trec_eval.

Every kernel takes ``(gains, ideal, k)`` as produced by
:func:`oloproof.metrics.relevance_gains`: ``gains[i]`` is the graded gain of the
unit at rank ``i + 1`` (0 if not relevant), ``ideal`` the grades of every judged
relevant unit of the query, retrieved or not. A unit is relevant when its grade is
above 0 (trec_eval's ``relevance_level`` 1 for integer grades).

nDCG uses **linear gain**: the gain of a unit is its grade itself, discounted by
``log2(rank + 1)``, and the ideal DCG is that of the top ``k`` of *all* judged
relevant units. This is trec_eval's ``ndcg_cut_k``. The exponential variant with
gain ``2**grade - 1`` (common in learning-to-rank code) gives different values on
graded judgements and is not used here.

When a query has no relevant unit the metrics are undefined and every kernel
raises :class:`~oloproof._exceptions.StatsError`; callers exclude such queries
(reason ``no_relevance_labels``) before calling. A ranking shorter than ``k`` is
fine: the missing ranks count as non-relevant.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics._spec import MetricSpec

__all__ = [
    "dcg_at_k",
    "hit_rate_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "ranked_metric",
    "recall_at_k",
    "reciprocal_rank_at_k",
]


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ConfigError(f"the cutoff k must be an integer >= 1, got {k!r}", field="k")
    return int(k)


def float_vector(values: ArrayLike, what: str) -> NDArray[np.float64]:
    """``values`` as a one-dimensional float array, or a StatsError naming ``what``."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise StatsError(f"{what} must be an array of numbers: {error}") from None
    if array.ndim != 1:
        raise StatsError(f"{what} must be one-dimensional, got shape {array.shape}")
    return array


def _as_gains(values: ArrayLike, what: str) -> NDArray[np.float64]:
    array = float_vector(values, what)
    if not np.all(np.isfinite(array)):
        raise StatsError(f"{what} must be finite")
    if np.any(array < 0.0):
        raise StatsError(f"{what} must not be negative")
    return array


def _prepare(
    gains: ArrayLike, ideal: ArrayLike, k: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    k = _check_k(k)
    gain_array = _as_gains(gains, "gains")
    ideal_array = _as_gains(ideal, "ideal")
    ideal_array = np.sort(ideal_array[ideal_array > 0.0])[::-1]
    if ideal_array.size == 0:
        raise StatsError(
            "the query has no relevant unit, so the metric is undefined "
            "(exclude it with reason 'no_relevance_labels')"
        )
    found = np.sort(gain_array[gain_array > 0.0])[::-1]
    if found.size > ideal_array.size or np.any(found > ideal_array[: found.size]):
        raise StatsError(
            "gains are not drawn from ideal: the retrieved relevant grades must be "
            "among the judged ones, each earned once"
        )
    return gain_array, ideal_array, k


def _discounts(n: int) -> NDArray[np.float64]:
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


def hit_rate_at_k(gains: ArrayLike, ideal: ArrayLike, k: int) -> float:
    """Whether a relevant unit appears in the top ``k`` (trec_eval ``success_k``).

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.

    Returns:
        1.0 if some unit in the top ``k`` has a positive gain, else 0.0.

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1.
    """
    gain_array, _, k = _prepare(gains, ideal, k)
    return 1.0 if np.any(gain_array[:k] > 0.0) else 0.0


def recall_at_k(gains: ArrayLike, ideal: ArrayLike, k: int) -> float:
    """Share of the relevant units found in the top ``k`` (trec_eval ``recall_k``).

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.

    Returns:
        ``|relevant units in top k| / |relevant units|``, in [0, 1].

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1.
    """
    gain_array, ideal_array, k = _prepare(gains, ideal, k)
    return float(np.count_nonzero(gain_array[:k] > 0.0)) / float(ideal_array.size)


def precision_at_k(gains: ArrayLike, ideal: ArrayLike, k: int) -> float:
    """Share of the top ``k`` ranks holding a relevant unit (trec_eval ``P_k``).

    The denominator is always ``k``, even when fewer than ``k`` units were
    retrieved, as in trec_eval.

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.

    Returns:
        ``|relevant units in top k| / k``, in [0, 1].

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1.
    """
    gain_array, _, k = _prepare(gains, ideal, k)
    return float(np.count_nonzero(gain_array[:k] > 0.0)) / float(k)


def reciprocal_rank_at_k(gains: ArrayLike, ideal: ArrayLike, k: int) -> float:
    """Reciprocal rank of the first relevant unit within the top ``k``.

    The per-query term of MRR@k; trec_eval's ``recip_rank`` on the run cut to ``k``.

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.

    Returns:
        ``1 / rank`` of the first unit with a positive gain if that rank is at most
        ``k``, else 0.0.

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1.
    """
    gain_array, _, k = _prepare(gains, ideal, k)
    hits = np.flatnonzero(gain_array[:k] > 0.0)
    return 1.0 / float(hits[0] + 1) if hits.size else 0.0


def dcg_at_k(gains: ArrayLike, k: int) -> float:
    """Discounted cumulative gain of the top ``k`` ranks, with linear gain.

    ``DCG@k = sum over ranks r <= k of gains[r - 1] / log2(r + 1)``.

    Args:
        gains: Per-rank gains, best rank first.
        k: Rank cutoff, an int >= 1.

    Returns:
        The DCG, 0.0 for an empty ranking.

    Raises:
        StatsError: If ``gains`` is not a one-dimensional array of finite,
            non-negative numbers.
        ConfigError: If ``k`` is not an int >= 1.
    """
    k = _check_k(k)
    top = _as_gains(gains, "gains")[:k]
    return float(np.dot(top, _discounts(top.size)))


def ndcg_at_k(gains: ArrayLike, ideal: ArrayLike, k: int) -> float:
    """Normalised DCG of the top ``k`` ranks (trec_eval ``ndcg_cut_k``).

    Linear gain: a unit's gain is its grade (not ``2**grade - 1``), discounted by
    ``log2(rank + 1)``. The normaliser is the DCG of the ``k`` highest grades among
    *all* judged relevant units, retrieved or not::

        nDCG@k = sum_{r<=k} g_r / log2(r + 1)  /  sum_{r<=k} g*_r / log2(r + 1)

    where ``g*`` is ``ideal`` sorted descending.

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.

    Returns:
        nDCG@k in [0, 1].

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1.
    """
    gain_array, ideal_array, k = _prepare(gains, ideal, k)
    top = gain_array[:k]
    best = ideal_array[:k]
    dcg = float(np.dot(top, _discounts(top.size)))
    idcg = float(np.dot(best, _discounts(best.size)))
    return dcg / idcg


_RANKED = {
    "hit_rate": hit_rate_at_k,
    "recall": recall_at_k,
    "precision": precision_at_k,
    "mrr": reciprocal_rank_at_k,
    "ndcg": ndcg_at_k,
}


def ranked_metric(spec: MetricSpec, gains: ArrayLike, ideal: ArrayLike) -> float:
    """Compute one of the trec_eval-style metrics named by ``spec``.

    Args:
        spec: A ``hit_rate``, ``recall``, ``precision``, ``mrr`` or ``ndcg`` spec.
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.

    Returns:
        The metric's per-query value (for ``mrr``, the reciprocal rank).

    Raises:
        ConfigError: If ``spec`` names a metric without a kernel here.
        StatsError: If the query has no relevant unit or the arrays are invalid.
    """
    kernel = _RANKED.get(spec.name)
    if kernel is None or spec.k is None:
        raise ConfigError(
            f"metric {str(spec)!r} is not a ranking metric; use one of "
            f"{', '.join(sorted(_RANKED))} with a cutoff",
            field="name",
        )
    return kernel(gains, ideal, spec.k)
