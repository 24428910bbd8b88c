"""``document_retrieval``: the catalogue's search-quality composite, one output per metric.

Reads the catalogue's two inputs, ``retrieval_ground_truth``
(``[{document_id, query_relevance_label}]``) and ``retrieved_documents``
(``[{document_id, relevance_score}]``), and reports ``ndcg@3``, ``xdcg@3``,
``fidelity``, ``top1_relevance``, ``top3_max_relevance``, ``holes``,
``holes_ratio``, ``total_retrieved_documents`` and ``total_ground_truth_documents``
as the criteria ``document_retrieval.<metric>`` (``<criterion>.<metric>`` when the
entry names its own ``criterion``), each passing at the catalogue's default
threshold unless ``thresholds`` (or the library's own ``fidelity_threshold`` ...
parameters) overrides it. On valid input the values are those
of ``DocumentRetrievalEvaluator`` in ``azure-ai-evaluation`` 1.18 to 1e-9 (the
formulas are in :mod:`oloproof.metrics._composite`; the agreement is tested on the
library's own outputs).

Where the inputs come from: a ``data_mapping`` (or, for recorded rows, the row's
fields of those names). Without one, a staged RAG run supplies them: the retrieved
documents are the retrieval's candidates, scored by position so the ranking is the
retriever's order (the first of ``n`` candidates scores ``n``, the last 1; a
document retrieved as several chunks counts at its first), and the ground truth is
``expected.relevant``, each document with its highest ``grade``. Only that
derivation of the retrieved documents needs a RAG system.

Validation is strict, before anything runs (row inputs) or before judging (inputs
read from the system's output): each input is a list of at most 10,000 objects;
``document_id`` is a non-empty string or an integer, and one case uses one kind
(``1`` and ``"1"`` would never match); ``query_relevance_label`` is an integer in
``[ground_truth_label_min, ground_truth_label_max]`` (not a boolean, a string or a
float such as ``2.0``); ``relevance_score`` is a finite number (not a boolean); the
ground truth holds at least one document. A derived ground truth's grades must be
whole numbers in the range.

Where the library is wrong, this evaluator departs from it:

* **Fidelity with labels reaching 10.** The library orders its label counts as
  strings (``"10" < "2"``) but its weights as numbers, so once
  ``ground_truth_label_max >= 10`` every label is weighed with another label's
  weight. Here each label ``l`` weighs ``2**(l + 1) - 1``.
* **Duplicates.** The library keeps a document's last label and last score but
  counts every entry in the totals and in ``holes_ratio``'s denominator. Here a
  document counts once: in the ground truth with its highest label, in the ranking
  at its best rank (its highest score, the first of equal ones). A hole listed
  twice is one hole, and the totals count documents.
* **Negative label ranges.** With ``ground_truth_label_min < 0`` the library's
  gains ``2**l - 1`` turn negative, the ideal DCG can be zero (it divides by
  zero) and a hole, scored 0, counts as relevant in fidelity. Such ranges are
  refused; shift the labels so the lowest is 0.
* **Stricter input.** The library accepts boolean labels and scores, NaN and
  infinite scores, any hashable id, and a ``retrieved_documents`` that is not a
  list (read as empty); all are refused here. ``ground_truth_label_max`` is at most
  100, so the exponential weights stay finite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, cast

from pydantic import Field, JsonValue, ValidationInfo, field_validator, model_validator
from typing_extensions import TypedDict

from oloproof._exceptions import DatasetError
from oloproof.evaluators._agent import absent_context, check_messages, ranked_documents
from oloproof.evaluators._base import (
    MISSING,
    UNMAPPED,
    CaseView,
    Evaluator,
    EvaluatorOptions,
    JudgeContext,
    Output,
    Verdict,
    evaluator,
)
from oloproof.evaluators._fields import relevance_labels
from oloproof.metrics._composite import (
    DOCUMENT_RETRIEVAL_LOWER_IS_BETTER,
    MAX_LABEL,
    XDCG_SCALE,
    RankedDocuments,
    document_retrieval,
    document_retrieval_thresholds,
    rank_documents,
)
from oloproof.metrics._composite_batch import document_retrieval_batch

__all__ = [
    "MAX_DOCUMENTS",
    "SDK_THRESHOLD_PARAMETERS",
    "DocumentRetrieval",
    "DocumentRetrievalOptions",
    "check_id_kinds",
    "parse_ground_truth",
    "parse_retrieved_documents",
]

GROUND_TRUTH, RETRIEVED = "retrieval_ground_truth", "retrieved_documents"
LABEL, SCORE = "query_relevance_label", "relevance_score"
MAX_DOCUMENTS = 10_000
"""The most items either input may hold (the library's limit too)."""
_SHOWN_HOLES = 10

DocumentId = str | int

SDK_THRESHOLD_PARAMETERS = {
    "ndcg_threshold": "ndcg@3",
    "xdcg_threshold": "xdcg@3",
    "fidelity_threshold": "fidelity",
    "top1_relevance_threshold": "top1_relevance",
    "top3_max_relevance_threshold": "top3_max_relevance",
    "total_retrieved_documents_threshold": "total_retrieved_documents",
    "total_ground_truth_documents_threshold": "total_ground_truth_documents",
}
"""The library's threshold parameters (a catalogue criterion's
``initialization_parameters``) and the metric each sets, at ``k = 3``."""


class DocumentRetrievalOptions(EvaluatorOptions):
    """Options of ``document_retrieval``."""

    ground_truth_label_min: int = Field(default=0, strict=True)
    """The lowest label, meaning "irrelevant" (fidelity ignores it): an integer >= 0."""

    ground_truth_label_max: int = Field(default=4, strict=True, validate_default=True)
    """The highest label: an integer above the minimum, at most 100."""

    k: int = Field(default=3, ge=1, strict=True)
    """The cut-off of nDCG, xDCG and the max relevance (the catalogue's is 3); fidelity
    and the hole counts look at every retrieved document."""

    thresholds: dict[str, Annotated[float, Field(strict=True, allow_inf_nan=False)]] = Field(default_factory=dict)
    """Pass thresholds by metric, replacing the catalogue's defaults (e.g.
    ``{fidelity: 0.3}``); keys are the metric names at ``k``, such as ``ndcg@3``.
    Thresholds only turn scores into verdicts: changing one judges nothing again. The
    library's parameters (``fidelity_threshold: 0.3`` ...) are accepted too."""

    @model_validator(mode="before")
    @classmethod
    def _library_thresholds(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not any(key in data for key in SDK_THRESHOLD_PARAMETERS):
            return data
        data = dict(data)
        thresholds = data.get("thresholds")
        if thresholds is not None and not isinstance(thresholds, dict):
            return data  # the field's own validation reports it
        thresholds = dict(thresholds or {})
        k = data.get("k", 3)
        k = k if isinstance(k, int) and not isinstance(k, bool) and k >= 1 else 3
        for key, metric in SDK_THRESHOLD_PARAMETERS.items():
            if key not in data:
                continue
            value = data.pop(key)
            metric = metric.replace("@3", f"@{k}").replace("top3_", f"top{k}_")
            if value is None:  # the library's "default"
                continue
            if metric in thresholds:
                raise ValueError(f"{key} and thresholds.{metric} both set the threshold of {metric}")
            thresholds[metric] = value
        data["thresholds"] = thresholds
        return data

    @field_validator("ground_truth_label_min")
    @classmethod
    def _min_is_not_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError(
                f"ground_truth_label_min must be >= 0, got {value}: with negative labels the "
                "exponential gains turn negative; shift the labels so the lowest is 0"
            )
        return value

    @field_validator("ground_truth_label_max")
    @classmethod
    def _max_is_above_min(cls, value: int, info: ValidationInfo) -> int:
        low = info.data.get("ground_truth_label_min")
        if low is not None and value <= low:
            raise ValueError(f"ground_truth_label_max ({value}) must be greater than ground_truth_label_min ({low})")
        if value > MAX_LABEL:
            raise ValueError(f"ground_truth_label_max must be at most {MAX_LABEL}, got {value}")
        return value

    @field_validator("thresholds")
    @classmethod
    def _known_metrics(cls, value: dict[str, float], info: ValidationInfo) -> dict[str, float]:
        known = document_retrieval_thresholds(info.data.get("k") or 3)
        for name in value:
            if name not in known:
                raise ValueError(f"no metric {name!r} to set a threshold for (metrics: {', '.join(known)})")
        return value


# -- reading the inputs -----------------------------------------------------------


def _items(value: Any, name: str, shape: str) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        raise DatasetError(f"{name} must be a list of {shape} objects, got {type(value).__name__}", field=name)
    if len(value) > MAX_DOCUMENTS:
        raise DatasetError(f"{name} holds {len(value)} items; at most {MAX_DOCUMENTS} are allowed", field=name)
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise DatasetError(
                f"each item must be a {shape} object, got {type(item).__name__}", field=f"{name}[{index}]"
            )
    return value


def _document_id(item: Mapping[str, Any], where: str) -> DocumentId:
    doc = item.get("document_id")
    if doc is None:
        raise DatasetError("the item has no document_id", field=f"{where}.document_id")
    if isinstance(doc, bool) or not isinstance(doc, str | int) or doc == "":
        raise DatasetError(
            f"document_id must be a non-empty string or an integer, got {doc!r}", field=f"{where}.document_id"
        )
    return doc


def parse_ground_truth(value: Any, low: int, high: int) -> list[tuple[DocumentId, int]]:
    """``retrieval_ground_truth`` as ``(document id, label)`` pairs, checked.

    Args:
        value: The input as read: a list of ``{document_id, query_relevance_label}``.
        low: ``ground_truth_label_min``.
        high: ``ground_truth_label_max``.

    Returns:
        The pairs, in input order.

    Raises:
        DatasetError: The input is not a non-empty list of at most 10,000 objects,
            or an item's id or label is invalid; ``field`` names it, e.g.
            ``retrieval_ground_truth[3].query_relevance_label``.
    """
    items = _items(value, GROUND_TRUTH, "{document_id, query_relevance_label}")
    if not items:
        raise DatasetError(f"{GROUND_TRUTH} is empty: it needs at least one judged document", field=GROUND_TRUTH)
    pairs = []
    for index, item in enumerate(items):
        where = f"{GROUND_TRUTH}[{index}]"
        doc = _document_id(item, where)
        label = item.get(LABEL)
        if isinstance(label, bool) or not isinstance(label, int):
            raise DatasetError(f"the label must be an integer, got {label!r}", field=f"{where}.{LABEL}")
        if not low <= label <= high:
            raise DatasetError(
                f"the label {label} is outside [ground_truth_label_min, ground_truth_label_max] = [{low}, {high}]",
                field=f"{where}.{LABEL}",
            )
        pairs.append((doc, label))
    return pairs


def parse_retrieved_documents(value: Any) -> list[tuple[DocumentId, int | float]]:
    """``retrieved_documents`` as ``(document id, score)`` pairs, checked.

    Args:
        value: The input as read: a list of ``{document_id, relevance_score}``.

    Returns:
        The pairs, in input order (an empty list is an empty ranking).

    Raises:
        DatasetError: The input is not a list of at most 10,000 objects, or an
            item's id or score is invalid; ``field`` names it, e.g.
            ``retrieved_documents[3].relevance_score``.
    """
    pairs = []
    for index, item in enumerate(_items(value, RETRIEVED, "{document_id, relevance_score}")):
        where = f"{RETRIEVED}[{index}]"
        doc = _document_id(item, where)
        score = item.get(SCORE)
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            raise DatasetError(f"the score must be a finite number, got {score!r}", field=f"{where}.{SCORE}")
        pairs.append((doc, score))
    return pairs


def check_id_kinds(truth: list[tuple[DocumentId, int]], retrieved: list[tuple[DocumentId, Any]]) -> None:
    """Refuse a case whose ids mix strings and integers (the first id sets the kind).

    Raises:
        DatasetError: ``field`` names the first id of the other kind.
    """
    kind = type(truth[0][0]) if truth else None
    for name, pairs in ((GROUND_TRUTH, truth), (RETRIEVED, retrieved)):
        for index, (doc, _) in enumerate(pairs):
            kind = kind or type(doc)
            if type(doc) is not kind:
                expected = "strings" if kind is str else "integers"
                raise DatasetError(
                    f"document ids of one case must all be strings or all integers; this case's are {expected}, "
                    f"got {doc!r}",
                    field=f"{name}[{index}].document_id",
                )


def _derived_ground_truth(relevant: list[dict[str, JsonValue]], low: int, high: int) -> list[tuple[DocumentId, int]]:
    pairs: list[tuple[DocumentId, int]] = []
    for index, unit in enumerate(relevant):
        grade = unit.get("grade", 1.0)
        # The cases file stores grades as floats: a whole number is a label.
        if isinstance(grade, bool) or not isinstance(grade, int | float) or not float(grade).is_integer():
            raise DatasetError(
                f"document_retrieval reads grades as labels: they must be whole numbers, got {grade!r}",
                field=f"expected.relevant[{index}].grade",
            )
        if not low <= grade <= high:
            raise DatasetError(
                f"the grade {grade:g} is outside [ground_truth_label_min, ground_truth_label_max] = [{low}, {high}]",
                field=f"expected.relevant[{index}].grade",
            )
        pairs.append((str(unit["doc_id"]), int(grade)))
    return pairs


# -- the evaluator ----------------------------------------------------------------


class DocumentRetrievalFields(TypedDict, total=False):
    """What ``document_retrieval`` reads: both lists, or why the system's were invalid.

    Attributes:
        retrieval_ground_truth: ``[document_id, label]`` pairs.
        retrieved_documents: ``[document_id, relevance_score]`` pairs, in the retriever's order.
        invalid: What is wrong with an input the system produced.
    """

    retrieval_ground_truth: list[list[DocumentId]]
    retrieved_documents: list[list[DocumentId | float]]
    invalid: str


@evaluator("document_retrieval")
class DocumentRetrieval(Evaluator[DocumentRetrievalFields]):
    """nDCG, xDCG, fidelity, max relevance and holes of a ranking against labelled documents."""

    options_model = DocumentRetrievalOptions
    options: DocumentRetrievalOptions
    inputs = (GROUND_TRUTH, RETRIEVED, "response")
    """``response``: an agent's transcript, whose context tools' results are the ranking."""
    verdict_options = ("thresholds",)

    @property
    def needs_retrieval(self) -> bool:
        """Only deriving the retrieved documents from the retrieval needs a RAG system
        (or an agent's context tools)."""
        return RETRIEVED not in self.mapping and "response" not in self.mapping

    @property
    def reads_output(self) -> bool:  # type: ignore[override]  # decided by the mapping, not the class
        """Whether it reads the system's output: only through a ``sample`` mapping."""
        return any(ref.namespace == "sample" for template in self.mapping.values() for ref in template.references)

    def metric_names(self) -> tuple[str, ...]:
        """The metrics, in the order they are reported: ``ndcg@k`` first."""
        k = self.options.k
        return (
            f"ndcg@{k}", f"xdcg@{k}", "fidelity", "top1_relevance", f"top{k}_max_relevance", "holes",
            "holes_ratio", "total_retrieved_documents", "total_ground_truth_documents",
        )  # fmt: skip

    def criterion_of(self, metric: str) -> str:
        """The criterion a metric is reported under, e.g. ``document_retrieval.ndcg@3``."""
        return f"{self.criterion}.{metric}"

    def outputs(self) -> tuple[Output, ...]:
        # Made once: its options are frozen, and judging asks for them once a row.
        made = self.__dict__.get("_outputs")
        if made is None:
            made = self.__dict__["_outputs"] = self._make_outputs()
        return cast("tuple[Output, ...]", made)

    def _make_outputs(self) -> tuple[Output, ...]:
        k, high = self.options.k, self.options.ground_truth_label_max
        thresholds = {**document_retrieval_thresholds(k), **self.options.thresholds}
        # Holes score 0, so the relevance outputs start at 0 whatever the minimum.
        ranges = {
            f"xdcg@{k}": (0.0, XDCG_SCALE * high),
            "top1_relevance": (0.0, float(high)),
            f"top{k}_max_relevance": (0.0, float(high)),
        }
        counts = {"holes", "total_retrieved_documents", "total_ground_truth_documents"}
        outputs = []
        for metric in self.metric_names():
            low_high = (None, None) if metric in counts else ranges.get(metric, (0.0, 1.0))
            outputs.append(Output(
                self.criterion_of(metric), "count" if metric in counts else "score",
                low=low_high[0], high=low_high[1],
                higher_is_better=metric not in DOCUMENT_RETRIEVAL_LOWER_IS_BETTER, threshold=thresholds[metric],
            ))  # fmt: skip
        return tuple(outputs)

    # -- reading --------------------------------------------------------------------

    def _from_system(self, case: CaseView, name: str) -> bool:
        template = self.mapping.get(name)
        return (
            not case.recorded
            and template is not None
            and any(reference.namespace == "sample" for reference in template.references)
        )

    def _row_field(self, name: str) -> str:
        template = self.mapping.get(name)
        if template is not None and len(template.references) == 1:
            return template.references[0].path or name
        return name

    def _ground_truth(self, case: CaseView) -> list[tuple[DocumentId, int]] | Verdict:
        low, high = self.options.ground_truth_label_min, self.options.ground_truth_label_max
        value = self.mapped(case, GROUND_TRUTH)
        if value is UNMAPPED:
            relevant = relevance_labels(case.expected)
            if not relevant:
                return Verdict.excluded("no_relevance_labels")
            return _derived_ground_truth(relevant, low, high)
        if value is MISSING:
            return Verdict.excluded(f"missing_field:{GROUND_TRUTH}")
        return parse_ground_truth(value, low, high)

    def _retrieved(self, case: CaseView) -> list[tuple[DocumentId, int | float]] | Verdict:
        value = self.mapped(case, RETRIEVED)
        agent = self.extracted(case, value)
        if isinstance(agent, Verdict):
            return agent
        if agent is not None:  # the context tools' results in call order, then rank, are the ranking
            value = ranked_documents(agent)
        if value is UNMAPPED:
            if case.candidates is None:
                return Verdict.excluded(absent_context(case.output_items, "no_retrieval"))
            count = len(case.candidates)
            return [(str(candidate["doc_id"]), count - index) for index, candidate in enumerate(case.candidates)]
        if value is MISSING:
            return Verdict.excluded(f"missing_field:{RETRIEVED}")
        return parse_retrieved_documents(value)

    def check_case(self, case: CaseView) -> None:
        # What the system produces is checked when it is read; the row's own
        # inputs are checked here, before anything runs.
        if not self._from_system(case, "response"):
            check_messages(self.mapped(case, "response"), self._row_field("response"), self.context_tools)
        truth = None if self._from_system(case, GROUND_TRUTH) else self._ground_truth(case)
        retrieved = None
        if RETRIEVED in self.mapping or case.recorded:
            retrieved = None if self._from_system(case, RETRIEVED) else self._retrieved(case)
        if isinstance(truth, list) and isinstance(retrieved, list):
            check_id_kinds(truth, retrieved)
        elif isinstance(truth, list):
            check_id_kinds(truth, [])
        elif isinstance(retrieved, list):
            check_id_kinds([], retrieved)

    def read(self, case: CaseView) -> DocumentRetrievalFields | Verdict:
        try:
            truth = self._ground_truth(case)
            if isinstance(truth, Verdict):
                return truth
            retrieved = self._retrieved(case)
            if isinstance(retrieved, Verdict):
                return retrieved
            check_id_kinds(truth, retrieved)
        except DatasetError as error:
            # Rows were checked before the run: this is the system's output, and a
            # malformed one is the judge's error for this case, not a crash of the run.
            return {"invalid": f"{error.field}: {error.message}"}
        return {
            "retrieval_ground_truth": [[doc, label] for doc, label in truth],
            "retrieved_documents": [[doc, score] for doc, score in retrieved],
        }

    # -- judging --------------------------------------------------------------------

    def judge(self, fields: DocumentRetrievalFields, ctx: JudgeContext) -> Verdict:
        if "invalid" in fields:
            return Verdict.error(fields["invalid"])
        options = self.options
        ranked = _ranked(fields)
        values = document_retrieval(
            ranked.labels, ranked.truth, k=options.k,
            ground_truth_label_min=options.ground_truth_label_min,
            ground_truth_label_max=options.ground_truth_label_max,
        )  # fmt: skip
        return self._verdict(ranked, values)

    def judge_many(self, fields: list[DocumentRetrievalFields], ctx: JudgeContext) -> list[Verdict]:
        """The verdicts of many cases' fields at once, each equal to `judge`'s.

        Raises:
            StatsError: If any case's labels are invalid; `judge` then tells which.
        """
        valid = [index for index, one in enumerate(fields) if "invalid" not in one]
        ranked = [_ranked(fields[index]) for index in valid]
        options = self.options
        batch = document_retrieval_batch(
            ranked, k=options.k, ground_truth_label_min=options.ground_truth_label_min,
            ground_truth_label_max=options.ground_truth_label_max,
        )  # fmt: skip
        columns = {metric: array.tolist() for metric, array in batch.items()}
        scored = {
            index: self._verdict(ranked[position], {metric: column[position] for metric, column in columns.items()})
            for position, index in enumerate(valid)
        }
        return [scored[index] if index in scored else Verdict.error(one["invalid"]) for index, one in enumerate(fields)]

    def _verdict(self, ranked: RankedDocuments, values: dict[str, float]) -> Verdict:
        k = self.options.k
        holes = [doc for doc, label in zip(ranked.ids, ranked.labels.tolist(), strict=True) if math.isnan(label)]
        reason = None
        if math.isnan(values["fidelity"]):
            reason = "fidelity is undefined: no ground-truth label is above ground_truth_label_min"
        return Verdict(
            score=values[f"ndcg@{k}"],
            scores={self.criterion_of(metric): values[metric] for metric in self.metric_names()},
            reason=reason,
            detail={"unlabelled": holes[:_SHOWN_HOLES]} if holes else {},
        )


def _ranked(fields: DocumentRetrievalFields) -> RankedDocuments:
    return rank_documents(
        # As read: whole labels, and scores kept as given (an integer beyond 2**53 is exact).
        ((doc, label) for doc, label in fields.get("retrieval_ground_truth", [])),  # type: ignore[misc]
        ((doc, score) for doc, score in fields.get("retrieved_documents", [])),  # type: ignore[misc]
    )
