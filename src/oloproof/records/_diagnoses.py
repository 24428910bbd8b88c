"""A diagnosis as ``diagnoses/<id>.json`` holds it, read into typed fields.

The stored document stays the JSON the diagnosis flow wrote (its bytes and its
id are of that JSON); these models are how it is read back for reports.
"""

from __future__ import annotations

from typing import NotRequired

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

__all__ = [
    "ChildRuns",
    "DiagnosedCase",
    "DiagnosisRecord",
    "DiagnosisSettings",
    "Implicated",
    "ImplicatedEntry",
    "LabelledFailures",
    "StoredDiagnosis",
]


class _Read(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, frozen=True, extra="forbid")


class DiagnosedCase(_Read):
    """One failed case of the diagnosis, and its label."""

    case_id: str
    """The case."""

    label: str
    """The failure label, e.g. ``RANKED_OUT``."""

    reason: str
    """The label's reason code."""

    strength: str
    """What the label rests on, e.g. ``intervention_recovery``."""

    best_relevant_position: int | None = None
    """1-based position of the first relevant candidate in the parent run."""

    control_passed: bool = False
    """Whether the plain re-execution passed."""

    intervention_passed: bool = False
    """Whether the gold-context re-execution passed."""

    replay_control_passed: bool = False
    """Whether the replayed control passed (top-k and reranker diagnoses)."""

    intervention_recovered: bool = False
    """Whether the intervention recovered the case (top-k and reranker diagnoses)."""

    repeats: int | None = None
    """With repeats: the repeats the gold-context re-execution observed."""

    original_passes: int | None = None
    """With repeats: the repeats that passed in the diagnosed run."""

    control_passes: int | None = None
    """With repeats: the repeats that passed in the control."""

    intervention_passes: int | None = None
    """With repeats: the repeats that passed with the gold context."""

    replay_control_passes: int | None = None
    """With repeats: the repeats that passed in the replayed control (top-k and reranker)."""

    replay_intervention_passes: int | None = None
    """With repeats: the repeats that passed under the replayed intervention (top-k and reranker)."""


class Implicated(_Read):
    """The factor behind the most failures."""

    factor: str
    """The factor, e.g. ``context budget`` or ``generation``."""

    count: int
    """The failures it is behind."""

    among: int
    """Out of how many."""

    experiments: list[str] | None = None
    """The candidate experiments to name, where the system's kind changes them (an
    agent's); ``None``: the factor's own."""


class DiagnosisSettings(_Read):
    """The intervention's settings."""

    top_k: int | None = None
    """The top-k tried (``top-k``)."""

    reranker: str | None = None
    """The reranker tried, ``module:function`` (``reranker``)."""


class ChildRuns(_Read):
    """The re-executions of the diagnosis, by role."""

    gold_context: str | None = None
    """The run with the gold context."""

    control: str | None = None
    """The plain re-execution."""

    intervention: str | None = None
    """The run with the intervention (top-k and reranker diagnoses)."""

    replay_control: str | None = None
    """The replayed control (top-k and reranker diagnoses)."""


class DiagnosisRecord(_Read):
    """A diagnosis of a run's failures on one criterion."""

    diagnosis_id: str = ""
    """``sha256:`` of the diagnosis's content."""

    parent_run_id: str = ""
    """The diagnosed run."""

    criterion: str = ""
    """The criterion whose failures were diagnosed."""

    threshold: float | None = None
    """The score below which a case failed (score criteria)."""

    intervention: str = "gold-context"
    """``gold-context``, ``top-k`` or ``reranker``."""

    settings: DiagnosisSettings = Field(default_factory=DiagnosisSettings)
    """The intervention's settings."""

    labels_from: str | None = None
    """The gold-context diagnosis the labels come from (top-k and reranker diagnoses)."""

    without_gold: list[str] = Field(default_factory=list)
    """Failed cases without gold context (not diagnosable)."""

    cases: list[DiagnosedCase] = Field(default_factory=list)
    """The diagnosed cases."""

    recovered: int = 0
    """Cases the intervention recovered."""

    implicated: Implicated | None = None
    """The factor behind the most failures, if any."""

    child_runs: ChildRuns = Field(default_factory=ChildRuns)
    """The re-executions, by role."""

    request: str | None = None
    """The identity of the request the diagnosis answered."""

    @property
    def repeats(self) -> int | None:
        """The repeats each re-execution sampled a case (``None``: a run without repeats)."""
        return max((case.repeats for case in self.cases if case.repeats is not None), default=None)


class ImplicatedEntry(TypedDict):
    """``implicated`` as the diagnosis flow writes it (see `Implicated`).

    Attributes:
        factor: The factor.
        count: The failures it is behind.
        among: Out of how many.
        experiments: The candidate experiments, written only where the system's kind
            changes them (an agent's).
    """

    factor: str
    count: int
    among: int
    experiments: NotRequired[list[str]]


class LabelledFailures(TypedDict):
    """What labelling a diagnosis's failures adds to its record.

    Attributes:
        cases: Each case's label, as `DiagnosedCase` reads it.
        recovered: Cases the gold context recovered.
        implicated: The factor behind the most failures, if any.
    """

    cases: list[dict[str, str | int | bool | None]]
    recovered: int
    implicated: ImplicatedEntry | None


class StoredDiagnosis(TypedDict, total=False):
    """A diagnosis as the diagnosis flow builds, stores and returns it (see `DiagnosisRecord`).

    Its id is the hash of this JSON, so it is kept as built, never a model's dump.

    Attributes:
        diagnosis_id: ``sha256:`` of the diagnosis's content.
        parent_run_id: The diagnosed run.
        criterion: The criterion whose failures were diagnosed.
        threshold: The score below which a case failed.
        intervention: ``gold-context``, ``top-k`` or ``reranker``.
        settings: The intervention's settings.
        labels_from: The gold-context diagnosis the labels come from.
        without_gold: Failed cases without gold context.
        cases: The diagnosed cases, as `DiagnosedCase` reads them.
        recovered: Cases the intervention recovered.
        implicated: The factor behind the most failures, if any.
        child_runs: The re-executions' run ids, by role.
        request: The identity of the request the diagnosis answered.
    """

    diagnosis_id: str
    parent_run_id: str
    criterion: str
    threshold: float | None
    intervention: str
    settings: dict[str, int | str | None]
    labels_from: str | None
    without_gold: list[str]
    cases: list[dict[str, str | int | bool | None]]
    recovered: int
    implicated: ImplicatedEntry | None
    child_runs: dict[str, str]
    request: str
