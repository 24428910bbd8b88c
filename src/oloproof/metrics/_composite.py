"""The ``document_retrieval`` composite of the Azure AI evaluation SDK.

Re-implements the metrics of ``DocumentRetrievalEvaluator`` from the
``azure-ai-evaluation`` package
(``azure/ai/evaluation/_evaluators/_document_retrieval/_document_retrieval.py``)
as one pure kernel over label arrays. With ``l_r`` the ground-truth label of the
document at rank ``r`` (0 for a hole, i.e. a retrieved document without a label),
``l*`` all ground-truth labels sorted descending, and ``min``/``max`` the declared
label range:

* ``ndcg@k = sum_{r<=k} (2**l_r - 1)/log2(r+1) / sum_{r<=k} (2**l*_r - 1)/log2(r+1)``
  (exponential gain, unlike :func:`oloproof.metrics.ndcg_at_k`, which is linear);
* ``xdcg@k = 25 * sum_{r<=k} l_r * 0.6**(r-1) / sum_{r<=k} 0.6**(r-1)``
  (the denominator runs over all ``k`` ranks even if fewer were retrieved);
* ``fidelity = sum_{retrieved, l>min} (2**(l+1) - 1) / sum_{ground truth, l>min} (2**(l+1) - 1)``
  over *all* retrieved documents, NaN when the denominator is 0;
* ``top1_relevance = l_1`` and ``top{k}_max_relevance = max_{r<=k} l_r``;
* ``holes`` = number of retrieved documents without a label, ``holes_ratio`` =
  ``holes / number retrieved``.

As in the SDK, an empty ranking gives 0 for everything, and a ranking in which no
document has a non-zero label gives 0 for every metric except the two hole counts.
Pass/fail thresholds belong to the evaluator layer; the SDK's defaults are in
:data:`DOCUMENT_RETRIEVAL_THRESHOLDS`.

Deliberate differences from the SDK: the cutoff ``k`` is a parameter (the SDK
fixes 3); fidelity weighs each label by its numeric value (the SDK orders its label
counts as strings, which misweighs label ranges reaching 10); negative label
minimums are refused (they would make the nDCG gains negative); retrieved labels
that the ground truth does not hold are refused rather than scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics._kernels import float_vector
from oloproof.metrics._spec import MetricSpec

__all__ = [
    "DOCUMENT_RETRIEVAL_LOWER_IS_BETTER",
    "DOCUMENT_RETRIEVAL_THRESHOLDS",
    "XDCG_DISCOUNT",
    "XDCG_SCALE",
    "document_retrieval",
    "document_retrieval_key",
    "document_retrieval_thresholds",
]

#: Per-rank discount factor of xDCG.
XDCG_DISCOUNT = 0.6
#: Scale of xDCG: a label ``l`` at every rank gives ``25 * l``.
XDCG_SCALE = 25.0

#: The SDK's default pass thresholds, keyed by its output names at ``k = 3``.
#: A metric passes when it is ``>=`` its threshold, except those in
#: :data:`DOCUMENT_RETRIEVAL_LOWER_IS_BETTER`, which pass when ``<=``.
DOCUMENT_RETRIEVAL_THRESHOLDS: Mapping[str, float] = MappingProxyType(
    {
        "ndcg@3": 0.5,
        "xdcg@3": 50.0,
        "fidelity": 0.5,
        "top1_relevance": 50.0,
        "top3_max_relevance": 50.0,
        "total_retrieved_documents": 50.0,
        "total_ground_truth_documents": 50.0,
        "holes": 0.0,
        "holes_ratio": 0.0,
    }
)
#: Output names for which lower is better.
DOCUMENT_RETRIEVAL_LOWER_IS_BETTER: frozenset[str] = frozenset({"holes", "holes_ratio"})


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ConfigError(f"the cutoff k must be an integer >= 1, got {k!r}", field="k")
    return int(k)


def _output_keys(k: int) -> dict[str, str]:
    return {
        "ndcg@3": f"ndcg@{k}",
        "xdcg@3": f"xdcg@{k}",
        "top3_max_relevance": f"top{k}_max_relevance",
    }


def document_retrieval_thresholds(k: int = 3) -> dict[str, float]:
    """The SDK's default thresholds, keyed by the output names at cutoff ``k``.

    Args:
        k: The cutoff the composite is computed at.

    Returns:
        :data:`DOCUMENT_RETRIEVAL_THRESHOLDS` with ``ndcg@3``, ``xdcg@3`` and
        ``top3_max_relevance`` renamed for ``k``.

    Raises:
        ConfigError: If ``k`` is not an int >= 1.
    """
    renames = _output_keys(_check_k(k))
    return {renames.get(key, key): value for key, value in DOCUMENT_RETRIEVAL_THRESHOLDS.items()}


def document_retrieval_key(spec: MetricSpec) -> str:
    """The :func:`document_retrieval` output name of a composite metric.

    Args:
        spec: One of ``ndcg@k``, ``xdcg@k``, ``max_relevance@k``, ``fidelity``,
            ``top1_relevance``, ``holes`` or ``holes_ratio``.

    Returns:
        The key, e.g. ``"top3_max_relevance"`` for ``max_relevance@3``.

    Raises:
        ConfigError: If the metric is not part of the composite.
    """
    if spec.name == "max_relevance":
        return f"top{spec.k}_max_relevance"
    if spec.name in {"ndcg", "xdcg", "fidelity", "top1_relevance", "holes", "holes_ratio"}:
        return str(spec)
    raise ConfigError(f"metric {str(spec)!r} is not part of document_retrieval", field="name")


def _labels(
    values: ArrayLike, what: str, low: int, high: int, *, holes: bool
) -> NDArray[np.float64]:
    array = float_vector(values, what)
    judged = array[~np.isnan(array)] if holes else array
    if not np.all(np.isfinite(judged)):
        raise StatsError(f"{what} must be finite" + (" (NaN marks a hole)" if holes else ""))
    if np.any(judged != np.round(judged)):
        raise StatsError(f"{what} must be integers")
    if np.any((judged < low) | (judged > high)):
        raise StatsError(
            f"{what} must lie in [ground_truth_label_min, ground_truth_label_max] = "
            f"[{low}, {high}], got values from {judged.min():g} to {judged.max():g}"
        )
    return array


def _exp_dcg(labels: NDArray[np.float64]) -> float:
    discounts = 1.0 / np.log2(np.arange(2, labels.size + 2, dtype=np.float64))
    return float(np.dot(np.exp2(labels) - 1.0, discounts))


def _fidelity_weight(labels: NDArray[np.float64], low: int) -> float:
    return float(np.sum(np.where(labels > low, np.exp2(labels + 1.0) - 1.0, 0.0)))


def document_retrieval(
    retrieved_labels: ArrayLike,
    ground_truth_labels: ArrayLike,
    *,
    scores: ArrayLike | None = None,
    k: int = 3,
    ground_truth_label_min: int = 0,
    ground_truth_label_max: int = 4,
) -> dict[str, float]:
    """Compute the ``document_retrieval`` composite for one query.

    Formulas are in the module docstring. Each retrieved document must appear once;
    collapse duplicates before calling (the SDK keeps one entry per document id).

    Args:
        retrieved_labels: The ground-truth label of each retrieved document, NaN for
            a document without a label (a hole). In rank order, best first, unless
            ``scores`` is given.
        ground_truth_labels: The labels of every judged document of the query.
        scores: Retrieval scores of the retrieved documents; if given, the ranking
            is by descending score, ties kept in input order (as the SDK does).
        k: Rank cutoff for nDCG, xDCG and max relevance (the SDK uses 3).
        ground_truth_label_min: The lowest label, meaning "irrelevant"; an int >= 0.
        ground_truth_label_max: The highest label; an int above the minimum.

    Returns:
        ``ndcg@k``, ``xdcg@k``, ``fidelity``, ``top1_relevance``,
        ``top{k}_max_relevance``, ``holes``, ``holes_ratio``,
        ``total_retrieved_documents`` and ``total_ground_truth_documents``, all as
        floats. ``fidelity`` is NaN when no ground-truth label is above the minimum.

    Raises:
        ConfigError: If ``k`` or the label range is invalid.
        StatsError: If there is no ground truth, a label is not an integer inside
            the range, the retrieved labels are not drawn from the ground truth, or
            ``scores`` does not match ``retrieved_labels``.
    """
    k = _check_k(k)
    low, high = ground_truth_label_min, ground_truth_label_max
    for field, value in (("ground_truth_label_min", low), ("ground_truth_label_max", high)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ConfigError(f"{field} must be an integer, got {value!r}", field=field)
    if low < 0:
        raise ConfigError(
            f"ground_truth_label_min must be >= 0, got {low}", field="ground_truth_label_min"
        )
    if low >= high:
        raise ConfigError(
            f"ground_truth_label_max ({high}) must be greater than ground_truth_label_min ({low})",
            field="ground_truth_label_max",
        )
    truth = _labels(ground_truth_labels, "ground_truth_labels", low, high, holes=False)
    if truth.size == 0:
        raise StatsError(
            "ground_truth_labels is empty: document_retrieval needs at least one judged document"
        )
    retrieved = _labels(retrieved_labels, "retrieved_labels", low, high, holes=True)
    judged = retrieved[~np.isnan(retrieved)]
    values, counts = np.unique(judged, return_counts=True)
    truth_values, truth_counts = np.unique(truth, return_counts=True)
    available = dict(zip(truth_values.tolist(), truth_counts.tolist(), strict=True))
    for value, count in zip(values.tolist(), counts.tolist(), strict=True):
        if count > available.get(value, 0):
            raise StatsError(
                f"{count} retrieved documents have label {value:g} but the ground truth has "
                f"{available.get(value, 0)}: retrieved labels must come from the ground truth"
            )
    if scores is not None:
        try:
            score_array = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise StatsError(f"scores must be an array of numbers: {error}") from None
        if score_array.shape != retrieved.shape:
            raise StatsError(
                f"scores has shape {score_array.shape} but retrieved_labels {retrieved.shape}"
            )
        if not np.all(np.isfinite(score_array)):
            raise StatsError("scores must be finite")
        retrieved = retrieved[np.argsort(-score_array, kind="stable")]

    keys = _output_keys(k)
    n = retrieved.size
    hole_count = int(np.count_nonzero(np.isnan(retrieved)))
    result = {
        keys["ndcg@3"]: 0.0,
        keys["xdcg@3"]: 0.0,
        "fidelity": 0.0,
        "top1_relevance": 0.0,
        keys["top3_max_relevance"]: 0.0,
        "holes": float(hole_count),
        "holes_ratio": hole_count / n if n else 0.0,
        "total_retrieved_documents": float(n),
        "total_ground_truth_documents": float(truth.size),
    }
    labels = np.nan_to_num(retrieved, nan=0.0)
    if not np.any(labels != 0.0):
        return result

    top = labels[:k]
    ideal = np.sort(truth)[::-1][:k]
    result[keys["ndcg@3"]] = _exp_dcg(top) / _exp_dcg(ideal)
    steps = XDCG_DISCOUNT ** np.arange(k, dtype=np.float64)
    xdcg = XDCG_SCALE * float(np.dot(top, steps[: top.size])) / float(steps.sum())
    result[keys["xdcg@3"]] = xdcg
    denominator = _fidelity_weight(truth, low)
    fidelity = _fidelity_weight(labels, low) / denominator if denominator else float("nan")
    result["fidelity"] = fidelity
    result["top1_relevance"] = float(labels[0])
    result[keys["top3_max_relevance"]] = float(top.max())
    return result
