"""Rows of recorded data: any object per line, ids optional, named by line when absent."""

from __future__ import annotations

import json

import pytest

from oloproof._exceptions import DatasetError
from oloproof.dataset import load_cases


def _file(tmp_path, *lines: str):
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_rows_are_whole_inputs_and_unnamed_ones_are_named_by_line(tmp_path):
    path = _file(tmp_path, json.dumps({"query": "a"}), "", json.dumps({"id": "7", "query": "b", "metadata": {"lang": "vi"}}),
                 json.dumps({"query": "c"}))  # fmt: skip
    dataset = load_cases(str(path), recorded=True)
    assert [case.id for case in dataset.cases] == ["line-1", "7", "line-4"]
    assert dataset.named_by_line == 2 and dataset.recorded
    assert dataset.cases[1].metadata == {"lang": "vi"}
    assert dataset.item(dataset.cases[1]) == {"id": "7", "query": "b", "metadata": {"lang": "vi"}}
    assert dataset.lines == {"line-1": 1, "7": 3, "line-4": 4}


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"id": true}', "id", "an id must be a non-empty JSON string"),
        ('{"id": ""}', "id", "an id must be a non-empty JSON string"),
        ('{"id": 7}', "id", "an id must be a non-empty JSON string"),  # given, an id is never a number read as text
        ('{"id": "%s"}' % ("x" * 257), "id", "at most 256 characters"),
        ('{"id": "a", "id": "b"}', "id", "duplicate key 'id'"),
        ('{"q": "\\udc00"}', "q", "lone surrogate"),
        ('{"metadata": [1]}', "metadata", "metadata must be a JSON object"),
        ("[1]", None, "expected a JSON object, got list"),
        ('{"query": ', None, "invalid JSON"),
    ],
)
def test_bad_rows_name_the_line_and_field(tmp_path, line, field, message):
    path = _file(tmp_path, '{"id": "ok"}', line)
    with pytest.raises(DatasetError, match=message) as raised:
        load_cases(str(path), recorded=True)
    assert raised.value.line == 2 and raised.value.field == field


def test_an_explicit_id_colliding_with_a_line_name_is_a_duplicate(tmp_path):
    path = _file(tmp_path, '{"q": 1}', '{"id": "line-1"}')
    with pytest.raises(DatasetError, match="duplicate id 'line-1' \\(first on line 1\\)"):
        load_cases(str(path), recorded=True)
