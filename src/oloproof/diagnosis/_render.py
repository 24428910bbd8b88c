"""The printed lines of a diagnosis, in the product page's wording."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oloproof import stats
from oloproof.diagnosis._labels import FACTORS, LABELS, NOT_DIAGNOSED
from oloproof.records import DiagnosedCase, DiagnosisRecord

__all__ = ["intervention_name", "render_case_lines", "render_diagnosis", "render_label_lines"]

_HYPOTHESIS = "This is a hypothesis to test, not an established cause."

Diagnosis = DiagnosisRecord | Mapping[str, Any]
"""A diagnosis record, or its JSON as stored and printed by ``--json``."""


def _record(record: Diagnosis) -> DiagnosisRecord:
    return record if isinstance(record, DiagnosisRecord) else DiagnosisRecord.model_validate(record)


def intervention_name(record: Diagnosis) -> str:
    """``gold context``, ``top-k 4`` or ``reranker module:function``."""
    diagnosis = _record(record)
    if diagnosis.intervention == "top-k":
        return f"top-k {diagnosis.settings.top_k}"
    if diagnosis.intervention == "reranker":
        return f"reranker {diagnosis.settings.reranker}"
    return "gold context"


def render_label_lines(cases: Sequence[DiagnosedCase | Mapping[str, Any]]) -> list[str]:
    """One ``LABEL: n of N, description`` line per label present, in a fixed order."""
    labels = [case.label if isinstance(case, DiagnosedCase) else str(case["label"]) for case in cases]
    passed = [case.intervention_passed if isinstance(case, DiagnosedCase) else bool(case.get("intervention_passed"))
              for case in cases]  # fmt: skip
    total = len(labels)
    lines = []
    for name, label in LABELS.items():
        count = labels.count(name)
        if count:
            line = f"{name}: {count} of {total}, {label.description}"
            if name == "TOOL_NOT_CALLED":  # a failure either way; say how many a forced call recovered
                forced = sum(1 for label_, ok in zip(labels, passed, strict=True) if label_ == name and ok)
                line += f"; {forced} of {count} recovered under a forced call with the gold context"
            lines.append(line)
    return lines


def _cases(count: int) -> str:
    return f"{count} failed case" if count == 1 else f"{count} failed cases"


def _child_runs(record: DiagnosisRecord) -> str:
    runs = record.child_runs
    names = [("gold context", runs.gold_context), ("control", runs.control),
             (intervention_name(record), runs.intervention), ("replay control", runs.replay_control)]  # fmt: skip
    return "Child runs: " + ", ".join(f"{name} {run_id}" for name, run_id in names if run_id)


def render_diagnosis(record: Diagnosis, store_arguments: str = "") -> list[str]:
    """The report of a diagnosis.

    Args:
        record: The diagnosis record.
        store_arguments: Appended to the ``Cases:`` hint, e.g. `` --project DIR``, so it
            finds the store the diagnosis was read from.
    """
    diagnosis = _record(record)
    cases = diagnosis.cases
    total = len(cases)
    lines = [f"Selected: {_cases(total)} with gold context (observed; no population claim)"]
    if diagnosis.without_gold:
        lines.append(
            f"Not diagnosable: {_cases(len(diagnosis.without_gold))} without gold context "
            f"({', '.join(diagnosis.without_gold)})"
        )
    if total == 0:
        return lines + [f"Diagnosis {diagnosis.diagnosis_id}"]
    gold = diagnosis.intervention == "gold-context"
    controls = sum(1 for case in cases if (case.control_passed if gold else case.replay_control_passed))
    repeats = diagnosis.repeats
    if repeats is None:
        lines.append(f"Control: {controls} of {total} passed when re-executed without the intervention")
    else:
        lines.append(f"Control: {controls} of {total} passed at a rate different from the run's when re-executed "
                     f"{repeats} times without the intervention (Fisher's exact test, two-sided, "
                     f"{stats.RATES_DIFFER_LEVEL:.0%})")  # fmt: skip
    if gold:
        every = f" (in every one of {repeats} repeats)" if repeats is not None else ""
        lines.append(f"Recovered under gold context: {diagnosis.recovered} of {total}{every}")
        lines += render_label_lines(cases)
        lines += _implicated(diagnosis)
    else:
        name = intervention_name(diagnosis)
        ranked_out = [case for case in cases if case.label == "RANKED_OUT"]
        confirmed = sum(1 for case in ranked_out if case.intervention_recovered)
        lines.append(f"Recovered under {name}: {diagnosis.recovered} of {total}")
        lines.append(f"Confirmed under {name}: {confirmed} of {len(ranked_out)} RANKED_OUT cases also recovered")
        gold_recovered = sum(1 for case in cases if case.label not in NOT_DIAGNOSED | {"GENERATION_FAILURE"})
        lines.append(f"Labels from gold context (diagnosis {diagnosis.labels_from}): {gold_recovered} of {total} recovered")
        lines += render_label_lines(cases)
    lines.append(f"Diagnosis {diagnosis.diagnosis_id}")
    lines.append(_child_runs(diagnosis))
    lines.append(f"Cases: oloproof inspect {diagnosis.diagnosis_id}{store_arguments}")
    return lines


def _implicated(record: DiagnosisRecord) -> list[str]:
    implicated = record.implicated
    if implicated is None:
        return []
    factor, count, among = implicated.factor, implicated.count, implicated.among
    if factor == "generation":
        head = f"Implicated: generation, in {count} of the {among} failures that did not recover."
    else:
        head = f"Implicated: {factor}, in {count} of the {among} recovered failures."
    experiments = implicated.experiments or FACTORS[factor]
    return [head] + [f"Candidate experiment: {e}. {_HYPOTHESIS}" for e in experiments]


def render_case_lines(record: Diagnosis) -> list[str]:
    """``inspect`` on a diagnosis: one line per case."""
    diagnosis = _record(record)
    lines = []
    for case in sorted(diagnosis.cases, key=lambda c: c.case_id):
        position = case.best_relevant_position
        line = (
            f"{case.case_id}: {case.label}, {case.reason}, strength {case.strength}, "
            f"best relevant position {'none' if position is None else position}"
        )
        if case.repeats is not None:
            line += (f", passed in {case.original_passes} of the run's repeats, {case.control_passes} of "
                     f"{case.repeats} in the control, {_recovered(case.intervention_passes, case.repeats)}")
        if diagnosis.intervention != "gold-context":
            line += f", recovered under {intervention_name(diagnosis)} {'yes' if case.intervention_recovered else 'no'}"
            if case.replay_intervention_passes is not None:
                line += f" ({case.replay_intervention_passes} of {case.repeats} repeats)"
        lines.append(line)
    return lines


def _recovered(passes: int | None, repeats: int) -> str:
    """``recovered in 5 of 5 repeats`` with the gold context."""
    return f"recovered in {passes} of {repeats} repeats with the gold context"
