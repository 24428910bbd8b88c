"""The user-facing system API: Passage, Retrieval, @rag_system, @system, resolve_system."""

from __future__ import annotations

import textwrap

import pytest
from pydantic import ValidationError

from oloproof import Passage, Retrieval, rag_system, system
from oloproof._exceptions import ConfigError
from oloproof._system._decorators import DECLARATION_ATTRIBUTE, SystemDeclaration
from oloproof._system._resolve import resolve_system
from oloproof.config import load_project, parse_overrides

# --- Passage and Retrieval ----------------------------------------------------


def test_passage_positional_and_keyword_construction():
    assert Passage("kb-01", 0.5, "text") == Passage(doc_id="kb-01", score=0.5, text="text")
    passage = Passage(doc_id=12, chunk_id=3)
    assert (passage.doc_id, passage.chunk_id, passage.score, passage.text) == ("12", "3", None, None)
    assert passage.unit_id == "12#3"
    assert Passage("kb-01").unit_id == "kb-01"


def test_passage_is_frozen_and_strict():
    passage = Passage("kb-01")
    with pytest.raises(ValidationError):
        passage.doc_id = "other"
    with pytest.raises(ValidationError):
        Passage("kb-01", title="extra field")
    with pytest.raises(ValidationError):
        Passage()  # doc_id is required
    with pytest.raises(ValidationError):
        Passage(True)  # a bool is not an id


def test_retrieval_keeps_the_retriever_order():
    retrieval = Retrieval("rewritten", 3, [Passage("b"), Passage("a")])
    assert retrieval.query == "rewritten" and retrieval.depth == 3
    assert [p.doc_id for p in retrieval.candidates] == ["b", "a"]
    assert isinstance(retrieval.candidates, tuple)
    assert Retrieval(depth=2).candidates == ()


def test_retrieval_rejects_items_that_are_not_passages():
    with pytest.raises(ValidationError) as raised:
        Retrieval(query="q", depth=2, candidates=[Passage("a"), {"doc_id": "b"}])
    (error,) = raised.value.errors()
    assert error["loc"] == ("candidates",)
    assert error["msg"] == "Value error, candidate 2 is dict, expected Passage"


def test_retrieval_needs_a_depth():
    with pytest.raises(ValidationError):
        Retrieval(query="q", candidates=[])


# --- decorators ---------------------------------------------------------------


def test_rag_system_records_a_declaration_and_returns_the_class():
    @rag_system(name="r", version="1", depth=5, top_k=2, index_version="i")
    class Rag:
        def retrieve(self, input, depth): ...
        def generate(self, input, context): ...

    declared = getattr(Rag, DECLARATION_ATTRIBUTE)
    assert isinstance(Rag, type)
    assert declared == SystemDeclaration(kind="rag", name="r", version="1", depth=5, top_k=2, index_version="i")
    assert declared.token_budget is None and declared.retriever_version is None


def test_rag_system_rejects_a_function_and_bad_settings():
    with pytest.raises(TypeError, match="decorates a class"):
        rag_system(name="r")(lambda: None)
    with pytest.raises(ValidationError):
        rag_system(depth=0)
    with pytest.raises(ValidationError):
        rag_system(token_budget=0)


def test_system_decorates_sync_and_async_functions():
    @system(name="p", version="2")
    def answer(input):
        return input

    @system(name="pa", version="3")
    async def answer_async(input):
        return input

    assert answer("x") == "x"
    assert getattr(answer, DECLARATION_ATTRIBUTE) == SystemDeclaration(kind="plain", name="p", version="2")
    assert getattr(answer_async, DECLARATION_ATTRIBUTE).version == "3"
    with pytest.raises(TypeError, match="decorates a function"):
        system(name="p")("not callable")


# --- resolve_system -----------------------------------------------------------

MODULE = """
from oloproof import Passage, Retrieval, rag_system, system


@rag_system(name="declared", version="d1", depth=6, top_k=2, token_budget=30, index_version="idx-d")
class Counted:
    def retrieve(self, input, depth):
        return Retrieval(query=input, depth=depth)

    def generate(self, input, context):
        return {"answer": input}

    def count_tokens(self, passage):
        return 1


@rag_system(name="nocount", version="1", depth=3, top_k=1, index_version="i")
class NoCount:
    def retrieve(self, input, depth):
        return Retrieval(query=input, depth=depth)

    def generate(self, input, context):
        return {"answer": input}


@rag_system(name="half")
class Half:
    def retrieve(self, input, depth):
        return Retrieval(query=input, depth=depth)

    def generate(self, input, context):
        return {"answer": input}


@rag_system(name="nogen", version="1", depth=3, top_k=1, index_version="i")
class NoGenerate:
    def retrieve(self, input, depth):
        return Retrieval(query=input, depth=depth)


@system(name="plain", version="p1")
def plain(input):
    return {"answer": input}
"""


def project_with(tmp_path, module_name: str, system_yaml: str):
    (tmp_path / f"{module_name}.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "oloproof.yaml").write_text(
        "system:\n" + textwrap.indent(textwrap.dedent(system_yaml).strip(), "  ") + "\ndataset: cases.jsonl\n",
        encoding="utf-8",
    )
    return tmp_path


def test_decorator_settings_apply_when_the_file_is_silent(tmp_path):
    project = load_project(project_with(tmp_path, "sysapi_mod_a", "rag: {object: sysapi_mod_a:Counted}"))
    handle = resolve_system(project)
    assert handle.config.model_dump() == {
        "kind": "rag",
        "object": "sysapi_mod_a:Counted",
        "name": "declared",
        "version": "d1",
        "depth": 6,
        "top_k": 2,
        "token_budget": 30,
        "index_version": "idx-d",
        "retriever_version": None,
    }
    assert type(handle.target).__name__ == "Counted"  # the class is instantiated
    assert handle.retrieve("q", 6) == Retrieval(query="q", depth=6)
    assert handle.generate("q", []) == {"answer": "q"}
    assert handle.count_tokens(Passage("a")) == 1


def test_the_file_and_set_override_the_decorator(tmp_path):
    directory = project_with(
        tmp_path,
        "sysapi_mod_b",
        """
        name: from-file
        rag:
          object: sysapi_mod_b:Counted
          top_k: 1
          index_version: idx-file
        """,
    )
    config = resolve_system(load_project(directory, parse_overrides(["system.rag.depth=4", "system.version=v9"]))).config
    assert (config.name, config.version, config.depth, config.top_k, config.index_version) == (
        "from-file",
        "v9",
        4,
        1,
        "idx-file",
    )
    assert config.token_budget == 30


def test_top_k_above_depth_is_rejected(tmp_path):
    directory = project_with(tmp_path, "sysapi_mod_c", "rag: {object: sysapi_mod_c:Counted, top_k: 7}")
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory))
    assert str(raised.value) == (
        f"{tmp_path / 'oloproof.yaml'}:2: field 'system.rag.top_k': top_k (7) cannot exceed depth (6)"
    )


def test_token_budget_needs_count_tokens(tmp_path):
    directory = project_with(tmp_path, "sysapi_mod_d", "rag: {object: sysapi_mod_d:NoCount}")
    assert resolve_system(load_project(directory)).config.token_budget is None
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory, parse_overrides(["system.rag.token_budget=50"])))
    assert str(raised.value) == (
        "--set: field 'system.rag.token_budget': a token_budget needs a count_tokens(passage) "
        "method on the system (Oloproof never estimates tokens)"
    )


def test_missing_required_settings_are_named(tmp_path):
    directory = project_with(tmp_path, "sysapi_mod_e", "rag: {object: sysapi_mod_e:Half}")
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory))
    assert raised.value.field == "system.version"
    assert raised.value.message == "required: set it in oloproof.yaml or in the system's decorator"
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory, parse_overrides(["system.version=1"])))
    assert raised.value.field == "system.rag.depth"


def test_a_class_without_generate_is_rejected(tmp_path):
    directory = project_with(tmp_path, "sysapi_mod_f", "rag: {object: sysapi_mod_f:NoGenerate}")
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory))
    assert raised.value.message == "sysapi_mod_f:NoGenerate has no generate() method"
    assert raised.value.field == "system.rag.object"


def test_plain_system_resolves_and_rejects_a_class(tmp_path):
    directory = project_with(tmp_path, "sysapi_mod_g", "object: sysapi_mod_g:plain")
    handle = resolve_system(load_project(directory))
    assert handle.config.model_dump(exclude_none=True) == {
        "kind": "plain",
        "object": "sysapi_mod_g:plain",
        "name": "plain",
        "version": "p1",
    }
    assert handle.generate("x") == {"answer": "x"}
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory, parse_overrides(["system.object=sysapi_mod_g:Counted"])))
    assert raised.value.message == "system.object must be a function input -> output"


def test_bad_object_specs(tmp_path):
    directory = project_with(tmp_path, "sysapi_mod_h", "object: sysapi_mod_h:plain")
    cases = {
        "sysapi_mod_h": "expected module:attribute, got 'sysapi_mod_h'",
        "sysapi_no_such_module:plain": (
            "cannot import 'sysapi_no_such_module': ModuleNotFoundError: "
            "No module named 'sysapi_no_such_module'"
        ),
        "sysapi_mod_h:missing": "module 'sysapi_mod_h' has no attribute 'missing'",
    }
    for spec, message in cases.items():
        with pytest.raises(ConfigError) as raised:
            resolve_system(load_project(directory, parse_overrides([f"system.object={spec}"])))
        assert str(raised.value) == f"--set: field 'system.object': {message}"


def test_neither_object_is_an_error(tmp_path):
    directory = project_with(tmp_path, "sysapi_mod_i", "name: x")
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory))
    assert str(raised.value) == (
        f"{tmp_path / 'oloproof.yaml'}:1: field 'system': expected system.rag.object or system.object"
    )


def test_two_projects_with_the_same_module_name_each_get_their_own(tmp_path):
    handles = []
    for label in ("first", "second"):
        directory = tmp_path / label
        directory.mkdir()
        (directory / "sysapi_shared_app.py").write_text(
            "from oloproof import system\n\n"
            f"@system(name='{label}', version='1')\n"
            "def answer(input):\n"
            f"    return '{label}'\n"
        )
        (directory / "oloproof.yaml").write_text(
            "system:\n  object: sysapi_shared_app:answer\ndataset: cases.jsonl\n"
        )
        handles.append(resolve_system(load_project(directory)))
    assert [h.config.name for h in handles] == ["first", "second"]
    assert [h.generate("q") for h in handles] == ["first", "second"]


def test_an_explicit_null_switches_off_a_declared_token_budget(tmp_path):
    directory = project_with(tmp_path, "sysapi_mod_j", "rag: {object: sysapi_mod_j:Counted}")
    assert resolve_system(load_project(directory)).config.token_budget == 30
    config = resolve_system(load_project(directory, parse_overrides(["system.rag.token_budget=null"]))).config
    assert config.token_budget is None


def test_a_missing_required_setting_names_file_line_and_field(tmp_path):
    directory = project_with(
        tmp_path, "sysapi_mod_k", "version: '1'\nrag: {object: sysapi_mod_k:Half, depth: 3, top_k: 2}"
    )
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory))
    assert str(raised.value) == (
        f"{tmp_path / 'oloproof.yaml'}:3: field 'system.rag.index_version': "
        "required: set it in oloproof.yaml or in the system's decorator"
    )
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory, parse_overrides(["system.rag.index_version=i", "system.rag.depth=null"])))
    assert str(raised.value) == (
        "--set: field 'system.rag.depth': required: set it in oloproof.yaml or in the system's decorator"
    )


def test_an_empty_or_null_name_in_the_file_leaves_the_declared_one(tmp_path):
    directory = project_with(
        tmp_path, "sysapi_mod_l", "name: ''\nversion: null\nrag: {object: sysapi_mod_l:Counted, index_version: 7}"
    )
    config = resolve_system(load_project(directory)).config
    assert (config.name, config.version, config.index_version) == ("declared", "d1", "7")


@pytest.mark.parametrize("spec", ["os:system", "builtins:print"])
def test_an_undeclared_callable_is_not_a_system(tmp_path, spec):
    # Naming any importable callable would run it with every case's input.
    directory = project_with(tmp_path, "sysapi_mod_u", f"object: {spec}")
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(directory))
    assert raised.value.message == (f"{spec} is not declared as a system: decorate it with "
                                    "@oloproof.system(name=..., version=...)")
    assert raised.value.field == "system.object" and raised.value.line is not None
