"""The stage records: each reads a stored record of the example and writes it back byte for byte.

The files under ``stored/`` are records a run of ``examples/support_rag`` wrote
to its store's cache (and its ``run.json``) before the records were typed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from oloproof._json import canonical_json
from oloproof.records import (
    AssemblyRecord,
    ExecutionRecord,
    GenerationRecord,
    JudgeRecord,
    RetrievalRecord,
    RunManifest,
    StageRecord,
    stage_record,
    validate_staged,
)

STORED = Path(__file__).parent / "stored"

CASES = [
    ("retrieve.json", "retrieve", RetrievalRecord),
    ("assemble.json", "assemble", AssemblyRecord),
    ("assemble_kept.json", "assemble", AssemblyRecord),
    ("generate.json", "generate", GenerationRecord),
    ("judge.json", "judge", JudgeRecord),
    ("execute.json", "execute", ExecutionRecord),
]


def _stored_bytes(record: StageRecord) -> bytes:
    # What the store writes: ObjectStore.write_json's canonical JSON of the stored object.
    return canonical_json(record.stored()).encode("utf-8")


@pytest.mark.parametrize(("name", "stage", "model"), CASES)
def test_a_stored_record_round_trips_byte_for_byte(name, stage, model):
    data = (STORED / name).read_bytes()
    record = stage_record(stage).model_validate(json.loads(data))
    assert type(record) is model
    assert _stored_bytes(record) == data


@pytest.mark.parametrize(("name", "stage", "model"), [case for case in CASES if case[1] != "execute"])
def test_a_batch_stages_record_is_told_apart_by_its_keys(name, stage, model):
    record = validate_staged(json.loads((STORED / name).read_bytes()))
    assert type(record) is model


def test_the_stored_object_keeps_the_field_order_of_the_old_dictionaries():
    retrieval = RetrievalRecord.model_validate(json.loads((STORED / "retrieve.json").read_bytes()))
    assert list(retrieval.stored()) == ["query", "depth", "candidates"]
    # A passage read back has the order a fresh one has (the store sorts keys anyway).
    assert list(retrieval.candidates[0]) == ["doc_id", "score", "text", "chunk_id"]
    verdict = JudgeRecord.model_validate(json.loads((STORED / "judge.json").read_bytes()))
    assert list(verdict.stored()) == ["status", "score", "passed", "reason", "detail", "call", "scores"]


def test_replayed_is_written_only_when_true():
    plain = RetrievalRecord(query="q", depth=2, candidates=[])
    assert "replayed" not in plain.stored()
    assert plain.model_copy(update={"replayed": True}).stored()["replayed"] is True


def test_none_values_are_written_as_they_always_were():
    # The execution record of a plain system: every key present, the retrieval's as nulls.
    stored = ExecutionRecord(generation_key="g", output={"answer": "a"}).stored()
    assert stored == {"retrieval_key": None, "assembly_key": None, "generation_key": "g", "query": None,
                      "candidates": None, "context": None, "dropped": None, "output": {"answer": "a"}}


def test_numpy_values_of_an_evaluators_detail_pass_through_to_the_store():
    verdict = JudgeRecord(score=0.5, detail={"count": np.int64(3)})
    assert verdict.stored()["detail"]["count"] == np.int64(3)
    assert _stored_bytes(verdict) == canonical_json(
        {"status": "observed", "score": 0.5, "passed": None, "reason": None, "detail": {"count": 3},
         "call": None, "scores": None}
    ).encode()


def test_a_record_of_another_shape_is_refused():
    with pytest.raises(ValidationError):
        RetrievalRecord.model_validate({"depth": 2, "candidates": [], "ms": 1.0})
    with pytest.raises(ValidationError):
        validate_staged({"neither": "stage"})
    with pytest.raises(KeyError):
        stage_record("rerank")


def test_the_call_accounting_reads_one_entry():
    assert JudgeRecord(call={"model": "m"}).call_value("model") == "m"
    assert JudgeRecord(call={"model": "m"}).call_value("retries") is None
    assert JudgeRecord().call_value("model") is None


def test_the_examples_manifest_round_trips_byte_for_byte():
    data = (STORED / "run.json").read_bytes()
    manifest = RunManifest.model_validate(json.loads(data))
    assert canonical_json(manifest.model_dump(mode="json")).encode("utf-8") == data
