"""The run manifest: what a run wrote to ``run.json``, unchanged in text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from oloproof._json import canonical_json
from oloproof.records import RunManifest, stored_run_kind

# The shape a run writes today.
MANIFEST = {
    "run_id": "run_01J0000000000000000000000",
    "kind": "run",
    "config_hash": "3fa2c1d0",
    "status": "complete",
    "created_at": "2026-05-01T12:00:00.123456+00:00",
    "finished_at": "2026-05-01T12:03:04.000001+00:00",
    "project": "/work/project",
    "system": {"kind": "rag", "object": "app:Rag", "name": "support-rag", "version": "v1", "depth": 6,
               "top_k": 2, "token_budget": None, "index_version": "kb-1", "retriever_version": None},
    "system_name": "support-rag",
    "system_version": "v1",
    "index_version": "kb-1",
    "dataset": "file:///work/project/cases.jsonl",
    "dataset_sha256": "0" * 64,
    "case_count": 3,
    "rows_named_by_line": 0,
    "evaluators": [
        {"criterion": "answer_correct", "metric": None, "kind": "proportion", "llm_judge": False,
         "spec": {"type": "exact_match", "version": "1", "options": {}}, "spec_hash": "h1",
         "judge_id": None, "judge": None},
    ],
    "slices": ["relevant_position"],
    "min_slice_support": 5,
    "confidence": 0.95,
    "cache": {"execution": {"hit": 0, "miss": 3}, "judgment": {"hit": 0, "miss": 3},
              "retrieve": {"hit": 1, "miss": 2}, "generate": {"hit": 0, "miss": 3}},
    "judges": [{"provider": "local", "provider_type": "openai", "model": "m", "calls": 2, "cached": 1,
                "retries": 1, "errors": 0, "input_tokens": 120, "output_tokens": 30, "cost_usd": None}],
    "variant": {"context_source": "assembled", "replay_from": None, "reranker": None,
                "bypass_generation_cache": False, "case_ids": None},
    "parent": None,
}  # fmt: skip


def test_the_manifest_round_trips_to_the_same_text():
    manifest = RunManifest.model_validate(MANIFEST)
    assert canonical_json(manifest.model_dump(mode="json")) == canonical_json(MANIFEST)


def test_timestamps_are_datetimes_written_as_python_iso_text():
    started = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    manifest = RunManifest.model_validate({**MANIFEST, "created_at": started})
    assert manifest.created_at == started
    assert manifest.model_dump(mode="json")["created_at"] == started.isoformat()


def test_a_child_run_names_its_parent():
    parent = {"run_id": "run_0", "diagnosis_request": "r1", "role": "control"}
    child = {**MANIFEST, "kind": "diagnosis_child", "parent": parent,
             "variant": {**MANIFEST["variant"], "case_ids": ["c1"]}}  # fmt: skip
    manifest = RunManifest.model_validate(child)
    assert manifest.kind == "diagnosis_child"
    assert manifest.parent is not None and manifest.parent.role == "control"
    assert manifest.variant.case_ids == ["c1"]
    assert canonical_json(manifest.model_dump(mode="json")) == canonical_json(child)


def test_only_a_complete_run_has_a_manifest():
    with pytest.raises(ValidationError, match="status"):
        RunManifest.model_validate({**MANIFEST, "status": "running"})


def test_every_cache_is_counted():
    cache = {name: counts for name, counts in MANIFEST["cache"].items() if name != "judgment"}
    with pytest.raises(ValidationError, match="judgment"):
        RunManifest.model_validate({**MANIFEST, "cache": cache})


def test_a_manifest_written_before_recorded_data_still_reads():
    older = {key: value for key, value in MANIFEST.items() if key != "rows_named_by_line"}
    older["evaluators"] = [{k: v for k, v in entry.items() if k != "metric"} for entry in MANIFEST["evaluators"]]
    manifest = RunManifest.model_validate(older)
    assert manifest.rows_named_by_line == 0 and manifest.evaluators[0].metric is None


PARENT = {"run_id": "run_0", "diagnosis_request": "r1", "role": "control"}


@pytest.mark.parametrize(
    ("parent", "kind"),
    [(None, "run"), (PARENT, "diagnosis_child")],
    ids=["top-level", "child"],
)
def test_a_manifest_written_before_run_kinds_reads_by_its_parent(parent, kind):
    older = {key: value for key, value in MANIFEST.items() if key != "kind"} | {"parent": parent}
    assert stored_run_kind(older) == kind
    manifest = RunManifest.model_validate(older)
    assert manifest.kind == kind
    assert manifest.model_dump(mode="json")["kind"] == kind


def test_an_older_manifest_without_a_parent_entry_reads_as_a_run():
    older = {key: value for key, value in MANIFEST.items() if key not in ("kind", "parent")}
    assert stored_run_kind(older) == "run"
    assert RunManifest.model_validate(older).kind == "run"


def test_a_recorded_kind_is_kept_as_written():
    assert stored_run_kind({"kind": "diagnosis_child"}) == "diagnosis_child"
    assert stored_run_kind({"kind": "run", "parent": PARENT}) == "run"
    assert stored_run_kind({"kind": "sweep_setting"}) == "sweep_setting"


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValidationError, match="kind"):
        RunManifest.model_validate({**MANIFEST, "kind": "nightly"})
