"""Per-query ranking metrics over gain arrays, following trec_eval.

Every kernel takes ``(gains, ideal, k)`` as produced by
:func:`oloproof.metrics.relevance_gains`: ``gains[i]`` is the graded gain of the
unit at rank ``i + 1`` (0 if not relevant), ``ideal`` the grades of every judged
relevant unit of the query, retrieved or not (:func:`r_precision` takes no ``k``).

**Binary metrics** (hit rate, recall, precision, reciprocal rank, average
precision, R-precision) count a unit as relevant when its grade reaches
``relevance_level``, trec_eval's ``-l`` (``grade >= relevance_level``, both for the
retrieved units and for the number of relevant units). The default ``None`` counts
every grade above 0, which is trec_eval's default ``-l 1`` on integer grades and
also keeps fractional grades such as 0.5 relevant.

**nDCG** uses graded gains and ignores ``relevance_level``, as trec_eval does. With
the default ``gain="linear"`` a unit's gain is its grade, discounted by
``log2(rank + 1)``, and the ideal DCG is that of the top ``k`` of *all* judged
relevant units: trec_eval's ``ndcg_cut_k``. ``gain="exponential"`` uses
``2**grade - 1`` instead (Burges et al., common in learning-to-rank code); it gives
different values on graded judgements.

Each function is the metric's one kernel (:mod:`oloproof.metrics._kernels`) on a
batch of one query, so a query's value is the same whether it is computed alone
or with others.

When a query has no relevant unit the metrics are undefined and every kernel
raises :class:`~oloproof._exceptions.StatsError`; callers exclude such queries
(reason ``no_relevance_labels``) before calling. A ranking shorter than ``k`` is
fine: the missing ranks count as non-relevant.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oloproof.metrics._batch import GainBatch, one_query
from oloproof.metrics._checks import Gain, as_gains, check_gain, check_k, check_relevance_level
from oloproof.metrics._kernels import (
    average_precision_at_k_batch,
    check_ranked,
    dcg_rows,
    hit_rate_at_k_batch,
    ndcg_at_k_batch,
    precision_at_k_batch,
    r_precision_batch,
    ranked_metric_batch,
    recall_at_k_batch,
    reciprocal_rank_at_k_batch,
)
from oloproof.metrics._spec import MetricSpec

__all__ = [
    "average_precision_at_k",
    "dcg_at_k",
    "hit_rate_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "r_precision",
    "ranked_metric",
    "recall_at_k",
    "reciprocal_rank_at_k",
]

BinaryKernel = Callable[..., NDArray[np.float64]]


def _binary(
    kernel: BinaryKernel, gains: ArrayLike, ideal: ArrayLike, k: int, level: float | None
) -> float:
    """A binary metric's kernel on the batch of one query."""
    check_relevance_level(level)
    batch: GainBatch = one_query(gains, ideal)
    return float(kernel(batch, k, relevance_level=level)[0])



def hit_rate_at_k(
    gains: ArrayLike, ideal: ArrayLike, k: int, *, relevance_level: float | None = None
) -> float:
    """Whether a relevant unit appears in the top ``k`` (trec_eval ``success_k``).

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.
        relevance_level: The lowest grade that counts as relevant; ``None``: any
            grade above 0.

    Returns:
        1.0 if some unit in the top ``k`` is relevant, else 0.0.

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1 or ``relevance_level`` is invalid.
    """
    k = check_k(k)
    return _binary(hit_rate_at_k_batch, gains, ideal, k, relevance_level)



def recall_at_k(
    gains: ArrayLike, ideal: ArrayLike, k: int, *, relevance_level: float | None = None
) -> float:
    """Share of the relevant units found in the top ``k`` (trec_eval ``recall_k``).

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.
        relevance_level: The lowest grade that counts as relevant; ``None``: any
            grade above 0.

    Returns:
        ``|relevant units in top k| / |relevant units|``, in [0, 1].

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1 or ``relevance_level`` is invalid.
    """
    k = check_k(k)
    return _binary(recall_at_k_batch, gains, ideal, k, relevance_level)



def precision_at_k(
    gains: ArrayLike, ideal: ArrayLike, k: int, *, relevance_level: float | None = None
) -> float:
    """Share of the top ``k`` ranks holding a relevant unit (trec_eval ``P_k``).

    The denominator is always ``k``, even when fewer than ``k`` units were
    retrieved, as in trec_eval.

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.
        relevance_level: The lowest grade that counts as relevant; ``None``: any
            grade above 0.

    Returns:
        ``|relevant units in top k| / k``, in [0, 1].

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1 or ``relevance_level`` is invalid.
    """
    k = check_k(k)
    return _binary(precision_at_k_batch, gains, ideal, k, relevance_level)



def reciprocal_rank_at_k(
    gains: ArrayLike, ideal: ArrayLike, k: int, *, relevance_level: float | None = None
) -> float:
    """Reciprocal rank of the first relevant unit within the top ``k``.

    The per-query term of MRR@k; trec_eval's ``recip_rank`` on the run cut to ``k``.

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.
        relevance_level: The lowest grade that counts as relevant; ``None``: any
            grade above 0.

    Returns:
        ``1 / rank`` of the first relevant unit if that rank is at most ``k``,
        else 0.0.

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1 or ``relevance_level`` is invalid.
    """
    k = check_k(k)
    return _binary(reciprocal_rank_at_k_batch, gains, ideal, k, relevance_level)



def average_precision_at_k(
    gains: ArrayLike, ideal: ArrayLike, k: int, *, relevance_level: float | None = None
) -> float:
    """Average precision of the top ``k`` ranks (trec_eval ``map_cut_k``).

    The precision at each rank ``r <= k`` that holds a relevant unit, summed and
    divided by the number of *all* relevant units of the query (not by ``k`` nor by
    the number found), so relevant units never retrieved within ``k`` count as 0::

        AP@k = sum_{r <= k, rel(r)} (|relevant in top r| / r)  /  |relevant|

    The mean over queries is MAP@k.

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.
        relevance_level: The lowest grade that counts as relevant; ``None``: any
            grade above 0.

    Returns:
        AP@k in [0, 1].

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1 or ``relevance_level`` is invalid.
    """
    k = check_k(k)
    return _binary(average_precision_at_k_batch, gains, ideal, k, relevance_level)



def r_precision(
    gains: ArrayLike, ideal: ArrayLike, *, relevance_level: float | None = None
) -> float:
    """Precision at rank ``R``, the number of relevant units (trec_eval ``Rprec``).

    It takes no cutoff: each query is cut at its own ``R``. The denominator is
    ``R`` even when fewer than ``R`` units were retrieved, as in trec_eval. At that
    rank precision equals recall, so a perfect ranking scores 1.

    Args:
        gains: Per-rank gains, best rank first; only the first ``R`` matter.
        ideal: Grades of every judged relevant unit of the query.
        relevance_level: The lowest grade that counts as relevant (for the units
            found and for ``R``); ``None``: any grade above 0.

    Returns:
        ``|relevant units in top R| / R``, in [0, 1].

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``relevance_level`` is invalid.
    """
    check_relevance_level(relevance_level)
    return float(r_precision_batch(one_query(gains, ideal), relevance_level=relevance_level)[0])



def dcg_at_k(gains: ArrayLike, k: int, *, gain: Gain = "linear") -> float:
    """Discounted cumulative gain of the top ``k`` ranks.

    ``DCG@k = sum over ranks r <= k of g(gains[r - 1]) / log2(r + 1)``, with
    ``g(x) = x`` (linear) or ``2**x - 1`` (exponential).

    Args:
        gains: Per-rank gains, best rank first.
        k: Rank cutoff, an int >= 1.
        gain: ``linear`` (the grade) or ``exponential`` (``2**grade - 1``).

    Returns:
        The DCG, 0.0 for an empty ranking.

    Raises:
        StatsError: If ``gains`` is not a one-dimensional array of finite,
            non-negative numbers.
        ConfigError: If ``k`` is not an int >= 1 or ``gain`` is unknown.
    """
    k = check_k(k)
    check_gain(gain)
    top = as_gains(gains, "gains")[:k]
    return float(dcg_rows(top.reshape(1, -1), gain)[0])



def ndcg_at_k(gains: ArrayLike, ideal: ArrayLike, k: int, *, gain: Gain = "linear") -> float:
    """Normalised DCG of the top ``k`` ranks (trec_eval ``ndcg_cut_k`` when linear).

    A unit's gain is ``g(grade)``, discounted by ``log2(rank + 1)``; the normaliser
    is the DCG of the ``k`` highest grades among *all* judged relevant units,
    retrieved or not::

        nDCG@k = sum_{r<=k} g(g_r) / log2(r + 1)  /  sum_{r<=k} g(g*_r) / log2(r + 1)

    where ``g*`` is ``ideal`` sorted descending and ``g`` is the identity (linear
    gain, trec_eval) or ``2**x - 1`` (exponential gain).

    Args:
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        k: Rank cutoff, an int >= 1.
        gain: ``linear`` (the grade) or ``exponential`` (``2**grade - 1``).

    Returns:
        nDCG@k in [0, 1].

    Raises:
        StatsError: If the query has no relevant unit or the arrays are invalid.
        ConfigError: If ``k`` is not an int >= 1 or ``gain`` is unknown.
    """
    k = check_k(k)
    check_gain(gain)
    return float(ndcg_at_k_batch(one_query(gains, ideal), k, gain=gain)[0])



def ranked_metric(
    spec: MetricSpec,
    gains: ArrayLike,
    ideal: ArrayLike,
    *,
    relevance_level: float | None = None,
    gain: Gain = "linear",
) -> float:
    """Compute one of the trec_eval-style metrics named by ``spec``.

    Args:
        spec: A ``hit_rate``, ``recall``, ``precision``, ``mrr``, ``map`` or
            ``ndcg`` spec with a cutoff, or ``r_precision``.
        gains: Per-rank gains, best rank first.
        ideal: Grades of every judged relevant unit of the query.
        relevance_level: For the binary metrics (all but ``ndcg``): the lowest
            grade that counts as relevant; ``None``: any grade above 0.
        gain: For ``ndcg``: ``linear`` or ``exponential``.

    Returns:
        The metric's per-query value (for ``mrr``, the reciprocal rank; for
        ``map``, the average precision).

    Raises:
        ConfigError: If ``spec`` names a metric without a kernel here, or an option
            is given to a metric that does not take it.
        StatsError: If the query has no relevant unit or the arrays are invalid.
    """
    check_ranked(spec, relevance_level=relevance_level, gain=gain)
    batch = one_query(gains, ideal)
    return float(ranked_metric_batch(spec, batch, relevance_level=relevance_level, gain=gain)[0])
