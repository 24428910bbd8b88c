"""The execution cache: a case's stage outcomes merged, recorded whole, and found next time."""

from __future__ import annotations

import json

import pytest
from fake_env import fake_env

from oloproof._json import canonical_json
from oloproof.dataset import Case
from oloproof.records import (
    AssembledPassage,
    AssemblyRecord,
    Candidate,
    DroppedPassage,
    GenerationRecord,
    RetrievalRecord,
)
from oloproof.store import ResultsStore
from oloproof.tasks import Batch, execution_key, lookup_executions, record_executions
from oloproof.tasks._cached import outcome

CASES = {"c1": Case(id="c1", input="How long do refunds take?"), "c2": Case(id="c2", input="Who are you?")}
BATCH = Batch(0, ("c1", "c2"))
CANDIDATE = Candidate(doc_id="kb-1", score=0.9, text="Refunds take 14 days.", chunk_id=None)
KEPT = AssembledPassage(position=1, doc_id="kb-1", chunk_id=None, text="Refunds take 14 days.", tokens=None)
DROPPED = DroppedPassage(position=2, doc_id="kb-2", chunk_id="c1", text="x", reason="beyond_top_k", tokens=None)


@pytest.fixture
def store(tmp_path) -> ResultsStore:
    return ResultsStore(str(tmp_path / "results"))


def _stages(*, generated_ok: bool = True, replayed: bool = False):
    retrieval = RetrievalRecord(query="refund time", depth=4, candidates=[CANDIDATE], replayed=replayed)
    generation = (outcome(key="g1", record=GenerationRecord(output={"answer": "14 days"}), ms=4.0, computed_by="run_1")
                  if generated_ok else outcome(key="g1", error="RuntimeError: down", error_stage="generate"))
    return (
        {"c1": outcome(key="r1", record=retrieval, hit=True, computed_by="run_1")},
        {"c1": outcome(key="a1", record=AssemblyRecord(context=[KEPT], dropped=[DROPPED]), computed_by="run_1")},
        {"c1": generation},
    )  # fmt: skip


def test_a_case_is_merged_from_its_stage_records(store):
    env = fake_env(store, CASES)
    retrievals, assemblies, generations = _stages()
    result = record_executions.fn(env, Batch(0, ("c1",)), {}, retrievals, assemblies, generations)["c1"]
    assert result.ok and not result.execution_hit
    assert (result.retrieval_key, result.assembly_key, result.generation_key) == ("r1", "a1", "g1")
    assert (result.query, result.candidates, result.context, result.dropped) == (
        "refund time", [CANDIDATE], [KEPT], [DROPPED])
    assert result.output == {"answer": "14 days"}
    assert (result.retrieve_hit, result.generate_hit, result.retrieve_ran, result.generate_ran) == (
        True, False, True, True)
    assert (result.retrieve_ms, result.generate_ms) == (0.0, 4.0)


def test_the_execution_record_is_stored_as_it_always_was_and_found_next_time(store):
    env = fake_env(store, CASES)
    record_executions.fn(env, Batch(0, ("c1",)), {}, *_stages())
    key = execution_key(env.system.config, CASES["c1"].input)
    # Read back by a reader of its own, from the batch's pack.
    data = canonical_json(ResultsStore(store.url).get_record("execute", key)).encode()
    assert data == canonical_json({
        "retrieval_key": "r1", "assembly_key": "a1", "generation_key": "g1", "query": "refund time",
        "candidates": [dict(CANDIDATE)], "context": [dict(KEPT)], "dropped": [dict(DROPPED)],
        "output": {"answer": "14 days"},
    }).encode()  # fmt: skip
    found = lookup_executions.fn(env, BATCH)
    assert list(found) == ["c1"] and found["c1"].key == key
    assert env.progressed == [("execute", 1)]
    again = record_executions.fn(env, BATCH, found, None, None, None)
    assert again["c1"].execution_hit and again["c1"].execution_key == key
    assert again["c1"].context == [KEPT] and again["c1"].output == {"answer": "14 days"}
    assert json.loads(data)["candidates"] == again["c1"].candidates


def test_a_failed_stage_makes_the_case_missing_and_records_nothing(store):
    env = fake_env(store, CASES)
    result = record_executions.fn(env, Batch(0, ("c1",)), {}, *_stages(generated_ok=False))["c1"]
    assert (result.status, result.error_stage, result.error) == ("missing", "generate", "RuntimeError: down")
    assert result.output is None and result.context == [KEPT]
    assert lookup_executions.fn(env, BATCH) == {}


def test_a_replayed_retrieval_is_not_counted_as_one_that_ran(store):
    env = fake_env(store, CASES, replay_from="run_PARENT")
    result = record_executions.fn(env, Batch(0, ("c1",)), {}, *_stages(replayed=True))["c1"]
    assert result.ok and not result.retrieve_ran
    assert lookup_executions.fn(env, BATCH) == {}  # replays never use the execution cache


@pytest.mark.parametrize("variant", [{"context_source": "gold"}, {"bypass_generation_cache": True}])
def test_diagnosis_variants_neither_read_nor_write_the_execution_cache(store, variant):
    plain = fake_env(store, CASES)
    record_executions.fn(plain, Batch(0, ("c1",)), {}, *_stages())
    assert list(lookup_executions.fn(plain, BATCH)) == ["c1"]
    env = fake_env(store, CASES, **variant)
    assert lookup_executions.fn(env, BATCH) == {}


def test_a_plain_system_merges_its_generation_alone(store):
    env = fake_env(store, CASES, kind="plain")
    generations = {"c2": outcome(key="g2", record=GenerationRecord(output="hello"), computed_by="run_0")}
    result = record_executions.fn(env, Batch(0, ("c2",)), {}, None, None, generations)["c2"]
    assert result.ok and result.output == "hello" and result.generate_hit  # computed by an earlier run
    assert (result.candidates, result.context, result.retrieval_key) == (None, None, None)
    found = lookup_executions.fn(env, BATCH)
    assert found["c2"].record.retrieval_key is None and found["c2"].record.output == "hello"
