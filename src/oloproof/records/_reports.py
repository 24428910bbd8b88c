"""What a run's report holds, as ``oloproof run --json`` and ``show --json`` print it.

Plain typed dictionaries: the report is printed (and its metric rows written) as
it is built, so its JSON is exactly these values.
"""

from __future__ import annotations

from typing_extensions import TypedDict

from oloproof.records._stored import StoredManifest

__all__ = [
    "CaseFacts",
    "CatalogueEntry",
    "CatalogueResult",
    "EstimateLine",
    "JudgeEstimate",
    "LabellingRow",
    "MetricSummary",
    "RunReport",
    "ShownTexts",
]


class MetricSummary(TypedDict, total=False):
    """One criterion's estimate, interval and counts, overall or over one slice value
    (the JSON form of `MetricRow`, less the run id).

    Attributes:
        criterion: The criterion.
        slice: The slice's name; ``None`` for the overall row.
        slice_value: The slice value; ``None`` for the overall row.
        scored: Whether it has the support to carry an estimate.
        observed: Cases judged.
        missing: Cases missing because a stage or the judge failed.
        judge_errors: Of those, the ones the judge failed on.
        excluded: Cases the criterion does not apply to.
        successes: Passes, for proportions.
        estimate: The proportion or mean.
        low: The interval's lower bound.
        high: The interval's upper bound.
        confidence: The interval's confidence level.
        method: How the interval was computed.
        kind: ``proportion``, ``mean`` or ``count``.
        samples: With repeats: the observed samples (cases × repeats) the case means rest on.
        repeats: With repeats: the most generation repeats of one case.
        flaky: With repeats: the observed cases whose samples disagree.
        judge_disagreement: With judge repeats: the share of judged samples on which the
            judge's own repeats disagree.
    """

    criterion: str
    slice: str | None
    slice_value: str | None
    scored: bool
    observed: int
    missing: int
    judge_errors: int
    excluded: int
    successes: int | None
    estimate: float | None
    low: float | None
    high: float | None
    confidence: float
    method: str | None
    kind: str
    samples: int | None
    repeats: int | None
    flaky: int | None
    judge_disagreement: float | None


class EstimateLine(TypedDict, total=False):
    """One basis of a judge estimate: the judge alone, the humans alone, or PPI.

    Attributes:
        basis: ``judge only``, ``human only`` or ``ppi``.
        n: The cases it rests on.
        estimate: The estimate.
        low: The interval's lower bound.
        high: The interval's upper bound.
        method: How the interval was computed.
        kind: ``proportion`` or ``mean`` (set when the line is printed).
        confidence: The interval's confidence level (set when the line is printed).
    """

    basis: str
    n: int
    estimate: float | None
    low: float | None
    high: float | None
    method: str | None
    kind: str
    confidence: float


class JudgeEstimate(TypedDict, total=False):
    """A judge's metric corrected by a uniform labelled sample (prediction-powered inference).

    Attributes:
        criterion: The judge's criterion.
        kind: ``proportion`` or ``mean``.
        sample_id: The labelled sample.
        confidence: The intervals' confidence level.
        labelled: Labelled cases the judge scored.
        judged: Cases the judge scored.
        drawn: The sample's size.
        uniform: Whether the sample was drawn uniformly.
        lam: PPI++'s power-tuning parameter.
        fallback: Why the PPI line is the humans' interval; ``None`` when it is not.
        method: The PPI interval's method.
        disagreements: Labelled cases where the judge and the humans differ.
        human_passes: Passes among the human labels.
        human_failures: Failures among them.
        min_disagreements: The disagreements PPI++ needs.
        min_labels: The labels PPI++ needs for scores.
        rows: The judge-only, human-only and PPI lines.
    """

    criterion: str
    kind: str
    sample_id: str
    confidence: float
    labelled: int
    judged: int
    drawn: int
    uniform: bool
    lam: float | None
    fallback: str | None
    method: str
    disagreements: int
    human_passes: int
    human_failures: int
    min_disagreements: int
    min_labels: int
    rows: list[EstimateLine]


class RunReport(StoredManifest, total=False):
    """A run's manifest with its metrics, and its judges' estimates where labelled.

    Attributes:
        metrics: The metric rows, overall then per slice.
        judge_estimates: The judge metrics corrected by human labels.
    """

    metrics: list[MetricSummary]
    judge_estimates: list[JudgeEstimate]


class CaseFacts(TypedDict):
    """What a case's slices are computed from (columns of the ``cases`` table).

    Attributes:
        best_relevant_position: 1-based position of the first relevant candidate.
        relevant_position: That position as a slice label.
        context_truncated: Whether the token budget dropped a passage.
    """

    best_relevant_position: int | None
    relevant_position: str | None
    context_truncated: bool | None


class ShownTexts(TypedDict):
    """What a labeller sees of a case: what the run's judge read.

    Attributes:
        query: The query.
        context: The context the generator saw.
        answer: The answer.
    """

    query: str | None
    context: str | None
    answer: str | None


class LabellingRow(ShownTexts, total=False):
    """A line of a labelling file: one drawn case, ``label`` left ``null`` to fill in.

    Attributes:
        sample: The sample's id.
        case_id: The case.
        criterion: The judge's criterion.
        label: The person's label.
        scale: What a label may be.
        annotator: Who labelled it.
        note: The labeller's note.
        judge_score: The judge's score (with ``--show-reason``).
        judge_reason: The judge's reason (with ``--show-reason``).
    """

    sample: str
    case_id: str
    criterion: str
    label: str | int | None
    scale: str
    annotator: str | None
    note: str | None
    judge_score: float | None
    judge_reason: str | None


class CatalogueResult(TypedDict):
    """One judgment in the evaluator catalogue's result shape.

    Attributes:
        type: ``azure_ai_evaluator`` for the catalogue's evaluators, else ``oloproof``.
        name: The criterion.
        metric: The evaluator's metric.
        score: The raw score.
        label: ``pass`` or ``fail``.
        reason: The evaluator's reason, or why the row is not scored.
        threshold: The threshold of the verdict.
        passed: Whether the case passed.
        status: ``observed``, ``excluded`` or ``missing``.
    """

    type: str
    name: str
    metric: str | None
    score: float | None
    label: str | None
    reason: str | None
    threshold: float | None
    passed: bool | None
    status: str


class CatalogueEntry(TypedDict):
    """One row's results in the catalogue's shape.

    Attributes:
        id: The case.
        results: Its judgments.
    """

    id: str
    results: list[CatalogueResult]
