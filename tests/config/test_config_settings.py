"""The system settings: one declaration, read by every consumer.

The resolved configuration's JSON is hashed into stage identities and recorded in
run manifests, so its shape is pinned here to the letter.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from oloproof import agent_system, rag_system, system
from oloproof._system._decorators import SystemDeclaration
from oloproof._system._resolve import SystemConfig, resolve_system
from oloproof.config import AgentSettings, RagSettings, SystemSettings, load_project
from oloproof.config._settings import (
    PARAMETER_BLOCKS,
    NameAndVersion,
    RagParameters,
    is_required,
    setting_paths,
    text_settings,
)
from oloproof.stages._identity import assembly_key, execution_key, generation_key, retrieval_key

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"

EXAMPLE_CONFIG = {
    "kind": "rag",
    "object": "app:SupportRag",
    "name": "support-rag",
    "version": "slice-b-example",
    "depth": 6,
    "top_k": 2,
    "token_budget": 40,
    "index_version": "kb-2026-09-16",
    "retriever_version": None,
}


def test_the_example_resolves_to_its_pinned_json():
    dumped = resolve_system(load_project(EXAMPLE)).config.model_dump(mode="json")
    assert list(dumped.items()) == list(EXAMPLE_CONFIG.items())  # the order too


def test_the_example_keeps_its_stage_identities():
    system_json = resolve_system(load_project(EXAMPLE)).config
    case_input = {"question": "How do I reset my password?"}
    assert retrieval_key(system_json, case_input) == (
        "30b6af70b075b11e81e6cc03e13aea330b4ef441299d533de179e735ce9af1c4"
    )
    assert assembly_key(system_json, "r" * 64) == (
        "a39d8f91e1b8338c22a037961eb3f578f9f00e274de75fc2eb07e5766f6ba4e3"
    )
    assert generation_key(system_json, case_input, None) == (
        "09e65bd57a501de03d3bc3f900613cf5a610ea7c2a570147e48ecce1cc34ced4"
    )
    assert execution_key(system_json, case_input) == (
        "934848d2e0bb75ff39f35a3e276aa226c1ae7d81a7f7b2700c31119ec1f56102"
    )


def test_a_plain_system_dumps_every_setting_as_null(tmp_path):
    (tmp_path / "settings_plain_app.py").write_text(
        "from oloproof import system\n\n@system(name='p', version='1')\ndef answer(input):\n    return input\n",
        encoding="utf-8",
    )
    (tmp_path / "oloproof.yaml").write_text(
        "system:\n  object: settings_plain_app:answer\ndataset: cases.jsonl\n", encoding="utf-8"
    )
    dumped = resolve_system(load_project(tmp_path)).config.model_dump(mode="json")
    assert list(dumped.items()) == [
        ("kind", "plain"),
        ("object", "settings_plain_app:answer"),
        ("name", "p"),
        ("version", "1"),
        ("depth", None),
        ("top_k", None),
        ("token_budget", None),
        ("index_version", None),
        ("retriever_version", None),
    ]


# --- one declaration, read by every consumer --------------------------------------

NAMES = list(NameAndVersion.model_fields)
RAG = list(RagParameters.model_fields)


def test_every_consumer_reads_the_declared_settings():
    assert NAMES == ["name", "version"]
    assert RAG == ["depth", "top_k", "token_budget", "index_version", "retriever_version"]
    assert PARAMETER_BLOCKS == ("retriever", "generator")
    assert list(inspect.signature(rag_system).parameters) == NAMES + RAG + list(PARAMETER_BLOCKS)
    assert list(inspect.signature(system).parameters) == NAMES + ["generator"]
    assert list(SystemDeclaration.model_fields) == NAMES + RAG + ["kind", *PARAMETER_BLOCKS]
    assert list(SystemSettings.model_fields) == NAMES + ["object", "rag", "agent", "generator", "deterministic"]
    assert list(inspect.signature(agent_system).parameters) == NAMES + ["index_version", "generator"]
    assert list(AgentSettings.model_fields) == ["object", "index_version", "generator", "tools"]
    assert list(RagSettings.model_fields) == ["object"] + RAG + list(PARAMETER_BLOCKS)
    assert list(SystemConfig.model_fields) == ["kind", "object"] + NAMES + RAG + [*PARAMETER_BLOCKS, "tools"]
    assert setting_paths() == {
        **{name: ("system", name) for name in NAMES},
        **{name: ("system", "rag", name) for name in RAG + list(PARAMETER_BLOCKS)},
    }


def test_required_and_text_settings_are_read_from_the_declaration():
    required = [name for name in NAMES + RAG if is_required(SystemConfig, name)]
    assert required == ["name", "version", "depth", "top_k", "index_version"]
    assert text_settings(NameAndVersion) == ("name", "version")
    assert text_settings(RagParameters) == ("index_version", "retriever_version")


def test_wrong_decorator_arguments_are_worded_as_python_words_them():
    cases = {
        lambda: rag_system(topk=3): "rag_system() got an unexpected keyword argument 'topk'",
        lambda: rag_system(kind="plain"): "rag_system() got an unexpected keyword argument 'kind'",
        lambda: rag_system(*"abcdefgh"): "rag_system() takes from 0 to 7 positional arguments but 8 were given",
        lambda: rag_system("a", name="b"): "rag_system() got multiple values for argument 'name'",
        lambda: system(depth=3): "system() got an unexpected keyword argument 'depth'",
        lambda: system("a", "b", "c"): "system() takes from 0 to 2 positional arguments but 3 were given",
    }
    for call, message in cases.items():
        with pytest.raises(TypeError) as raised:
            call()
        assert str(raised.value) == message


def test_the_decorators_take_the_settings_by_position_too():
    assert all(p.default is None for p in inspect.signature(rag_system).parameters.values())

    @rag_system("r", "1", 5, 2)
    class Rag: ...

    declared = Rag.__oloproof_system__
    assert (declared.name, declared.version, declared.depth, declared.top_k) == ("r", "1", 5, 2)
    answer = system("p", "2")(lambda input: input)
    assert answer.__oloproof_system__ == SystemDeclaration(kind="plain", name="p", version="2")
