"""A run's evaluators from ``evaluators:`` and ``testing_criteria``, and every row's
inputs checked before anything runs."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from oloproof._exceptions import ConfigError, DatasetError
from oloproof.config import load_project
from oloproof.dataset import load_cases
from oloproof.evaluators import build_evaluators
from oloproof.tasks._inputs import build_project_evaluators, check_inputs, row_view

YAML = """\
system:
  name: demo
  version: 1
  rag:
    object: app:Rag
    depth: 4
    top_k: 2
dataset: cases.jsonl
evaluators:
  - {type: contains}
"""

CRITERIA = """\
testing_criteria:
  - type: azure_ai_evaluator
    name: docs
    evaluator_name: builtin.document_retrieval
    initialization_parameters: {ground_truth_label_min: 1, ground_truth_label_max: 5}
"""


def _system(kind: str = "rag") -> SimpleNamespace:
    return SimpleNamespace(config=SimpleNamespace(kind=kind), context_tools=())


def _dataset(tmp_path, rows, *, recorded=False):
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return load_cases(str(path), recorded=recorded)


def _locate(message, location):
    return ConfigError(message, field=".".join(map(str, location)))


def test_native_evaluators_come_first_then_the_criteria(tmp_path):
    (tmp_path / "oloproof.yaml").write_text(YAML + CRITERIA, encoding="utf-8")
    evaluators, _ = build_project_evaluators(load_project(tmp_path), _system())
    assert [(e.type_name, e.criterion) for e in evaluators] == [("contains", "contains"),
                                                               ("document_retrieval", "docs")]


def test_an_error_in_a_criterion_points_at_the_criterion_not_the_evaluators(tmp_path):
    (tmp_path / "oloproof.yaml").write_text(YAML + CRITERIA, encoding="utf-8")
    _, locate = build_project_evaluators(load_project(tmp_path), _system())
    native = locate("bad", ("evaluators", 0, "type"))
    translated = locate("bad", ("evaluators", 1, "k"))
    assert (native.line, native.field) == (10, "evaluators.0.type")
    assert (translated.line, translated.field) == (12, "testing_criteria.0.k")


def test_a_retrieval_evaluator_needs_a_rag_system(tmp_path):
    (tmp_path / "oloproof.yaml").write_text(YAML + "  - {type: hit_rate, k: 2}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="needs a @rag_system") as caught:
        build_project_evaluators(load_project(tmp_path), _system("plain"))
    assert caught.value.line == 11


def test_row_view_shows_the_row_without_an_output(tmp_path):
    dataset = _dataset(tmp_path, [{"id": "c1", "input": {"question": "q"}, "expected": {"answer": "a"},
                                   "metadata": {"team": "x"}}])  # fmt: skip
    view = row_view(dataset, dataset.cases[0])
    assert (view.case_id, view.input, view.output, view.metadata) == ("c1", {"question": "q"}, None, {"team": "x"})
    assert view.expected == {"answer": "a"} and not view.recorded
    assert view.item == dataset.item(dataset.cases[0])


def test_a_bad_row_input_names_the_file_line_and_field(tmp_path):
    rows = [{"query": "q1", "context": "fine", "response": "r"}, {"query": "q2", "context": 7, "response": "r"}]
    dataset = _dataset(tmp_path, rows, recorded=True)
    evaluators = build_evaluators(
        [{"type": "groundedness", "provider": "p", "model": "m"}], rag=False, recorded=True,
        providers={"p": SimpleNamespace(type="openai")},
    )  # fmt: skip
    with pytest.raises(DatasetError) as caught:
        check_inputs(evaluators, dataset, _locate)
    assert (caught.value.path, caught.value.line, caught.value.field) == (dataset.url, 2, "context")


def test_a_mapped_field_no_row_has_is_a_config_error_at_the_mapping(tmp_path):
    dataset = _dataset(tmp_path, [{"id": "c1", "input": "q", "expected": {"answer": "a"}}])
    evaluators = build_evaluators(
        [{"type": "relevance", "provider": "p", "model": "m",
          "data_mapping": {"query": "{{item.input}}", "response": "{{item.metadata.reply}}"}}],
        rag=False, providers={"p": SimpleNamespace(type="openai")},
    )  # fmt: skip
    with pytest.raises(ConfigError, match=r"has \{\{item.metadata.reply\}\}") as caught:
        check_inputs(evaluators, dataset, _locate)
    assert caught.value.field == "evaluators.0.data_mapping.response"


def test_a_field_some_row_has_passes(tmp_path):
    rows = [{"id": "c1", "input": "q", "metadata": {"reply": "r"}}, {"id": "c2", "input": "q"}]
    dataset = _dataset(tmp_path, rows)
    evaluators = build_evaluators(
        [{"type": "relevance", "provider": "p", "model": "m",
          "data_mapping": {"query": "{{item.input}}", "response": "{{item.metadata.reply}}"}}],
        rag=False, providers={"p": SimpleNamespace(type="openai")},
    )  # fmt: skip
    check_inputs(evaluators, dataset, _locate)  # the row lacking it is excluded when judged, not refused


def test_recorded_data_has_no_sample_to_map(tmp_path):
    dataset = _dataset(tmp_path, [{"query": "q", "response": "r"}], recorded=True)
    evaluators = build_evaluators(
        [{"type": "relevance", "provider": "p", "model": "m", "data_mapping": {"response": "{{sample.output_text}}"}}],
        rag=False, recorded=True, providers={"p": SimpleNamespace(type="openai")},
    )  # fmt: skip
    with pytest.raises(ConfigError, match="recorded data has none") as caught:
        check_inputs(evaluators, dataset, _locate)
    assert caught.value.field == "evaluators.0.data_mapping.response"


def test_a_required_input_of_recorded_data_is_a_row_field(tmp_path):
    dataset = _dataset(tmp_path, [{"query": "q", "answer": "r"}], recorded=True)
    evaluators = build_evaluators(
        [{"type": "relevance", "provider": "p", "model": "m"}], rag=False, recorded=True,
        providers={"p": SimpleNamespace(type="openai")},
    )  # fmt: skip
    with pytest.raises(ConfigError, match=r"has \{\{item.response\}\} \(relevance reads 'response'") as caught:
        check_inputs(evaluators, dataset, _locate)
    assert caught.value.field == "evaluators.0"
