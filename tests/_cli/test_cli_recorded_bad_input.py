"""Bad recorded rows and bad ``testing_criteria``: exit 2, one line naming the file,
line and field, and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

GOOD_ROW = {
    "id": "q1", "query": "What is the return policy?", "context": "Returns within 30 days.",
    "response": "Within 30 days.",
    "retrieval_ground_truth": [{"document_id": "1", "query_relevance_label": 4}],
    "retrieved_documents": [{"document_id": "1", "relevance_score": 2.5}],
}  # fmt: skip

DOCUMENTS = {
    "type": "azure_ai_evaluator", "name": "document_retrieval", "evaluator_name": "builtin.document_retrieval",
    "data_mapping": {"retrieval_ground_truth": "{{item.retrieval_ground_truth}}",
                     "retrieved_documents": "{{item.retrieved_documents}}"},
}  # fmt: skip


def _setup(folder: Path, rows: list, criteria: list) -> None:
    (folder / "rows.jsonl").write_text(
        "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8"
    )
    (folder / "criteria.json").write_text(json.dumps(criteria, indent=2), encoding="utf-8")


def _line(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if needle in line)


def _rejected(run_cli, folder: Path, expected: str) -> None:
    code, out, err = run_cli("run", "--criteria", "criteria.json", "--dataset", "rows.jsonl")
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    line = err.removeprefix("oloproof: error: ").rstrip("\n")
    assert line.startswith(expected), line
    assert not (folder / ".oloproof").exists()


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_a_row_that_is_not_an_object(run_cli, folder):
    _setup(folder, [GOOD_ROW, "[1, 2]"], [DOCUMENTS])
    _rejected(run_cli, folder, f"{folder / 'rows.jsonl'}:2: expected a JSON object, got list")


def test_a_criterion_of_another_type(run_cli, folder):
    _setup(folder, [GOOD_ROW], [{**DOCUMENTS, "type": "label_model"}])
    path = folder / "criteria.json"
    _rejected(run_cli, folder, f"{path}:{_line(path, 'label_model')}: field '0.type': unknown criterion type 'label_model'")


def test_an_unknown_builtin_lists_the_supported_ones(run_cli, folder):
    _setup(folder, [GOOD_ROW], [{**DOCUMENTS, "evaluator_name": "builtin.fluency"}])
    path = folder / "criteria.json"
    _rejected(run_cli, folder, f"{path}:{_line(path, 'builtin.fluency')}: field '0.evaluator_name': unknown evaluator "
              "'builtin.fluency' (supported: builtin.document_retrieval, builtin.groundedness, builtin.groundedness_pro, "
              "builtin.relevance, builtin.response_completeness, builtin.retrieval)")  # fmt: skip


def test_a_mapping_that_is_not_a_string_template(run_cli, folder):
    mapping = {**DOCUMENTS["data_mapping"], "retrieved_documents": 7}
    _setup(folder, [GOOD_ROW], [{**DOCUMENTS, "data_mapping": mapping}])
    path = folder / "criteria.json"
    line = _line(path, '"retrieved_documents": 7')
    _rejected(run_cli, folder, f"{path}:{line}: "
              "field '0.data_mapping.retrieved_documents': a data_mapping value must be a string template")  # fmt: skip


def test_a_template_naming_another_namespace(run_cli, folder):
    mapping = {**DOCUMENTS["data_mapping"], "retrieved_documents": "{{row.retrieved_documents}}"}
    _setup(folder, [GOOD_ROW], [{**DOCUMENTS, "data_mapping": mapping}])
    path = folder / "criteria.json"
    _rejected(run_cli, folder, f"{path}:{_line(path, '{{row.')}: field '0.data_mapping.retrieved_documents': "
              "template '{{row.retrieved_documents}}' refers to 'row'")  # fmt: skip


def test_a_mapped_field_no_row_has(run_cli, folder):
    mapping = {**DOCUMENTS["data_mapping"], "retrieved_documents": "{{item.results}}"}
    _setup(folder, [GOOD_ROW], [{**DOCUMENTS, "data_mapping": mapping}])
    path = folder / "criteria.json"
    _rejected(run_cli, folder, f"{path}:{_line(path, '{{item.results}}')}: field '0.data_mapping.retrieved_documents': "
              "no row of")  # fmt: skip


def test_a_sample_reference_over_recorded_data(run_cli, folder):
    mapping = {**DOCUMENTS["data_mapping"], "retrieved_documents": "{{sample.retrieved_documents}}"}
    _setup(folder, [GOOD_ROW], [{**DOCUMENTS, "data_mapping": mapping}])
    path = folder / "criteria.json"
    _rejected(run_cli, folder, f"{path}:{_line(path, '{{sample.')}: field '0.data_mapping.retrieved_documents': "
              "{{sample.retrieved_documents}} reads a system's output, and recorded data has none")  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("retrieved_documents", {"document_id": "1"}, "retrieved_documents"),
        ("retrieval_ground_truth", [{"document_id": "1", "query_relevance_label": "2"}],
         "retrieval_ground_truth[0].query_relevance_label"),
        ("retrieval_ground_truth", [{"document_id": "1", "query_relevance_label": True}],
         "retrieval_ground_truth[0].query_relevance_label"),
        ("retrieval_ground_truth", [{"document_id": "1", "query_relevance_label": 2.0}],
         "retrieval_ground_truth[0].query_relevance_label"),
        ("retrieved_documents", [{"document_id": "1"}], "retrieved_documents[0].relevance_score"),
    ],
)  # fmt: skip
def test_an_invalid_list_names_the_row_and_field(run_cli, folder, field, value, where):
    _setup(folder, [GOOD_ROW, {**GOOD_ROW, "id": "q2", field: value}], [DOCUMENTS])
    _rejected(run_cli, folder, f"{folder / 'rows.jsonl'}:2: field '{where}': ")


def test_a_context_that_is_neither_text_nor_chunks(run_cli, folder, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached: the row is refused first
    judge = {"type": "azure_ai_evaluator", "name": "groundedness", "evaluator_name": "builtin.groundedness",
             "initialization_parameters": {"deployment_name": "gpt-4o"}}  # fmt: skip
    _setup(folder, [GOOD_ROW, {**GOOD_ROW, "id": "q2", "context": {"text": "not a list"}}], [judge])
    _rejected(run_cli, folder, f"{folder / 'rows.jsonl'}:2: field 'context': a context must be a string or a list")
