"""The ``document_retrieval`` composite of many queries in one pass.

:func:`document_retrieval_batch` computes, for a batch of rankings, exactly the
values :func:`oloproof.metrics.document_retrieval` computes for each alone (the
formulas are in :mod:`oloproof.metrics._composite`). It works on the flat
concatenation of the queries' labels with a query index per label, so a query with
10,000 retrieved documents costs its own length, never the batch's widest row
times the batch; only the top ``k`` ranks are laid out as a ``(queries, k)``
matrix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from oloproof._exceptions import StatsError
from oloproof.metrics._composite import (
    XDCG_DISCOUNT,
    XDCG_SCALE,
    RankedDocuments,
    check_k,
    check_label_range,
    output_keys,
)

__all__ = ["document_retrieval_batch"]

_Floats = NDArray[np.float64]
_Ints = NDArray[np.intp]


def _flat(arrays: Sequence[_Floats]) -> tuple[_Floats, _Ints, _Ints]:
    """The labels end to end, the query of each and its rank (0-based) in that query."""
    lengths = np.fromiter((array.size for array in arrays), dtype=np.intp, count=len(arrays))
    values = np.concatenate(arrays).astype(np.float64, copy=False) if arrays else np.empty(0)
    query = np.repeat(np.arange(len(arrays), dtype=np.intp), lengths)
    starts = np.cumsum(lengths) - lengths
    rank = np.arange(values.size, dtype=np.intp) - starts[query]
    return values, query, rank


def _check_labels(values: _Floats, query: _Ints, what: str, low: int, high: int) -> None:
    bad = ~np.isfinite(values) | (values != np.round(values)) | (values < low) | (values > high)
    if np.any(bad):
        first = int(np.argmax(bad))
        raise StatsError(
            f"query {int(query[first])}: {what} must be integers in [ground_truth_label_min, "
            f"ground_truth_label_max] = [{low}, {high}], got {values[first]:g}"
        )


def _check_drawn(labels: _Floats, query: _Ints, truth: _Floats, truth_query: _Ints, n: int, high: int) -> None:
    # Each label value may be retrieved at most as often as the query's ground truth holds it.
    width = high + 1
    retrieved = np.bincount(query * width + labels.astype(np.intp), minlength=n * width)
    available = np.bincount(truth_query * width + truth.astype(np.intp), minlength=n * width)
    over = retrieved > available
    if np.any(over):
        cell = int(np.argmax(over))
        raise StatsError(
            f"query {cell // width}: {int(retrieved[cell])} retrieved documents have label {cell % width} but the "
            f"ground truth has {int(available[cell])}: retrieved labels must come from the ground truth"
        )


def _top(values: _Floats, query: _Ints, rank: _Ints, n: int, k: int) -> _Floats:
    """The first ``k`` values of each query as an ``(n, k)`` matrix, 0 past its end."""
    out = np.zeros((n, k), dtype=np.float64)
    keep = rank < k
    out[query[keep], rank[keep]] = values[keep]
    return out


def _ideal(truth: _Floats, query: _Ints, n: int, k: int) -> _Floats:
    """Each query's ``k`` highest ground-truth labels, descending, 0 past its end."""
    order = np.lexsort((-truth, query))
    ordered_query = query[order]
    counts = np.bincount(ordered_query, minlength=n)
    rank = np.arange(order.size, dtype=np.intp) - (np.cumsum(counts) - counts)[ordered_query]
    return _top(truth[order], ordered_query, rank, n, k)


def document_retrieval_batch(
    rankings: Sequence[RankedDocuments],
    *,
    k: int = 3,
    ground_truth_label_min: int = 0,
    ground_truth_label_max: int = 4,
) -> dict[str, _Floats]:
    """Compute the ``document_retrieval`` composite of many queries at once.

    Args:
        rankings: Each query's ranking (labels best first, NaN for a hole) and
            ground-truth labels, as :func:`oloproof.metrics.rank_documents` makes them.
        k: Rank cutoff for nDCG, xDCG and max relevance (the SDK uses 3).
        ground_truth_label_min: The lowest label, meaning "irrelevant"; an int >= 0.
        ground_truth_label_max: The highest label; an int above the minimum and at
            most :data:`oloproof.metrics.MAX_LABEL`.

    Returns:
        The outputs :func:`oloproof.metrics.document_retrieval` names, each an array
        with one value per query, in the order given.

    Raises:
        ConfigError: If ``k`` or the label range is invalid.
        StatsError: If a query has no ground truth, a label is not an integer inside
            the range, or a query's retrieved labels are not drawn from its ground
            truth; the message names the query's index.
    """
    k = check_k(k)
    low, high = check_label_range(ground_truth_label_min, ground_truth_label_max)
    n = len(rankings)
    truth, truth_query, _ = _flat([ranking.truth for ranking in rankings])
    labels, query, rank = _flat([ranking.labels for ranking in rankings])
    truth_total = np.bincount(truth_query, minlength=n).astype(np.float64)
    if np.any(truth_total == 0):
        raise StatsError(
            f"query {int(np.argmax(truth_total == 0))}: ground_truth_labels is empty: "
            "document_retrieval needs at least one judged document"
        )
    _check_labels(truth, truth_query, "ground_truth_labels", low, high)
    hole = np.isnan(labels)
    _check_labels(labels[~hole], query[~hole], "retrieved_labels", low, high)
    _check_drawn(labels[~hole], query[~hole], truth, truth_query, n, high)

    gains = np.where(hole, 0.0, labels)
    total = np.bincount(query, minlength=n).astype(np.float64)
    holes = np.bincount(query, weights=hole, minlength=n)
    scored = np.bincount(query, weights=gains != 0.0, minlength=n) > 0
    top, ideal = _top(gains, query, rank, n, k), _ideal(truth, truth_query, n, k)
    discounts = 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))
    steps = XDCG_DISCOUNT ** np.arange(k, dtype=np.float64)
    weight = np.where(gains > low, np.exp2(gains + 1.0) - 1.0, 0.0)
    truth_weight = np.where(truth > low, np.exp2(truth + 1.0) - 1.0, 0.0)
    fidelity_den = np.bincount(truth_query, weights=truth_weight, minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        ndcg = ((np.exp2(top) - 1.0) @ discounts) / ((np.exp2(ideal) - 1.0) @ discounts)
        fidelity = np.bincount(query, weights=weight, minlength=n) / fidelity_den
        holes_ratio = np.where(total > 0, holes / np.maximum(total, 1.0), 0.0)
    fidelity[fidelity_den == 0] = np.nan
    keys = output_keys(k)
    # A query whose ranking holds no non-zero label scores 0 on everything but the holes.
    return {
        keys["ndcg@3"]: np.where(scored, ndcg, 0.0),
        keys["xdcg@3"]: np.where(scored, XDCG_SCALE * (top @ steps) / steps.sum(), 0.0),
        "fidelity": np.where(scored, fidelity, 0.0),
        "top1_relevance": np.where(scored, top[:, 0], 0.0),
        keys["top3_max_relevance"]: np.where(scored, top.max(axis=1), 0.0),
        "holes": holes,
        "holes_ratio": holes_ratio,
        "total_retrieved_documents": total,
        "total_ground_truth_documents": truth_total,
    }
