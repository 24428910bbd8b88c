"""A system's own parameters: declared by a model, set in the file or with ``--set``, checked."""

from __future__ import annotations

import textwrap

import pytest

from oloproof._exceptions import ConfigError
from oloproof._system._resolve import resolve_system
from oloproof.config import load_project

MODULE = '''
from typing import Literal

from pydantic import BaseModel, Field

from oloproof import rag_system, system


class Search(BaseModel):
    mode: Literal["vector", "keyword", "hybrid"] = "vector"
    chunk_size: int = Field(default=256, ge=1)


class Sampling(BaseModel):
    temperature: float = 0.0
    model: str


@rag_system(name="r", version="1", depth=3, top_k=2, index_version="i", retriever=Search, generator=Sampling)
class Rag:
    def retrieve(self, input, depth, params):
        return None

    def generate(self, input, context, params):
        return None


@rag_system(name="r", version="1", depth=3, top_k=2, index_version="i", retriever=Search)
class TwoArguments:
    def retrieve(self, input, depth):
        return None

    def generate(self, input, context):
        return None


@rag_system(name="r", version="1", depth=3, top_k=2, index_version="i")
class Undeclared(TwoArguments):
    pass


@system(name="p", version="1", generator=Sampling)
def answer(input, params):
    return input
'''


def _project(tmp_path, module: str, system: str):
    (tmp_path / f"{module}.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "oloproof.yaml").write_text(
        textwrap.dedent(system).replace("MODULE", module) + "dataset: cases.jsonl\n", encoding="utf-8"
    )
    return tmp_path


RAG = """\
system:
  rag:
    object: MODULE:Rag
    retriever:
      chunk_size: 512
    generator: {model: m-1}
"""


def _error(project, **settings) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(project, settings))
    return raised.value


def test_the_file_sets_values_the_model_fills_the_rest_and_the_call_gets_them(tmp_path):
    handle = resolve_system(load_project(_project(tmp_path, "params_set", RAG)))
    assert handle.config.retriever == {"mode": "vector", "chunk_size": 512}
    assert handle.config.generator == {"temperature": 0.0, "model": "m-1"}
    assert type(handle.retriever_params).__name__ == "Search"
    assert handle.retriever_params.chunk_size == 512
    assert handle.generator_params.model == "m-1"
    assert list(handle.config.model_dump(mode="json"))[-2:] == ["retriever", "generator"]


def test_set_overrides_one_parameter(tmp_path):
    project = _project(tmp_path, "params_override", RAG)
    handle = resolve_system(load_project(project, {"system.rag.retriever.mode": "hybrid",
                                                   "system.rag.generator.temperature": 0.7}))  # fmt: skip
    assert handle.config.retriever == {"mode": "hybrid", "chunk_size": 512}
    assert handle.config.generator == {"temperature": 0.7, "model": "m-1"}


def test_a_bad_value_names_the_file_the_line_and_the_field(tmp_path):
    project = _project(tmp_path, "params_bad", RAG.replace("chunk_size: 512", "chunk_size: 0"))
    error = _error(project)
    assert (error.path, error.line, error.field) == (str(project / "oloproof.yaml"), 5, "system.rag.retriever.chunk_size")
    assert error.message == "Input should be greater than or equal to 1 (got 0)"
    error = _error(project, **{"system.rag.retriever.chunk_size": 8, "system.rag.retriever.mode": "semantic"})
    assert (error.path, error.line, error.field) == ("--set", None, "system.rag.retriever.mode")


def test_an_unknown_or_missing_parameter_is_named(tmp_path):
    project = _project(tmp_path, "params_unknown", RAG.replace("chunk_size: 512", "chunk_sise: 512"))
    error = _error(project)
    assert (error.line, error.field) == (5, "system.rag.retriever.chunk_sise")
    assert error.message == "unknown parameter of Search (known: mode, chunk_size)"
    error = _error(_project(tmp_path, "params_missing", RAG.replace("{model: m-1}", "{}")))
    assert (error.line, error.field, error.message) == (6, "system.rag.generator.model", "required field is missing")


def test_parameters_for_a_system_that_declares_none_are_refused(tmp_path):
    project = _project(tmp_path, "params_undeclared", RAG.replace("MODULE:Rag", "MODULE:Undeclared"))
    error = _error(project)
    assert (error.line, error.field) == (4, "system.rag.retriever")
    assert error.message.startswith("params_undeclared:Undeclared declares no retriever parameters")


def test_a_method_that_cannot_take_its_parameters_is_refused_before_any_call(tmp_path):
    project = _project(tmp_path, "params_arity", "system:\n  rag:\n    object: MODULE:TwoArguments\n")
    error = _error(project)
    assert (error.line, error.field) == (3, "system.rag.object")
    assert error.message.startswith("params_arity:TwoArguments.retrieve(input, depth, params) is how")


def test_a_plain_system_takes_its_parameters_from_system_generator(tmp_path):
    project = _project(tmp_path, "params_plain", "system:\n  object: MODULE:answer\n  generator: {model: m}\n")
    handle = resolve_system(load_project(project, {"system.generator.temperature": 1.5}))
    assert handle.config.generator == {"temperature": 1.5, "model": "m"}
    assert handle.config.retriever is None and handle.retriever_params is None
    assert "retriever" not in handle.config.model_dump(mode="json")


def test_a_staged_system_keeps_its_generator_parameters_under_rag(tmp_path):
    project = _project(tmp_path, "params_misplaced", RAG + "  generator: {model: m}\n")
    error = _error(project)
    assert error.field == "system.generator"


def test_a_file_without_blocks_dumps_as_before(tmp_path):
    project = _project(tmp_path, "params_none", "system:\n  rag:\n    object: MODULE:Undeclared\n")
    loaded = load_project(project)
    assert "retriever" not in loaded.config.model_dump(mode="json")["system"]["rag"]
    assert "generator" not in loaded.config.model_dump(mode="json")["system"]
    assert resolve_system(loaded).config.retriever is None


@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_a_parameter_that_is_not_a_finite_number_is_refused(tmp_path, value):
    # JSON holds no inf or nan: dumped, they would read as null and share its identity.
    project = _project(tmp_path, f"params_finite_{value.strip('-')}{len(value)}", RAG)
    error = _error(project, **{"system.rag.generator.temperature": value})
    assert (error.path, error.field) == ("--set", "system.rag.generator.temperature")
    assert "not a finite number" in error.message
