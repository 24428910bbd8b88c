"""The printed lines of a diagnosis, in the product page's wording."""

from __future__ import annotations

from typing import Any

from oloproof.diagnosis._labels import FACTORS, LABELS

__all__ = ["intervention_name", "render_case_lines", "render_diagnosis", "render_label_lines"]

_HYPOTHESIS = "This is a hypothesis to test, not an established cause."


def intervention_name(record: dict[str, Any]) -> str:
    """``gold context``, ``top-k 4`` or ``reranker module:function``."""
    if record["intervention"] == "top-k":
        return f"top-k {record['settings']['top_k']}"
    if record["intervention"] == "reranker":
        return f"reranker {record['settings']['reranker']}"
    return "gold context"


def render_label_lines(cases: list[dict[str, Any]]) -> list[str]:
    """One ``LABEL: n of N, description`` line per label present, in a fixed order."""
    total = len(cases)
    lines = []
    for name, label in LABELS.items():
        count = sum(1 for case in cases if case["label"] == name)
        if count:
            lines.append(f"{name}: {count} of {total}, {label.description}")
    return lines


def _cases(count: int) -> str:
    return f"{count} failed case" if count == 1 else f"{count} failed cases"


def _child_runs(record: dict[str, Any]) -> str:
    names = {"gold_context": "gold context", "control": "control", "intervention": intervention_name(record),
             "replay_control": "replay control"}
    runs = record["child_runs"]
    parts = [f"{names[role]} {runs[role]}" for role in names if runs.get(role)]
    return "Child runs: " + ", ".join(parts)


def render_diagnosis(record: dict[str, Any], store_arguments: str = "") -> list[str]:
    """The report of a diagnosis.

    Args:
        record: The diagnosis record.
        store_arguments: Appended to the ``Cases:`` hint, e.g. `` --project DIR``, so it
            finds the store the diagnosis was read from.
    """
    cases = record["cases"]
    total = len(cases)
    lines = [f"Selected: {_cases(total)} with gold context (observed; no population claim)"]
    if record["without_gold"]:
        lines.append(
            f"Not diagnosable: {_cases(len(record['without_gold']))} without gold context "
            f"({', '.join(record['without_gold'])})"
        )
    if total == 0:
        return lines + [f"Diagnosis {record['diagnosis_id']}"]
    control_key = "replay_control_passed" if record["intervention"] != "gold-context" else "control_passed"
    controls = sum(1 for case in cases if case[control_key])
    lines.append(f"Control: {controls} of {total} passed when re-executed without the intervention")
    if record["intervention"] == "gold-context":
        lines.append(f"Recovered under gold context: {record['recovered']} of {total}")
        lines += render_label_lines(cases)
        lines += _implicated(record)
    else:
        name = intervention_name(record)
        ranked_out = [case for case in cases if case["label"] == "RANKED_OUT"]
        confirmed = sum(1 for case in ranked_out if case["intervention_recovered"])
        lines.append(f"Recovered under {name}: {record['recovered']} of {total}")
        lines.append(f"Confirmed under {name}: {confirmed} of {len(ranked_out)} RANKED_OUT cases also recovered")
        gold_recovered = sum(1 for case in cases if case["label"] not in ("GENERATION_FAILURE", "UNSTABLE"))
        lines.append(f"Labels from gold context (diagnosis {record['labels_from']}): {gold_recovered} of {total} recovered")
        lines += render_label_lines(cases)
    lines.append(f"Diagnosis {record['diagnosis_id']}")
    lines.append(_child_runs(record))
    lines.append(f"Cases: oloproof inspect {record['diagnosis_id']}{store_arguments}")
    return lines


def _implicated(record: dict[str, Any]) -> list[str]:
    implicated = record.get("implicated")
    if not implicated:
        return []
    factor, count, among = implicated["factor"], implicated["count"], implicated["among"]
    if factor == "generation":
        head = f"Implicated: generation, in {count} of the {among} failures that did not recover."
    else:
        head = f"Implicated: {factor}, in {count} of the {among} recovered failures."
    return [head] + [f"Candidate experiment: {e}. {_HYPOTHESIS}" for e in FACTORS[factor]]


def render_case_lines(record: dict[str, Any]) -> list[str]:
    """``inspect`` on a diagnosis: one line per case."""
    lines = []
    for case in sorted(record["cases"], key=lambda c: c["case_id"]):
        position = case["best_relevant_position"]
        line = (
            f"{case['case_id']}: {case['label']}, {case['reason']}, strength {case['strength']}, "
            f"best relevant position {'none' if position is None else position}"
        )
        if record["intervention"] != "gold-context":
            line += f", recovered under {intervention_name(record)} {'yes' if case['intervention_recovered'] else 'no'}"
        lines.append(line)
    return lines
