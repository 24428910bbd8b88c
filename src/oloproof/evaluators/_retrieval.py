"""Retrieval evaluators: thin wrappers over the kernels in `oloproof.metrics`.

Each reads the top ``k`` retrieved units and the case's relevance labels; a case
without ``expected.relevant`` is excluded with ``no_relevance_labels``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from oloproof import metrics
from oloproof.evaluators._base import CaseView, Evaluator, EvaluatorOptions, JudgeContext, Verdict, evaluator

__all__ = ["HitRate", "Mrr", "Ndcg", "Recall", "RetrievalOptions"]


class RetrievalOptions(EvaluatorOptions):
    """Options of the rank-based retrieval evaluators."""

    k: int = Field(ge=1)
    """The cut-off: only the first ``k`` candidates count."""

    relevance_unit: Literal["document", "chunk"] = "document"
    """``document``: a document counts once, at its best position; ``chunk``: each
    ``doc_id#chunk_id`` is a unit of its own."""


class _RankMetric(Evaluator):
    options_model = RetrievalOptions
    options: RetrievalOptions
    needs_retrieval = True
    output_kind = "score"
    metric_name: ClassVar[str] = ""
    kernel: ClassVar[Callable[[np.ndarray, np.ndarray, int], float]]

    def default_criterion(self) -> str:
        return f"{self.metric_name}_at_{self.options.k}"

    def _unit(self, item: dict[str, Any]) -> str:
        if self.options.relevance_unit == "chunk" and item.get("chunk_id") is not None:
            return f"{item['doc_id']}#{item['chunk_id']}"
        return str(item["doc_id"])

    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        if case.candidates is None:
            return Verdict.excluded("no_retrieval")
        relevant = case.expected.get("relevant")
        if not relevant:
            return Verdict.excluded("no_relevance_labels")
        grades: dict[str, float] = {}
        for item in relevant:
            unit = self._unit(item)
            grades[unit] = max(grades.get(unit, 0.0), float(item.get("grade", 1.0)))
        if not any(grade > 0 for grade in grades.values()):
            return Verdict.excluded("no_relevant_units")
        # Only the first k matter; keeping the rest out of the identity lets a
        # change below the cut-off reuse the judgment.
        retrieved = [self._unit(item) for item in case.candidates[: self.options.k]]
        return {"retrieved": retrieved, "grades": dict(sorted(grades.items()))}

    def judge(self, fields: dict[str, Any], ctx: JudgeContext) -> Verdict:
        gains, ideal = metrics.relevance_gains(fields["retrieved"], fields["grades"])
        value = float(type(self).kernel(gains, ideal, self.options.k))
        return Verdict(score=value)


@evaluator("hit_rate")
class HitRate(_RankMetric):
    """1 when any relevant unit is among the first ``k`` candidates."""

    metric_name = "hit_rate"
    kernel = staticmethod(metrics.hit_rate_at_k)


@evaluator("recall")
class Recall(_RankMetric):
    """Share of the relevant units found among the first ``k`` candidates."""

    metric_name = "recall"
    kernel = staticmethod(metrics.recall_at_k)


@evaluator("mrr")
class Mrr(_RankMetric):
    """Reciprocal rank of the first relevant unit within ``k`` (0 if none)."""

    metric_name = "mrr"
    kernel = staticmethod(metrics.reciprocal_rank_at_k)


@evaluator("ndcg")
class Ndcg(_RankMetric):
    """nDCG@k with linear gain (the grade) and log2(rank + 1) discount, as trec_eval."""

    metric_name = "ndcg"
    kernel = staticmethod(metrics.ndcg_at_k)
