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

Sums run rank by rank, in rank order (as trec_eval accumulates them), so the batch
kernels of :mod:`oloproof.metrics._batch` reproduce these values bit for bit.

When a query has no relevant unit the metrics are undefined and every kernel
raises :class:`~oloproof._exceptions.StatsError`; callers exclude such queries
(reason ``no_relevance_labels``) before calling. A ranking shorter than ``k`` is
fine: the missing ranks count as non-relevant.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oloproof._exceptions import ConfigError, StatsError
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

Gain = Literal["linear", "exponential"]
"""How a grade becomes a gain in DCG: the grade itself, or ``2**grade - 1``."""

GAINS: tuple[str, ...] = ("linear", "exponential")


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


def _as_gains(values: ArrayLike, what: str) -> NDArray[np.float64]:
    array = float_vector(values, what)
    if not np.all(np.isfinite(array)):
        raise StatsError(f"{what} must be finite")
    if np.any(array < 0.0):
        raise StatsError(f"{what} must not be negative")
    return array


_NO_RELEVANT = (
    "the query has no relevant unit, so the metric is undefined "
    "(exclude it with reason 'no_relevance_labels')"
)


def _validated(
    gains: ArrayLike, ideal: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The gains, and the positive ideal grades sorted descending (contiguous)."""
    gain_array = _as_gains(gains, "gains")
    ideal_array = _as_gains(ideal, "ideal")
    ideal_array = np.ascontiguousarray(np.sort(ideal_array[ideal_array > 0.0])[::-1])
    if ideal_array.size == 0:
        raise StatsError(_NO_RELEVANT)
    found = np.sort(gain_array[gain_array > 0.0])[::-1]
    if found.size > ideal_array.size or np.any(found > ideal_array[: found.size]):
        raise StatsError(
            "gains are not drawn from ideal: the retrieved relevant grades must be "
            "among the judged ones, each earned once"
        )
    return gain_array, ideal_array


def _binary(
    gains: ArrayLike, ideal: ArrayLike, level: float | None
) -> tuple[NDArray[np.bool_], int]:
    """Which ranks hold a relevant unit at ``level``, and how many units are relevant."""
    level = check_relevance_level(level)
    gain_array, ideal_array = _validated(gains, ideal)
    if level is None:
        return gain_array > 0.0, int(ideal_array.size)
    relevant = int(np.count_nonzero(ideal_array >= level))
    if relevant == 0:
        raise StatsError(f"{_NO_RELEVANT[:-1]}; none reaches relevance_level {level:g})")
    return gain_array >= level, relevant


_LOG2_RANKS = np.log2(np.arange(2, 258, dtype=np.float64))


def log2_ranks(n: int) -> NDArray[np.float64]:
    """``log2(rank + 1)`` for ranks ``1..n``: the DCG discount's divisors.

    One table, grown on demand, serves every kernel, so the per-query and batch
    kernels divide by the very same numbers.
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


def _ranked_sum(values: NDArray[np.float64]) -> float:
    # Rank by rank, left to right: the order the batch kernels add in.
    total = 0.0
    for value in values.tolist():
        total += value
    return total


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
    relevant, _ = _binary(gains, ideal, relevance_level)
    return 1.0 if np.any(relevant[:k]) else 0.0


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
    relevant, total = _binary(gains, ideal, relevance_level)
    return float(np.count_nonzero(relevant[:k])) / float(total)


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
    relevant, _ = _binary(gains, ideal, relevance_level)
    return float(np.count_nonzero(relevant[:k])) / float(k)


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
    relevant, _ = _binary(gains, ideal, relevance_level)
    hits = np.flatnonzero(relevant[:k])
    return 1.0 / float(hits[0] + 1) if hits.size else 0.0


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
    relevant, total = _binary(gains, ideal, relevance_level)
    top = relevant[:k]
    ranks = np.arange(1, top.size + 1, dtype=np.float64)
    precisions = np.where(top, np.cumsum(top, dtype=np.float64) / ranks, 0.0)
    return _ranked_sum(precisions) / float(total)


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
    relevant, total = _binary(gains, ideal, relevance_level)
    return float(np.count_nonzero(relevant[:total])) / float(total)


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
    top = _as_gains(gains, "gains")[:k]
    if gain == "exponential":
        top = exponential_gains(top)
    return _ranked_sum(top / log2_ranks(top.size))


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
    gain_array, ideal_array = _validated(gains, ideal)
    top = gain_array[:k]
    best = ideal_array[:k]
    if gain == "exponential":
        top, best = exponential_gains(top), exponential_gains(best)
    dcg = _ranked_sum(top / log2_ranks(top.size))
    idcg = _ranked_sum(best / log2_ranks(best.size))
    if idcg == 0.0:
        raise StatsError(UNDERFLOW)
    return dcg / idcg


#: Why nDCG is undefined although a unit is relevant: ``2**grade - 1`` is 0.
UNDERFLOW = (
    "every relevant grade is so close to 0 that its exponential gain 2**grade - 1 "
    "is 0, so nDCG is undefined"
)


#: The binary kernels with a cutoff, by metric name.
BINARY_AT_K = {
    "hit_rate": hit_rate_at_k,
    "recall": recall_at_k,
    "precision": precision_at_k,
    "mrr": reciprocal_rank_at_k,
    "map": average_precision_at_k,
}
#: Every metric :func:`ranked_metric` computes.
RANKED_METRICS: frozenset[str] = frozenset({*BINARY_AT_K, "ndcg", "r_precision"})


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
    if spec.name == "ndcg":
        return ndcg_at_k(gains, ideal, spec.k, gain=gain)  # type: ignore[arg-type]
    if spec.name == "r_precision":
        return r_precision(gains, ideal, relevance_level=relevance_level)
    return BINARY_AT_K[spec.name](gains, ideal, spec.k, relevance_level=relevance_level)  # type: ignore[arg-type]


def check_ranked(spec: MetricSpec, *, relevance_level: float | None, gain: str) -> None:
    """Refuse a spec :func:`ranked_metric` has no kernel for, or a misplaced option.

    Raises:
        ConfigError: As :func:`ranked_metric` documents.
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
