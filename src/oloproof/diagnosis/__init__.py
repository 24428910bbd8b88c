"""Failure diagnosis by controlled re-execution: selection, labels, rendering."""

from oloproof.diagnosis._labels import (
    AGENT_FACTORS,
    FACTORS,
    LABELS,
    NOT_DIAGNOSED,
    CaseLabel,
    Label,
    RepeatedOutcome,
    implicated_factor,
    label_case,
)
from oloproof.diagnosis._render import (
    intervention_name,
    render_case_lines,
    render_diagnosis,
    render_label_lines,
)
from oloproof.diagnosis._select import Passes, Selection, case_passes, passed_cases, select_failures

__all__ = [
    "AGENT_FACTORS",
    "FACTORS",
    "LABELS",
    "NOT_DIAGNOSED",
    "CaseLabel",
    "Label",
    "Passes",
    "RepeatedOutcome",
    "Selection",
    "case_passes",
    "implicated_factor",
    "intervention_name",
    "label_case",
    "passed_cases",
    "render_case_lines",
    "render_diagnosis",
    "render_label_lines",
    "select_failures",
]
