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

:func:`rank_documents` turns the SDK's two lists of ``(document id, label)`` and
``(document id, score)`` into the label arrays :func:`document_retrieval` takes:
by descending score, ties in input order, each document once.

Deliberate differences from the SDK: the cutoff ``k`` is a parameter (the SDK
fixes 3); fidelity weighs each label by its numeric value (the SDK orders its label
counts as strings, which misweighs every label once the range reaches 10); negative
label minimums are refused (they make the nDCG gains negative, can zero the ideal
DCG, and a hole, scored 0, would then count as relevant); labels above
:data:`MAX_LABEL` are refused (``2**(l + 1)`` would overflow); a document listed
twice counts once, at its best rank and with its highest label (the SDK keeps its
last score and last label but counts every entry in the totals and in
``holes_ratio``); retrieved labels that the ground truth does not hold are refused
rather than scored. Labels and scores must be numbers: booleans and strings are
refused, never converted.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics._checks import float_vector
from oloproof.metrics._spec import MetricSpec

__all__ = [
    "DOCUMENT_RETRIEVAL_LOWER_IS_BETTER",
    "DOCUMENT_RETRIEVAL_THRESHOLDS",
    "MAX_LABEL",
    "XDCG_DISCOUNT",
    "XDCG_SCALE",
    "RankedDocuments",
    "check_k",
    "check_label_range",
    "document_retrieval",
    "document_retrieval_key",
    "document_retrieval_thresholds",
    "output_keys",
    "rank_documents",
]

#: Per-rank discount factor of xDCG.
XDCG_DISCOUNT = 0.6
#: Scale of xDCG: a label ``l`` at every rank gives ``25 * l``.
XDCG_SCALE = 25.0
#: The highest ``ground_truth_label_max``: fidelity weighs a label ``l`` by
#: ``2**(l + 1) - 1``, and sums of 10,000 such weights must stay finite.
MAX_LABEL = 100

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


def check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ConfigError(f"the cutoff k must be an integer >= 1, got {k!r}", field="k")
    return int(k)


def output_keys(k: int) -> dict[str, str]:
    """The output names at cutoff ``k`` of the three outputs the SDK names at 3."""
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
    renames = output_keys(check_k(k))
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


def _number_vector(values: ArrayLike, what: str) -> NDArray[np.float64]:
    # np.asarray would turn "2" and True into 2.0 and 1.0: a label or score that is
    # not a number is an error in the data, never converted.
    raw = np.asarray(values, dtype=object if isinstance(values, list | tuple) else None)
    if raw.dtype.kind in "bUSV" or (
        raw.dtype.kind == "O"
        and any(
            isinstance(item, bool | np.bool_) or not isinstance(item, int | float | np.integer | np.floating)
            for item in raw.ravel().tolist()
        )
    ):
        raise StatsError(f"{what} must hold numbers only (not booleans or strings)")
    if raw.dtype.kind == "O":
        try:
            raw = raw.astype(np.float64)
        except OverflowError:
            raise StatsError(f"{what} holds a number too large for a float") from None
    return float_vector(raw, what)


def _labels(
    values: ArrayLike, what: str, low: int, high: int, *, holes: bool
) -> NDArray[np.float64]:
    array = _number_vector(values, what)
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


def check_label_range(low: int, high: int) -> tuple[int, int]:
    """``(ground_truth_label_min, ground_truth_label_max)`` as ints, checked.

    Raises:
        ConfigError: If either is not an int, the minimum is negative, the maximum
            is not above it or exceeds :data:`MAX_LABEL`.
    """
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
    if high > MAX_LABEL:
        raise ConfigError(
            f"ground_truth_label_max must be at most {MAX_LABEL}, got {high}", field="ground_truth_label_max"
        )
    return int(low), int(high)


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

    Formulas are in the module docstring. Each retrieved document must appear once:
    :func:`rank_documents` makes the arrays from lists of documents.

    Args:
        retrieved_labels: The ground-truth label of each retrieved document, NaN for
            a document without a label (a hole). In rank order, best first, unless
            ``scores`` is given.
        ground_truth_labels: The labels of every judged document of the query.
        scores: Retrieval scores of the retrieved documents; if given, the ranking
            is by descending score, ties kept in input order (as the SDK does).
        k: Rank cutoff for nDCG, xDCG and max relevance (the SDK uses 3).
        ground_truth_label_min: The lowest label, meaning "irrelevant"; an int >= 0.
        ground_truth_label_max: The highest label; an int above the minimum and at
            most :data:`MAX_LABEL`.

    Returns:
        ``ndcg@k``, ``xdcg@k``, ``fidelity``, ``top1_relevance``,
        ``top{k}_max_relevance``, ``holes``, ``holes_ratio``,
        ``total_retrieved_documents`` and ``total_ground_truth_documents``, all as
        floats. ``fidelity`` is NaN when no ground-truth label is above the minimum.

    Raises:
        ConfigError: If ``k`` or the label range is invalid.
        StatsError: If there is no ground truth, a label is not an integer inside
            the range, a label or score is a boolean or a string, the retrieved
            labels are not drawn from the ground truth, or ``scores`` does not match
            ``retrieved_labels``.
    """
    k = check_k(k)
    low, high = check_label_range(ground_truth_label_min, ground_truth_label_max)
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
        score_array = _number_vector(scores, "scores")
        if score_array.shape != retrieved.shape:
            raise StatsError(
                f"scores has shape {score_array.shape} but retrieved_labels {retrieved.shape}"
            )
        if not np.all(np.isfinite(score_array)):
            raise StatsError("scores must be finite")
        retrieved = retrieved[np.argsort(-score_array, kind="stable")]

    keys = output_keys(k)
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


@dataclass(frozen=True)
class RankedDocuments:
    """A ranking and its ground truth, each document once, as :func:`document_retrieval` takes them."""

    ids: tuple[Hashable, ...]
    """The retrieved document ids, best first."""
    labels: NDArray[np.float64]
    """The label of each of them, NaN for a hole (a document without a label)."""
    truth: NDArray[np.float64]
    """The label of every judged document."""


def _is_integer(value: object) -> bool:
    # Beyond 2**53 a label would not survive the float arrays the metrics use.
    return (
        isinstance(value, int | np.integer)
        and not isinstance(value, bool | np.bool_)
        and abs(int(value)) <= 2**53
    )


def _is_score(value: object) -> bool:
    return (
        isinstance(value, int | float | np.integer | np.floating)
        and not isinstance(value, bool | np.bool_)
        and math.isfinite(value)
    )


def rank_documents(
    ground_truth: Iterable[tuple[Hashable, int]], retrieved: Iterable[tuple[Hashable, float]]
) -> RankedDocuments:
    """Rank retrieved documents by score and look up their labels.

    The ranking is by descending score, ties kept in input order (as the SDK sorts).
    A document listed twice counts once: in the ground truth with its highest
    label, in the ranking at its best rank (its highest score; of equal ones, the
    first). So a hole listed twice is one hole.

    Args:
        ground_truth: ``(document id, label)`` pairs; labels are integers.
        retrieved: ``(document id, score)`` pairs; scores are finite numbers.

    Returns:
        The ranked ids, their labels and the ground-truth labels.

    Raises:
        StatsError: If a label is not an integer of at most ``2**53`` (booleans and
            integral floats such as ``2.0`` are not integers) or a score is not a
            finite number (booleans are not numbers).
    """
    labels: dict[Hashable, int] = {}
    for doc, label in ground_truth:
        if not _is_integer(label):
            raise StatsError(f"the label of document {doc!r} must be an integer of at most 2**53, got {label!r}")
        labels[doc] = max(labels[doc], int(label)) if doc in labels else int(label)
    pairs = list(retrieved)
    for doc, score in pairs:
        if not _is_score(score):
            raise StatsError(f"the score of document {doc!r} must be a finite number, got {score!r}")
    # Python's sort compares ints and floats exactly (a float64 array would tie
    # integers beyond 2**53) and is stable, also with reverse=True.
    order = sorted(range(len(pairs)), key=lambda index: pairs[index][1], reverse=True)
    ranked = tuple(dict.fromkeys(pairs[index][0] for index in order))
    return RankedDocuments(
        ids=ranked,
        labels=np.array([labels.get(doc, np.nan) for doc in ranked], dtype=np.float64),
        truth=np.array(list(labels.values()), dtype=np.float64),
    )
