"""The retrieve stage's work items: their identity, their call and the record they make."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import BaseModel

from oloproof import Passage, Retrieval
from oloproof._exceptions import NotFoundError, SystemContractError
from oloproof._system._resolve import SystemHandle
from oloproof.config._settings import SystemConfig
from oloproof.dataset import Case
from oloproof.records import RecordedRetrieval
from oloproof.tasks._batch import Batch
from oloproof.tasks._identity import content_hash, retrieval_key
from oloproof.tasks._retrieve import retrieval_items

CONFIG = {"kind": "rag", "object": "app:Rag", "name": "rag", "version": "1", "depth": 2, "top_k": 1,
          "index_version": "i1"}  # fmt: skip
CASES = {"c1": Case(id="c1", input={"q": "alpha"}), "c2": Case(id="c2", input={"q": "beta"})}
BATCH = Batch(index=0, case_ids=("c1", "c2"))


class Params(BaseModel):
    mode: str = "keyword"


class Rag:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def retrieve(self, input, depth, *params):
        self.calls.append((input, depth, *params))
        passages = [Passage(doc_id=f"d{i}", score=1.0 / i, text=f"{input['q']} {i}") for i in range(1, 4)]
        return Retrieval(query=input["q"], depth=depth, candidates=tuple(passages[:depth]))


def _env(params: BaseModel | None = None, recorded: dict | None = None, **config) -> SimpleNamespace:
    system = SystemConfig(**{**CONFIG, **config}, retriever=None if params is None else params.model_dump(mode="json"))
    handle = SystemHandle(config=system, target=Rag(), retriever_params=params)
    request = SimpleNamespace(replay_from="run_parent", reranker=None)
    return SimpleNamespace(system=handle, cases=CASES, recorded=recorded, request=request, reranker=None)


def _run(item):
    return item.finish(item.call(*item.args))


def test_each_case_is_keyed_by_its_retrieval_identity_and_called_with_the_depth():
    env = _env()
    items = retrieval_items(env, BATCH)
    assert [item.case_id for item in items] == ["c1", "c2"]
    assert [item.key for item in items] == [retrieval_key(env.system.config, case.input) for case in CASES.values()]
    record = _run(items[0])
    assert env.system.target.calls == [({"q": "alpha"}, 2)]
    assert record.stored() == {
        "query": "alpha",
        "depth": 2,
        "candidates": [
            {"doc_id": "d1", "chunk_id": None, "score": 1.0, "text": "alpha 1"},
            {"doc_id": "d2", "chunk_id": None, "score": 0.5, "text": "alpha 2"},
        ],
    }


def test_declared_parameters_are_the_third_argument_and_part_of_the_key():
    env = _env(Params(mode="hybrid"))
    items = retrieval_items(env, BATCH)
    _run(items[1])
    assert env.system.target.calls == [({"q": "beta"}, 2, Params(mode="hybrid"))]
    assert items[0].key != retrieval_items(_env(Params(mode="vector")), BATCH)[0].key
    assert items[0].key != retrieval_items(_env(), BATCH)[0].key


def test_a_value_that_is_not_a_retrieval_breaks_the_contract():
    (item, _) = retrieval_items(_env(), BATCH)
    with pytest.raises(SystemContractError, match=r"app:Rag.retrieve returned list for case 'c1'; expected Retrieval"):
        item.finish([])


def test_more_candidates_than_the_depth_break_the_contract():
    (item, _) = retrieval_items(_env(depth=1), BATCH)
    too_many = Retrieval(query="q", depth=2, candidates=(Passage(doc_id="a"), Passage(doc_id="b")))
    with pytest.raises(SystemContractError, match=r"returned 2 candidates for case 'c1'; depth is 1"):
        item.finish(too_many)


def test_a_replay_is_keyed_by_what_it_replays_and_marks_its_record():
    recorded = {"c1": RecordedRetrieval(query="alpha", candidates=[{"doc_id": "d9", "chunk_id": None, "score": None,
                                                                  "text": "x"}]),
                "c2": RecordedRetrieval(query="beta", candidates=[])}  # fmt: skip
    env = _env(recorded=recorded)
    items = retrieval_items(env, BATCH)
    assert items[0].key == content_hash({"replay": "run_parent", "case": "c1", "reranker": None})
    record = _run(items[0])
    assert record.replayed is True and record.stored()["replayed"] is True
    assert [candidate["doc_id"] for candidate in record.candidates] == ["d9"]
    assert env.system.target.calls == []  # nothing is retrieved again


def test_a_replay_without_the_case_is_not_found():
    env = _env(recorded={"c1": RecordedRetrieval(query="alpha", candidates=[])})
    with pytest.raises(NotFoundError, match="run run_parent has no recorded retrieval for case 'c2'"):
        retrieval_items(env, BATCH)
