"""The generate stage's work items: which cases run, with what context, and the record they make."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import BaseModel

from oloproof import Passage
from oloproof._system._resolve import SystemHandle
from oloproof.config._settings import SystemConfig
from oloproof.dataset import Case
from oloproof.records import AssemblyRecord
from oloproof.tasks._batch import Batch
from oloproof.tasks._cached import CaseFailure, Outcome
from oloproof.tasks._generate import generation_items
from oloproof.tasks._identity import generation_key

RAG = {"kind": "rag", "object": "app:Rag", "name": "rag", "version": "1", "depth": 2, "top_k": 2,
       "index_version": "i1"}  # fmt: skip
GOLD = [{"doc_id": "g1", "text": "gold text"}]
CASES = {
    "c1": Case(id="c1", input="alpha?", expected={"gold_context": GOLD}),
    "c2": Case(id="c2", input="beta?"),
}
BATCH = Batch(index=0, case_ids=("c1", "c2"))
CONTEXT = [{"position": 1, "doc_id": "d1", "chunk_id": "k1", "text": "alpha", "tokens": 1}]
ASSEMBLIES = {
    "c1": Outcome(key="a1", record=AssemblyRecord(context=CONTEXT, dropped=[])),
    "c2": Outcome(error="timeout after 30s", error_stage="retrieve"),
}


class Params(BaseModel):
    temperature: float = 0.0


def _generate(input, context, *params):
    return {"answer": input, "context": [passage.doc_id for passage in context], "params": len(params)}


def _env(config=RAG, target=None, params=None, context_source="assembled") -> SimpleNamespace:
    system = SystemConfig(**config, generator=None if params is None else params.model_dump(mode="json"))
    if target is None:
        target = SimpleNamespace(generate=_generate)
    handle = SystemHandle(config=system, target=target, generator_params=params)
    request = SimpleNamespace(context_source=context_source, bypass_generation_cache=False)
    return SimpleNamespace(system=handle, cases=CASES, request=request)


def test_cases_whose_assembly_failed_are_left_out():
    env = _env()
    (item,) = generation_items(env, BATCH, ASSEMBLIES)
    assert item.case_id == "c1"
    passages = [{"doc_id": "d1", "chunk_id": "k1", "text": "alpha"}]
    assert item.key == generation_key(env.system.config, "alpha?", passages)
    assert item.args == ("alpha?", [Passage(doc_id="d1", chunk_id="k1", text="alpha")])
    assert item.finish(item.call(*item.args)).stored() == {"output": {"answer": "alpha?", "context": ["d1"], "params": 0}}


def test_the_gold_context_replaces_the_assembled_one():
    env = _env(context_source="gold")
    (item,) = generation_items(env, BATCH, ASSEMBLIES)
    assert item.args == ("alpha?", [Passage(doc_id="g1", text="gold text")])
    assert item.key == generation_key(env.system.config, "alpha?", [{"doc_id": "g1", "chunk_id": None,
                                                                       "text": "gold text"}])  # fmt: skip


def test_declared_parameters_are_the_last_argument_and_part_of_the_key():
    env = _env(params=Params(temperature=0.7))
    (item,) = generation_items(env, BATCH, ASSEMBLIES)
    assert item.args[-1] == Params(temperature=0.7)
    assert item.finish(item.call(*item.args)).output["params"] == 1
    (cooler,) = generation_items(_env(params=Params()), BATCH, ASSEMBLIES)
    (undeclared,) = generation_items(_env(), BATCH, ASSEMBLIES)
    assert len({item.key, cooler.key, undeclared.key}) == 3


def test_a_plain_system_gets_the_input_alone_or_with_its_parameters():
    plain = {"kind": "plain", "object": "app:answer", "name": "p", "version": "1"}
    calls = []

    def answer(input, *params):
        calls.append((input, *params))
        return {"answer": input}

    env = _env(plain, target=answer)
    items = generation_items(env, BATCH, None)
    assert [item.args for item in items] == [("alpha?",), ("beta?",)]
    assert items[0].key == generation_key(env.system.config, "alpha?", None)
    with_params = generation_items(_env(plain, target=answer, params=Params()), BATCH, None)
    with_params[1].call(*with_params[1].args)
    assert calls == [("beta?", Params())]


def test_an_output_that_is_not_json_is_that_case_failure():
    (item,) = generation_items(_env(), BATCH, ASSEMBLIES)
    with pytest.raises(CaseFailure, match=r"app:Rag returned a value that is not JSON \(.*set.*\)"):
        item.finish({"answer": {1, 2}})
    with pytest.raises(CaseFailure, match="not JSON"):
        item.finish({"score": float("nan")})
