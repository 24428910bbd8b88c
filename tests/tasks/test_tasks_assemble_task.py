"""The assemble stage task: each retrieved case's context, keyed and cached by its retrieval."""

from __future__ import annotations

import json

import pytest
from fake_env import fake_env

from oloproof._exceptions import SystemContractError
from oloproof._json import canonical_json
from oloproof.dataset import Case
from oloproof.records import AssemblyRecord, Candidate, RetrievalRecord
from oloproof.store import ResultsStore
from oloproof.tasks import Batch, assemble_contexts, assembly_key
from oloproof.tasks._assemble_task import assembly_items
from oloproof.tasks._cached import outcome

CASES = {cid: Case(id=cid, input=f"question {cid}") for cid in ("c1", "c2", "c3")}
BATCH = Batch(0, ("c1", "c2", "c3"))
CANDIDATES = [
    Candidate(doc_id="kb-1", score=0.9, text="abcd", chunk_id=None),
    Candidate(doc_id="kb-2", score=0.5, text="abcdefgh", chunk_id="2"),
    Candidate(doc_id="kb-3", score=0.1, text="ab", chunk_id=None),
]


@pytest.fixture
def store(tmp_path) -> ResultsStore:
    return ResultsStore(str(tmp_path / "results"))


def _retrievals():
    return {
        "c1": outcome(key="r1", record=RetrievalRecord(query="q1", depth=4, candidates=CANDIDATES)),
        "c2": outcome(key="r2", error="TimeoutError: slow", error_stage="retrieve"),
    }  # c3 has no retrieval at all


def test_only_retrieved_cases_are_assembled_under_their_retrievals_identity(store):
    env = fake_env(store, CASES)
    items = assembly_items(env, BATCH, _retrievals())
    assert [(item.case_id, item.key) for item in items] == [("c1", assembly_key(env.system.config, "r1"))]
    assert items[0].inline  # without a token budget nothing is counted
    assert items[0].args[1] == CANDIDATES[:2]  # only the first top_k are offered


def test_failed_and_absent_retrievals_pass_through(store):
    env = fake_env(store, CASES)
    done = assemble_contexts.fn(env, BATCH, _retrievals())
    assert list(done) == ["c1", "c2", "c3"]
    assert (done["c2"].error, done["c2"].error_stage) == ("TimeoutError: slow", "retrieve")
    assert (done["c3"].error, done["c3"].error_stage) == ("not run", "unknown")


def test_the_record_is_typed_and_stored_as_it_always_was(store):
    env = fake_env(store, CASES)
    done = assemble_contexts.fn(env, BATCH, _retrievals())["c1"]
    record = done.record_of(AssemblyRecord)
    assert record is not None and not done.hit
    assert [p["doc_id"] for p in record.context] == ["kb-1", "kb-2"]
    assert [(p["doc_id"], p["reason"]) for p in record.dropped] == [("kb-3", "beyond_top_k")]
    data = canonical_json(ResultsStore(store.url).get_record("assemble", done.key or "")).encode()
    assert data == canonical_json({
        "context": [{"position": 1, "doc_id": "kb-1", "chunk_id": None, "text": "abcd", "tokens": None},
                    {"position": 2, "doc_id": "kb-2", "chunk_id": "2", "text": "abcdefgh", "tokens": None}],
        "dropped": [{"position": 3, "doc_id": "kb-3", "chunk_id": None, "text": "ab", "reason": "beyond_top_k",
                     "tokens": None}],
    }).encode()  # fmt: skip
    again = assemble_contexts.fn(env, BATCH, _retrievals())["c1"]
    assert again.hit and again.record == record
    assert json.loads(data)["context"] == again.record_of(AssemblyRecord).context


def test_a_token_budget_keeps_what_fits_in_rank_order(store):
    env = fake_env(store, CASES, token_budget=6)
    record = assemble_contexts.fn(env, BATCH, _retrievals())["c1"].record_of(AssemblyRecord)
    assert [(p["doc_id"], p["tokens"]) for p in record.context] == [("kb-1", 4)]
    assert [(p["doc_id"], p["reason"], p["tokens"]) for p in record.dropped] == [
        ("kb-2", "token_budget", 8), ("kb-3", "beyond_top_k", None)]


@pytest.mark.parametrize("counts", [-1, 2.5, True, "3"])
def test_a_token_counter_breaking_its_contract_stops_the_run(store, counts):
    env = fake_env(store, CASES, token_budget=6, count_tokens=lambda passage: counts)
    with pytest.raises(SystemContractError, match="count_tokens returned") as caught:
        assemble_contexts.fn(env, BATCH, _retrievals())
    assert caught.value.field == "count_tokens"


def test_a_failing_token_counter_is_the_cases_error(store):
    def count(passage):
        raise RuntimeError("tokenizer missing")

    env = fake_env(store, CASES, token_budget=6, count_tokens=count)
    done = assemble_contexts.fn(env, BATCH, _retrievals())["c1"]
    assert done.error_stage == "assemble" and done.error.startswith("RuntimeError: tokenizer missing")
