"""Reading a complete run back: a typed manifest, the rows as decoded, refusals with their path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof._exceptions import NotFoundError, StoreError
from oloproof.records import CaseRow, JudgmentRow, RunManifest, RunRecords
from oloproof.store import CASES, JUDGMENTS, ResultsStore, incomplete_runs, read_run_records, run_manifest, run_table

# A manifest the example wrote (see tests/records/stored).
STORED_MANIFEST = json.loads((Path(__file__).parents[1] / "records" / "stored" / "run.json").read_bytes())
RUN_ID = STORED_MANIFEST["run_id"]


def _write_run(store: ResultsStore, manifest: dict | None = None) -> None:
    manifest = manifest or STORED_MANIFEST
    run_id = manifest["run_id"]
    case = CaseRow(run_id=run_id, case_id="c1", status="ok", execution_hit=False, retrieve_hit=False,
                   generate_hit=False, input="q", expected={}, metadata={"topic": "billing"}, output="a")
    judgment = JudgmentRow(run_id=run_id, case_id="c1", criterion="answer_correct", evaluator="contains",
                           spec_hash="h", status="observed", outcome="completed", score=1.0, value=1.0,
                           detail={}, hit=False)  # fmt: skip
    store.write_table(run_table(run_id, "cases"), [case.as_mapping()], CASES)
    store.write_table(run_table(run_id, "judgments"), [judgment.as_mapping()], JUDGMENTS)
    store.write_json(run_manifest(run_id), manifest)


def test_a_complete_run_reads_back_with_a_typed_manifest(local_store):
    _write_run(local_store)
    run = read_run_records(local_store, RUN_ID)
    assert isinstance(run, RunRecords) and isinstance(run.manifest, RunManifest)
    assert run.manifest.run_id == RUN_ID
    assert run.manifest.cache.execution.miss == 13
    assert [e.criterion for e in run.manifest.evaluators][:2] == ["answer_correct", "hit_rate_at_2"]
    assert [row["case_id"] for row in run.cases] == ["c1"]
    assert run.cases[0]["metadata"] == {"topic": "billing"}  # JSON columns decoded
    assert [(row["criterion"], row["value"]) for row in run.judgments] == [("answer_correct", 1.0)]


def test_its_json_form_is_the_stored_manifest_unchanged(local_store):
    _write_run(local_store)
    run = read_run_records(local_store, RUN_ID).as_json()
    assert run["manifest"] == STORED_MANIFEST
    assert set(run) == {"manifest", "cases", "judgments"}


def test_an_older_manifest_reads_with_the_kind_its_parent_implies_and_keeps_its_json(local_store):
    older = {key: value for key, value in STORED_MANIFEST.items() if key not in ("kind", "config_hash")}
    older = {**older, "run_id": "run_OLDER", "parent": {"run_id": RUN_ID, "diagnosis_request": "r",
                                                         "role": "control"}}
    _write_run(local_store, older)
    run = read_run_records(local_store, "run_OLDER")
    assert (run.manifest.kind, run.manifest.config_hash) == ("diagnosis_child", None)
    assert run.as_json()["manifest"] == older  # nothing added to what readers see


def test_a_run_without_its_manifest_is_not_found(local_store):
    with pytest.raises(NotFoundError, match="no complete run 'run_NONE'"):
        read_run_records(local_store, "run_NONE")


def test_a_manifest_of_another_shape_is_refused_naming_the_file_and_field(local_store):
    _write_run(local_store, {**STORED_MANIFEST, "case_count": "thirteen"})
    with pytest.raises(StoreError) as caught:
        read_run_records(local_store, RUN_ID)
    assert caught.value.field == "case_count"
    assert caught.value.path is not None and caught.value.path.endswith(f"runs/{RUN_ID}/run.json")
    assert "is not a run manifest" in caught.value.message


def test_a_manifest_that_is_not_an_object_is_refused(local_store):
    local_store.write_json(run_manifest("run_LIST"), [1, 2])
    with pytest.raises(StoreError, match="not a JSON object"):
        read_run_records(local_store, "run_LIST")


def test_only_folders_without_a_manifest_are_incomplete(local_store):
    _write_run(local_store)
    local_store.write_table(run_table("run_HALF", "cases"), [], CASES)
    listed = incomplete_runs(local_store)
    assert [(run.run_id, run.files) for run in listed] == [("run_HALF", ("cases.parquet",))]
    assert listed[0].modified is not None
