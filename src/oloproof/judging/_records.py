"""Typed records of judge validation: samples, human labels, validation records."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from oloproof.records import Record

__all__ = [
    "Check",
    "Disagreement",
    "Estimate",
    "HumanLabel",
    "JudgeRequirements",
    "SampleRecord",
    "ValidationRecord",
]

Label = Literal["pass", "fail"] | int


class SampleRecord(Record):
    """The cases of one run drawn for labelling (``samples/<sample_id>/sample.json``)."""

    sample_id: str
    """``smp_`` and a hash of the run, criterion, seed and size: the labels file names it
    (``lbl_`` and a hash of the labels for a ``given`` set)."""

    run_id: str
    """The run whose cases were drawn."""

    criterion: str
    """The judge criterion the labels are for."""

    judge_id: str
    """The identity hash of the judge that judged the run on the criterion."""

    seed: int
    """The seed of the draw."""

    size: int
    """How many cases were drawn."""

    population: int
    """How many cases the judge scored on the criterion (the frame drawn from)."""

    kind: Literal["drawn", "given"] = "drawn"
    """``drawn`` by ``oloproof judge sample``; ``given`` for labels brought without a
    draw (they validate the judge on those cases; PPI does not use them)."""

    stratify: str | None = None
    """The slice the draw was stratified by (proportional allocation); ``None`` for a
    uniform draw, the only kind prediction-powered inference may use."""

    case_ids: list[str]
    """The drawn cases, sorted."""

    created_at: str
    """When the sample was drawn (UTC, ISO 8601)."""


class HumanLabel(Record):
    """One person's label of one case on one criterion."""

    case_id: str
    """The labelled case."""

    label: Label
    """``pass``/``fail``, or the judge's 1-5 scale."""

    annotator: str | None = None
    """Who labelled it (optional; one label per case and annotator)."""

    note: str | None = None
    """The labeller's note."""

    line: int
    """The line of the labels file it came from."""


class Estimate(Record):
    """A figure with its interval."""

    value: float | None
    """The estimate; ``None`` when undefined (e.g. κ when both raters are constant)."""

    low: float | None = None
    """Lower bound of the interval."""

    high: float | None = None
    """Upper bound of the interval."""

    n: int
    """How many items it is computed over."""

    method: str | None = None
    """How the interval was computed."""


class Check(Record):
    """One pass criterion of a validation, as measured."""

    name: str
    """``labels`` or ``kappa_low``."""

    required: float
    """The bound it must reach."""

    measured: float | None
    """What the validation measured (``None``: undefined, which fails)."""

    ok: bool
    """Whether ``measured`` reaches ``required``."""


class Disagreement(Record):
    """A labelled case on which the judge and the humans differ."""

    case_id: str
    """The case."""

    judge_score: float | None
    """The judge's score."""

    judge_passed: bool | None
    """The judge's verdict."""

    human: Label
    """The humans' (consensus) label."""

    judge_reason: str | None = None
    """The judge's stated reason."""

    note: str | None = None
    """The labellers' notes, joined."""


class JudgeRequirements(BaseModel):
    """What a judge must pass before a rule over its metric may gate (``judges:`` in a policy)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    min_labels: int = Field(default=50, ge=1, strict=True)
    """Human-labelled cases the validation needs."""

    min_kappa_low: float = Field(default=0.6, ge=-1.0, le=1.0, allow_inf_nan=False)
    """The lower bound of Cohen's κ (weighted κ for judges reporting a mean score) must reach this."""

    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    """Confidence level of the κ interval whose lower bound is checked."""


class ValidationRecord(Record):
    """A judge's agreement with human labels (``validations/<judge_id>.json``)."""

    judge_id: str
    """The hash of `judge`: the key the gate looks the record up by."""

    judge: dict[str, JsonValue]
    """The judge's identity: type, version, model, provider type, prompt hashes, threshold."""

    criterion: str
    """The criterion the run reported the judge's verdicts as."""

    run_id: str
    """The run whose judgments were validated."""

    sample_id: str
    """The sample the labels are for."""

    labels_file: str
    """The labels file's name (without its folder)."""

    labels_sha256: str
    """Hash of the labels as read (case, label, annotator)."""

    scale: Literal["pass_fail", "score"]
    """Whether the humans labelled pass/fail or on the judge's 1-5 scale."""

    labels: int
    """Labelled cases compared (one consensus label per case)."""

    annotators: int
    """Distinct annotators (unnamed labels count as one)."""

    ties: int
    """Cases left out because their annotators disagreed evenly."""

    accuracy: Estimate
    """Share of labelled cases where the judge's verdict equals the humans'."""

    kappa: Estimate
    """Cohen's κ between the judge's and the humans' pass/fail verdicts."""

    weighted_kappa: Estimate | None = None
    """Quadratically weighted κ on the 1-5 scale (when the humans labelled on it)."""

    true_positive_rate: Estimate
    """Share of the cases the humans passed that the judge passed."""

    false_positive_rate: Estimate
    """Share of the cases the humans failed that the judge passed."""

    judge_pass_rate: float | None
    """The judge's pass rate on the labelled cases."""

    human_pass_rate: float | None
    """The humans' pass rate on the labelled cases."""

    disagreements: list[Disagreement]
    """Up to ten cases where the judge and the humans differ."""

    requirements: JudgeRequirements
    """The pass criteria it was checked against."""

    checks: list[Check]
    """Each criterion as measured."""

    passed: bool
    """Whether every check held."""

    confidence: float
    """Confidence level of every interval in the record."""

    created_at: str
    """When it was validated (UTC, ISO 8601)."""
