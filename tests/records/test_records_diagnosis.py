"""Diagnosis label rows, built from the labels a diagnosis gives."""

from __future__ import annotations

from dataclasses import asdict

from oloproof.diagnosis import label_case
from oloproof.records import DiagnosisLabelRow


def test_a_row_from_a_case_label():
    label = label_case(
        "c1", control_passed=False, gold_passed=True,
        recorded={"best_relevant_position": 4, "context": [], "dropped": []},
        relevant={"kb-1"}, top_k=2,
    )  # fmt: skip
    case = {**asdict(label), "child_runs": {"control": "run_2"}}  # the record also names child runs
    row = DiagnosisLabelRow.pick(case, diagnosis_id="sha256:d")
    assert dict(row.as_mapping()) == {
        "diagnosis_id": "sha256:d", "case_id": "c1", "label": "RANKED_OUT",
        "reason": "relevant_ranked_out", "strength": "intervention_recovery",
        "best_relevant_position": 4, "control_passed": False, "intervention_passed": True,
        "repeats": None, "original_passes": None, "control_passes": None, "intervention_passes": None,
    }  # fmt: skip


def test_a_case_without_a_relevant_position():
    row = DiagnosisLabelRow(
        diagnosis_id="sha256:d", case_id="c2", label="RETRIEVAL_MISS", reason="relevant_not_retrieved",
        strength="intervention_recovery", control_passed=False, intervention_passed=True,
    )  # fmt: skip
    assert row.best_relevant_position is None
