"""Retrieval evaluators: thin wrappers over the kernels in `oloproof.metrics`.

Each reads the top ``k`` retrieved units and the case's relevance labels; a case
without ``expected.relevant`` is excluded with ``no_relevance_labels``, one whose
labels hold no relevant unit (none reaching ``relevance_level``) with
``no_relevant_units``. ``r_precision`` has no ``k``: it reads the top ``R``, the
number of relevant units.

Besides `judge`, every evaluator here has ``judge_many``: the verdicts of many
cases from one call of the batch kernels, equal to `judge`'s case by case.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field, JsonValue
from typing_extensions import TypedDict

from oloproof import metrics
from oloproof.evaluators._agent import absent_context
from oloproof.evaluators._base import (
    CaseView,
    Evaluator,
    EvaluatorOptions,
    EvaluatorSpec,
    JudgeContext,
    Verdict,
    evaluator,
    spec_options,
)
from oloproof.evaluators._fields import relevance_labels

__all__ = [
    "BinaryRetrievalOptions",
    "HitRate",
    "Map",
    "Mrr",
    "Ndcg",
    "NdcgOptions",
    "Precision",
    "RPrecision",
    "RPrecisionOptions",
    "Recall",
    "RetrievalOptions",
]


class _UnitOptions(EvaluatorOptions):
    relevance_unit: Literal["document", "chunk"] = "document"
    """``document``: a document counts once, at its best position; ``chunk``: each
    ``doc_id#chunk_id`` is a unit of its own."""


class RetrievalOptions(_UnitOptions):
    """Options of the rank-based retrieval evaluators."""

    k: int = Field(strict=True, ge=1)
    """The cut-off: only the first ``k`` candidates count."""


class _LevelOption(EvaluatorOptions):
    relevance_level: float | None = Field(default=None, gt=0, strict=True, allow_inf_nan=False)
    """The lowest grade that counts as relevant, trec_eval's ``-l`` (a unit is
    relevant when ``grade >= relevance_level``, also when counting the relevant
    units). Unset: any grade above 0, which on integer grades is trec_eval's
    default ``-l 1``."""


class BinaryRetrievalOptions(RetrievalOptions, _LevelOption):
    """Options of the binary retrieval metrics with a cut-off."""


class RPrecisionOptions(_UnitOptions, _LevelOption):
    """Options of ``r_precision``: no cut-off, each case is cut at its own ``R``."""


class NdcgOptions(RetrievalOptions):
    """Options of ``ndcg``."""

    gain: Literal["linear", "exponential"] = "linear"
    """``linear``: a unit's gain is its grade (trec_eval's ``ndcg_cut``);
    ``exponential``: ``2**grade - 1``, which rewards the top grades more."""


#: Options that came after the first judgments were cached. At their defaults they
#: are left out of the spec, so those judgments keep their identity (and spec hash);
#: set to anything else, they are part of it.
_LATER_OPTIONS = ("relevance_level", "gain")


class RankFields(TypedDict):
    """What a rank metric reads.

    Attributes:
        retrieved: The units of the candidates the metric reads, in rank order.
        grades: Each labelled unit's relevance grade, by unit, sorted.
    """

    retrieved: list[str]
    grades: dict[str, float]


class _KernelOptions(TypedDict, total=False):
    relevance_level: float | None
    gain: Literal["linear", "exponential"]


class _RankMetric(Evaluator[RankFields]):
    options_model: ClassVar[type[EvaluatorOptions]] = BinaryRetrievalOptions
    needs_retrieval = True
    reads_output = False
    output_kind = "score"
    metric_name: ClassVar[str] = ""

    @functools.cached_property
    def metric(self) -> metrics.MetricSpec:
        """The metric this evaluator computes, e.g. ``recall@5``."""
        return metrics.MetricSpec(self.metric_name, getattr(self.options, "k", None))

    def default_criterion(self) -> str:
        return self.metric.criterion

    def spec(self) -> EvaluatorSpec:
        spec = super().spec()
        fields = type(self.options).model_fields
        options = {
            name: value for name, value in spec_options(spec).items()
            if not (name in _LATER_OPTIONS and value == fields[name].default)
        }  # fmt: skip
        return {**spec, "options": options}

    def _kernel_options(self) -> _KernelOptions:
        options: _KernelOptions = {}
        if isinstance(self.options, _LevelOption):
            options["relevance_level"] = self.options.relevance_level
        if isinstance(self.options, NdcgOptions):
            options["gain"] = self.options.gain
        return options

    def _unit(self, item: Mapping[str, JsonValue]) -> str:
        if self.options.relevance_unit == "chunk" and item.get("chunk_id") is not None:  # type: ignore[attr-defined]
            return f"{item['doc_id']}#{item['chunk_id']}"
        return str(item["doc_id"])

    def _is_relevant(self, grade: float) -> bool:
        level = getattr(self.options, "relevance_level", None)
        return grade > 0 if level is None else grade >= level

    def _depth(self, grades: dict[str, float]) -> int:
        """How many candidates the metric reads."""
        return self.options.k  # type: ignore[attr-defined]

    def read(self, case: CaseView) -> RankFields | Verdict:
        if case.candidates is None:
            return Verdict.excluded(absent_context(case.output_items, "no_retrieval"))
        relevant = relevance_labels(case.expected)
        if not relevant:
            return Verdict.excluded("no_relevance_labels")
        grades: dict[str, float] = {}
        for item in relevant:
            unit = self._unit(item)
            grade = item.get("grade", 1.0)
            grades[unit] = max(grades.get(unit, 0.0), float(grade) if isinstance(grade, int | float) else 1.0)
        if not any(self._is_relevant(grade) for grade in grades.values()):
            return Verdict.excluded("no_relevant_units")
        # Only the first k (for r_precision, R) matter; keeping the rest out of the
        # identity lets a change below the cut-off reuse the judgment.
        retrieved = [self._unit(item) for item in case.candidates[: self._depth(grades)]]
        return {"retrieved": retrieved, "grades": dict(sorted(grades.items()))}

    def judge(self, fields: RankFields, ctx: JudgeContext) -> Verdict:
        gains, ideal = metrics.relevance_gains(fields["retrieved"], fields["grades"])
        value = metrics.ranked_metric(self.metric, gains, ideal, **self._kernel_options())
        return Verdict(score=float(value))

    def judge_many(self, fields: list[RankFields], ctx: JudgeContext) -> list[Verdict]:
        """The verdicts of many cases' fields at once, each equal to `judge`'s.

        Raises:
            StatsError: If any case's fields are invalid; `judge` then tells which.
        """
        if not fields:
            return []
        batch = metrics.gain_batch([f["retrieved"] for f in fields], [f["grades"] for f in fields])
        values = metrics.ranked_metric_batch(self.metric, batch, **self._kernel_options())
        return [Verdict(score=value) for value in values.tolist()]


@evaluator("hit_rate")
class HitRate(_RankMetric):
    """1 when any relevant unit is among the first ``k`` candidates."""

    metric_name = "hit_rate"


@evaluator("recall")
class Recall(_RankMetric):
    """Share of the relevant units found among the first ``k`` candidates."""

    metric_name = "recall"


@evaluator("precision")
class Precision(_RankMetric):
    """Share of the first ``k`` ranks that hold a relevant unit (P@k, trec_eval ``P_k``)."""

    metric_name = "precision"


@evaluator("mrr")
class Mrr(_RankMetric):
    """Reciprocal rank of the first relevant unit within ``k`` (0 if none)."""

    metric_name = "mrr"


@evaluator("map")
class Map(_RankMetric):
    """Average precision of the first ``k`` candidates (AP@k; its mean is MAP@k),
    over all relevant units, as trec_eval's ``map_cut_k``."""

    metric_name = "map"


@evaluator("r_precision")
class RPrecision(_RankMetric):
    """Precision at rank ``R``, the case's number of relevant units (trec_eval ``Rprec``)."""

    options_model = RPrecisionOptions
    metric_name = "r_precision"

    def _depth(self, grades: dict[str, float]) -> int:
        return sum(1 for grade in grades.values() if self._is_relevant(grade))


@evaluator("ndcg")
class Ndcg(_RankMetric):
    """nDCG@k with log2(rank + 1) discount; linear gain (the grade), as trec_eval,
    or exponential (``2**grade - 1``)."""

    options_model = NdcgOptions
    metric_name = "ndcg"
