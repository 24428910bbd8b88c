"""Stage identity keys: exactly the inputs that determine each stage's result."""

from __future__ import annotations

import hashlib
import json

import pytest

from oloproof.config._settings import SystemConfig
from oloproof.stages._identity import (
    SCHEMA_VERSION,
    _key,
    assembly_key,
    canonical_json,
    content_hash,
    execution_key,
    generation_key,
    judgment_key,
    retrieval_key,
)

SYSTEM_JSON = {
    "kind": "rag",
    "object": "app:SupportRag",
    "name": "support-rag",
    "version": "v1",
    "depth": 6,
    "top_k": 2,
    "token_budget": 40,
    "index_version": "kb-1",
    "retriever_version": None,
}
SYSTEM = SystemConfig(**SYSTEM_JSON)
INPUT = {"question": "How long do refunds take?"}
CONTEXT = [
    {"doc_id": "kb-01", "chunk_id": None, "text": "Refunds take 14 days."},
    {"doc_id": "kb-02", "chunk_id": "c1", "text": "Annual plans renew yearly."},
]


def _with(**changes):
    return SystemConfig(**{**SYSTEM_JSON, **changes})


def test_canonical_json_sorts_keys_and_drops_whitespace():
    assert canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'
    assert content_hash({"b": 1, "a": 2}) == content_hash({"a": 2, "b": 1})
    assert content_hash({"a": 1}) == hashlib.sha256(b'{"a":1}').hexdigest()


def test_retrieval_key_is_the_hash_of_its_documented_identity():
    expected = content_hash(
        {
            "stage": "retrieve",
            "schema": SCHEMA_VERSION,
            "system": "support-rag",
            "index_version": "kb-1",
            "retriever_version": None,
            "depth": 6,
            "input": INPUT,
        }
    )
    assert retrieval_key(SYSTEM, INPUT) == expected
    assert len(expected) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"top_k": 1},
        {"token_budget": None},
        {"token_budget": 120},
        {"version": "v2"},
        {"object": "other:Class"},
    ],
    ids=["top_k", "no-budget", "budget", "version", "object"],
)
def test_retrieval_key_ignores_assembly_and_generation_settings(change):
    assert retrieval_key(_with(**change), INPUT) == retrieval_key(SYSTEM, INPUT)


@pytest.mark.parametrize(
    "change",
    [
        {"index_version": "kb-2"},
        {"depth": 7},
        {"retriever_version": "r2"},
        {"name": "other-rag"},
    ],
    ids=["index_version", "depth", "retriever_version", "name"],
)
def test_retrieval_key_changes_with_retrieval_settings(change):
    assert retrieval_key(_with(**change), INPUT) != retrieval_key(SYSTEM, INPUT)


def test_retrieval_key_changes_with_input_but_not_with_key_order():
    assert retrieval_key(SYSTEM, {"question": "other"}) != retrieval_key(SYSTEM, INPUT)
    assert retrieval_key(SYSTEM, {"a": 1, "b": 2}) == retrieval_key(SYSTEM, {"b": 2, "a": 1})
    # A missing retriever_version reads as None.
    without = {key: value for key, value in SYSTEM_JSON.items() if key != "retriever_version"}
    assert retrieval_key(SystemConfig(**without), INPUT) == retrieval_key(SYSTEM, INPUT)


def test_generation_key_changes_with_context_text_and_order():
    base = generation_key(SYSTEM, INPUT, CONTEXT)
    edited = [dict(CONTEXT[0], text="Refunds take 15 days."), CONTEXT[1]]
    assert generation_key(SYSTEM, INPUT, edited) != base
    assert generation_key(SYSTEM, INPUT, list(reversed(CONTEXT))) != base
    assert generation_key(SYSTEM, INPUT, CONTEXT[:1]) != base
    rechunked = [CONTEXT[0], dict(CONTEXT[1], chunk_id="c2")]
    assert generation_key(SYSTEM, INPUT, rechunked) != base
    # Only doc id, chunk id and text count: scores, positions and tokens do not.
    decorated = [dict(p, score=0.5, position=i + 1, tokens=3) for i, p in enumerate(CONTEXT)]
    assert generation_key(SYSTEM, INPUT, decorated) == base


def test_generation_key_follows_name_version_and_input_only():
    base = generation_key(SYSTEM, INPUT, CONTEXT)
    assert generation_key(_with(version="v2"), INPUT, CONTEXT) != base
    assert generation_key(_with(name="x"), INPUT, CONTEXT) != base
    assert generation_key(SYSTEM, {"question": "?"}, CONTEXT) != base
    for change in ({"index_version": "kb-2"}, {"top_k": 1}, {"depth": 3}, {"token_budget": 5}):
        assert generation_key(_with(**change), INPUT, CONTEXT) == base


def test_generation_key_tells_no_context_from_an_empty_context():
    assert generation_key(SYSTEM, INPUT, None) != generation_key(SYSTEM, INPUT, [])


def test_assembly_key_covers_top_k_budget_version_and_retrieval():
    retrieval = retrieval_key(SYSTEM, INPUT)
    base = assembly_key(SYSTEM, retrieval)
    assert assembly_key(_with(top_k=1), retrieval) != base
    assert assembly_key(_with(token_budget=120), retrieval) != base
    assert assembly_key(_with(version="v2"), retrieval) != base
    assert assembly_key(SYSTEM, retrieval_key(_with(depth=7), INPUT)) != base
    assert assembly_key(_with(index_version="kb-2", object="x:Y"), retrieval) == base


def test_execution_key_covers_the_whole_configuration_except_the_object():
    base = execution_key(SYSTEM, INPUT)
    assert execution_key(_with(object="elsewhere:Rag"), INPUT) == base
    for change in (
        {"top_k": 1},
        {"token_budget": None},
        {"version": "v2"},
        {"index_version": "kb-2"},
        {"depth": 5},
        {"retriever_version": "r2"},
    ):
        assert execution_key(_with(**change), INPUT) != base, change
    assert execution_key(SYSTEM, {"question": "?"}) != base


def test_judgment_key_covers_spec_and_fields():
    spec = {"type": "contains", "version": "1", "options": {"field": "answer"}}
    fields = {"actual": "14 days", "references": ["14 days"]}
    base = judgment_key(spec, fields)
    assert judgment_key(spec, {**fields, "actual": "15 days"}) != base
    assert judgment_key({**spec, "version": "2"}, fields) != base
    assert judgment_key(spec, dict(reversed(list(fields.items())))) == base


def test_equal_identities_never_collide_across_stages():
    identity = {"system": "support-rag", "input": INPUT}
    stages = ["retrieve", "assemble", "generate", "judge", "execute"]
    keys = {_key(stage, identity) for stage in stages}
    assert len(keys) == len(stages)
    assert _key("retrieve", identity) == content_hash(
        {"stage": "retrieve", "schema": SCHEMA_VERSION, **identity}
    )


def test_public_keys_differ_for_one_system_and_input():
    retrieval = retrieval_key(SYSTEM, INPUT)
    keys = [
        retrieval,
        assembly_key(SYSTEM, retrieval),
        generation_key(SYSTEM, INPUT, None),
        generation_key(SYSTEM, INPUT, CONTEXT),
        execution_key(SYSTEM, INPUT),
        judgment_key({"type": "x"}, {"input": INPUT}),
    ]
    assert len(set(keys)) == len(keys)
    assert all(len(key) == 64 and int(key, 16) >= 0 for key in keys)
    json.dumps(keys)  # plain strings


# --- a system's own parameters ------------------------------------------------------

RETRIEVER = {"mode": "vector", "chunk_size": 256}
GENERATOR = {"model": "m-1", "temperature": 0.0}


def test_declared_parameters_enter_their_stage_identity_under_their_name():
    declared = _with(retriever=RETRIEVER, generator=GENERATOR)
    documented = {"system": "support-rag", "index_version": "kb-1", "retriever_version": None, "depth": 6}
    assert retrieval_key(declared, INPUT) == _key("retrieve", {**documented, "input": INPUT, "retriever": RETRIEVER})
    assert generation_key(declared, INPUT, CONTEXT) == _key(
        "generate", {"system": "support-rag", "version": "v1", "input": INPUT, "context": CONTEXT,
                     "generator": GENERATOR},
    )  # fmt: skip


def test_a_retriever_parameter_changes_the_retrieval_identity_only():
    base = _with(retriever=RETRIEVER, generator=GENERATOR)
    changed = _with(retriever={**RETRIEVER, "chunk_size": 512}, generator=GENERATOR)
    assert retrieval_key(changed, INPUT) != retrieval_key(base, INPUT)
    assert generation_key(changed, INPUT, CONTEXT) == generation_key(base, INPUT, CONTEXT)
    retrieval = retrieval_key(base, INPUT)
    assert assembly_key(changed, retrieval) == assembly_key(base, retrieval)
    assert execution_key(changed, INPUT) != execution_key(base, INPUT)


def test_a_generator_parameter_changes_the_generation_identity_only():
    base = _with(retriever=RETRIEVER, generator=GENERATOR)
    changed = _with(retriever=RETRIEVER, generator={**GENERATOR, "temperature": 0.7})
    assert generation_key(changed, INPUT, CONTEXT) != generation_key(base, INPUT, CONTEXT)
    assert generation_key(changed, INPUT, None) != generation_key(base, INPUT, None)  # a plain system's too
    assert retrieval_key(changed, INPUT) == retrieval_key(base, INPUT)
    assert execution_key(changed, INPUT) != execution_key(base, INPUT)


def test_no_declared_parameters_keep_the_identities_of_a_system_without_them():
    # Declaring a model with no fields is declaring parameters: their (empty) JSON counts.
    assert retrieval_key(_with(retriever={}), INPUT) != retrieval_key(SYSTEM, INPUT)
    # Without parameters, the execution identity is what it was before they existed: the
    # whole configuration as JSON, less the object, beside the input.
    before = {key: value for key, value in SYSTEM_JSON.items() if key != "object"}
    expected = content_hash({"stage": "execute", "schema": SCHEMA_VERSION, "system": before, "input": INPUT})
    assert execution_key(_with(retriever=None, generator=None), INPUT) == expected
    assert SystemConfig(**SYSTEM_JSON).model_dump(mode="json") == SYSTEM_JSON
