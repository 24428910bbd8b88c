"""A diagnosis's label rows, built as typed records, and the table written from them."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from pydantic import ValidationError

from oloproof.diagnosis import label_case
from oloproof.records import DiagnosisLabelRow
from oloproof.store import ResultsStore, diagnosis_labels
from oloproof.tasks._diagnose import label_rows, write_diagnosis


def _label(case_id: str, position: int | None, *, control: bool = False, gold: bool = True) -> dict:
    label = label_case(
        case_id, control_passed=control, gold_passed=gold,
        recorded={"best_relevant_position": position, "context": [], "dropped": []},
        relevant={"kb-1"}, top_k=2,
    )  # fmt: skip
    return asdict(label)


RECORD = {
    "diagnosis_id": "sha256:" + "d" * 64,
    "parent_run_id": "run_1",
    "cases": [
        {**_label("c1", 4), "child_runs": {"control": "run_2"}},
        _label("c2", None),
        _label("c3", 1, gold=False),
    ],
}

EXPECTED = [
    {"diagnosis_id": RECORD["diagnosis_id"], "case_id": "c1", "label": "RANKED_OUT",
     "reason": "relevant_ranked_out", "strength": "intervention_recovery", "best_relevant_position": 4,
     "control_passed": False, "intervention_passed": True, "repeats": None, "original_passes": None, "control_passes": None, "intervention_passes": None},
    {"diagnosis_id": RECORD["diagnosis_id"], "case_id": "c2", "label": "RETRIEVAL_MISS",
     "reason": "relevant_not_retrieved", "strength": "intervention_recovery", "best_relevant_position": None,
     "control_passed": False, "intervention_passed": True, "repeats": None, "original_passes": None, "control_passes": None, "intervention_passes": None},
    {"diagnosis_id": RECORD["diagnosis_id"], "case_id": "c3", "label": "GENERATION_FAILURE",
     "reason": "fails_with_gold_context", "strength": "intervention_non_recovery",
     "best_relevant_position": 1, "control_passed": False, "intervention_passed": False, "repeats": None, "original_passes": None, "control_passes": None, "intervention_passes": None},
]  # fmt: skip


def test_one_typed_row_per_diagnosed_case():
    rows = label_rows(RECORD)
    assert all(isinstance(row, DiagnosisLabelRow) for row in rows)
    assert [dict(row.as_mapping()) for row in rows] == EXPECTED


def test_a_case_without_its_label_is_refused():
    broken = {**RECORD, "cases": [{k: v for k, v in _label("c1", 4).items() if k != "label"}]}
    with pytest.raises(ValidationError, match="label"):
        label_rows(broken)


def test_the_labels_table_holds_the_rows(tmp_path):
    store = ResultsStore(str(tmp_path / "results"))
    assert write_diagnosis.fn(store, RECORD, "req-1") == RECORD["diagnosis_id"]
    assert store.read_table(diagnosis_labels("d" * 64)) == EXPECTED
