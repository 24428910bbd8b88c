"""Replaying a complete run's recorded retrievals, in their recorded order or re-ranked."""

from __future__ import annotations

import pytest

from oloproof._exceptions import NotFoundError, SystemContractError
from oloproof._system._passage import Passage, Retrieval
from oloproof.records import Candidate, CaseRow, RecordedRetrieval, RetrievalRow
from oloproof.store import CASES, RETRIEVALS, ResultsStore, run_manifest, run_table
from oloproof.tasks._replay import check_reranked, load_recorded_retrievals, replay_retrieval

RECORDED = RecordedRetrieval(query="refunds", candidates=[
    Candidate(doc_id="kb-1", score=0.9, text="one", chunk_id=None),
    Candidate(doc_id="kb-2", score=0.4, text="two", chunk_id="c2"),
])  # fmt: skip


@pytest.fixture
def store(tmp_path) -> ResultsStore:
    return ResultsStore(str(tmp_path / "results"))


def _case(case_id: str, status: str = "ok", retrieval_key: str | None = "r") -> CaseRow:
    return CaseRow(run_id="run_P", case_id=case_id, status=status, retrieval_key=retrieval_key,  # type: ignore[arg-type]
                   query=f"query {case_id}", execution_hit=False, retrieve_hit=False, generate_hit=False,
                   input=case_id, expected={}, metadata={})  # fmt: skip


def _candidate(case_id: str, position: int, doc_id: str) -> RetrievalRow:
    return RetrievalRow(run_id="run_P", case_id=case_id, position=position, doc_id=doc_id, chunk_id=None,
                        score=1.0 / position, text=f"{doc_id} text", in_top_k=True, in_context=True)


def _write_parent(store: ResultsStore) -> None:
    cases = [_case("c1"), _case("c2"), _case("c3", status="missing"), _case("c4", retrieval_key=None)]
    rows = [_candidate("c1", 2, "kb-b"), _candidate("c2", 1, "kb-z"), _candidate("c1", 1, "kb-a")]
    store.write_table(run_table("run_P", "cases"), [row.as_mapping() for row in cases], CASES)
    store.write_table(run_table("run_P", "retrievals"), [row.as_mapping() for row in rows], RETRIEVALS)
    store.write_json(run_manifest("run_P"), {"run_id": "run_P"})


def test_each_ok_cases_retrieval_is_read_back_in_its_recorded_order(store):
    _write_parent(store)
    recorded = load_recorded_retrievals(store, "run_P")
    assert sorted(recorded) == ["c1", "c2"]  # a failed case, or one without a retrieval, has none
    assert recorded["c1"].query == "query c1"
    assert [(c["doc_id"], c["score"]) for c in recorded["c1"].candidates] == [("kb-a", 1.0), ("kb-b", 0.5)]
    assert recorded["c1"].candidates[0] == Candidate(doc_id="kb-a", chunk_id=None, score=1.0, text="kb-a text")


def test_an_incomplete_or_unknown_run_is_not_found(store):
    with pytest.raises(NotFoundError, match="no complete run 'run_P'"):
        load_recorded_retrievals(store, "run_P")


def test_a_replay_returns_the_recorded_retrieval_at_the_depth_asked():
    replayed = replay_retrieval(RECORDED, 4)
    assert replayed == Retrieval(query="refunds", depth=4, candidates=(
        Passage("kb-1", 0.9, "one"), Passage("kb-2", 0.4, "two", chunk_id="c2")))


def test_a_reranker_reorders_the_recorded_passages():
    seen = []

    def rerank(query, passages):
        seen.append(query)
        return list(reversed(passages))

    replayed = replay_retrieval(RECORDED, 4, rerank, "re-ranker m:f")
    assert [p.doc_id for p in replayed.candidates] == ["kb-2", "kb-1"] and seen == ["refunds"]


def test_an_async_reranker_is_awaited():
    async def rerank(query, passages):
        return passages[:1]

    assert [p.doc_id for p in replay_retrieval(RECORDED, 4, rerank).candidates] == ["kb-1"]


def test_a_reranker_may_not_invent_passages_or_return_another_type():
    original = [Passage("kb-1", 0.9, "one")]
    with pytest.raises(SystemContractError, match="returned passage 'kb-9', which was not among") as caught:
        check_reranked(original, [Passage("kb-9", 0.9, "one")], "re-ranker m:f")
    assert caught.value.field == "reranker"
    with pytest.raises(SystemContractError, match="must return a list of Passage"):
        check_reranked(original, "kb-1", "re-ranker m:f")
    assert check_reranked(original, (original[0],), "w") == (original[0],)
