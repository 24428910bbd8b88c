"""Retrieval metric kernels: pure numpy functions over gain and label arrays.

* :func:`parse_metric` / :class:`MetricSpec` read metric names such as ``ndcg@10``.
* :func:`relevance_gains` turns a ranking of unit ids and graded judgements into
  ``(gains, ideal)`` arrays.
* :func:`hit_rate_at_k`, :func:`recall_at_k`, :func:`precision_at_k`,
  :func:`reciprocal_rank_at_k`, :func:`average_precision_at_k`,
  :func:`r_precision` and :func:`ndcg_at_k` follow trec_eval (binary metrics at
  trec_eval's ``relevance_level``; nDCG with linear gain, as ``ndcg_cut_k``, or
  exponential gain on request).
* :func:`gain_batch` / :func:`stack_gains` build a :class:`GainBatch` of many
  queries, and the ``*_batch`` kernels compute a metric for all of them at once.
  Each metric has that one kernel; the per-query functions above call it on a
  batch of one, so a query's value never depends on the others computed with it.
* :func:`document_retrieval` is the Azure AI evaluation SDK's composite
  (nDCG with exponential gain, xDCG, fidelity, top relevance, holes);
  :func:`document_retrieval_batch` computes it for many queries at once.

The evaluators wrap these kernels; nothing here knows about cases or runs.
"""

from oloproof.metrics._batch import GainBatch, gain_batch, stack_gains
from oloproof.metrics._composite import (
    DOCUMENT_RETRIEVAL_LOWER_IS_BETTER,
    DOCUMENT_RETRIEVAL_THRESHOLDS,
    XDCG_DISCOUNT,
    XDCG_SCALE,
    document_retrieval,
    document_retrieval_key,
    document_retrieval_thresholds,
)
from oloproof.metrics._composite_batch import document_retrieval_batch
from oloproof.metrics._kernels import (
    average_precision_at_k_batch,
    hit_rate_at_k_batch,
    ndcg_at_k_batch,
    precision_at_k_batch,
    r_precision_batch,
    ranked_metric_batch,
    recall_at_k_batch,
    reciprocal_rank_at_k_batch,
)
from oloproof.metrics._per_query import (
    average_precision_at_k,
    dcg_at_k,
    hit_rate_at_k,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    ranked_metric,
    recall_at_k,
    reciprocal_rank_at_k,
)
from oloproof.metrics._spec import (
    CUTOFF_METRICS,
    METRIC_NAMES,
    PLAIN_METRICS,
    MetricSpec,
    parse_metric,
)
from oloproof.metrics._units import best_relevant_position, relevance_gains

__all__ = [  # noqa: RUF022 - plain sorted() order, which the tests check
    "CUTOFF_METRICS",
    "DOCUMENT_RETRIEVAL_LOWER_IS_BETTER",
    "DOCUMENT_RETRIEVAL_THRESHOLDS",
    "GainBatch",
    "METRIC_NAMES",
    "MetricSpec",
    "PLAIN_METRICS",
    "XDCG_DISCOUNT",
    "XDCG_SCALE",
    "average_precision_at_k",
    "average_precision_at_k_batch",
    "best_relevant_position",
    "dcg_at_k",
    "document_retrieval",
    "document_retrieval_batch",
    "document_retrieval_key",
    "document_retrieval_thresholds",
    "gain_batch",
    "hit_rate_at_k",
    "hit_rate_at_k_batch",
    "ndcg_at_k",
    "ndcg_at_k_batch",
    "parse_metric",
    "precision_at_k",
    "precision_at_k_batch",
    "r_precision",
    "r_precision_batch",
    "ranked_metric",
    "ranked_metric_batch",
    "recall_at_k",
    "recall_at_k_batch",
    "reciprocal_rank_at_k",
    "reciprocal_rank_at_k_batch",
    "relevance_gains",
    "stack_gains",
]
