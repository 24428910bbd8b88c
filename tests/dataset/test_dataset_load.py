"""JSONL cases: validation with file, line and field in every error."""

from __future__ import annotations

import hashlib
import json
from typing import Self

import pytest

from oloproof._exceptions import DatasetError, StoreError
from oloproof._json import content_hash
from oloproof._limits import MAX_DEPTH
from oloproof.dataset import Case, _load, load_cases


def write(tmp_path, lines: list[str]) -> str:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def line(**fields) -> str:
    return json.dumps(fields)


def test_load_validates_cases_and_skips_blank_lines(tmp_path):
    url = write(
        tmp_path,
        [
            line(id="a", input={"question": "q"}, expected={"answer": "x", "relevant": [{"doc_id": 7}]}),
            "",
            "   ",
            line(id="2", input="plain text", metadata={"topic": "billing"}),
        ],
    )
    dataset = load_cases(url)
    assert len(dataset) == 2
    first, second = dataset.cases
    assert isinstance(first, Case)
    assert first.id == "a" and first.expected.answer == "x"
    assert first.expected.relevant[0].doc_id == "7"  # integer ids read as strings
    assert first.expected.relevant[0].grade == 1.0
    assert second.id == "2" and second.input == "plain text" and second.metadata == {"topic": "billing"}
    assert second.expected.relevant is None
    raw = (tmp_path / "cases.jsonl").read_bytes()
    assert dataset.sha256 == hashlib.sha256(raw).hexdigest()
    assert dataset.url == url


def test_expected_keeps_unknown_keys_for_custom_evaluators(tmp_path):
    url = write(tmp_path, [line(id="a", input="q", expected={"answer": "x", "rubric": "be kind"})])
    (case,) = load_cases(url).cases
    assert case.expected.model_dump(exclude_none=True) == {"answer": "x", "rubric": "be kind"}


def _error(tmp_path, lines) -> DatasetError:
    return _error_of(tmp_path, lines, False)


def _error_of(tmp_path, lines, recorded: bool) -> DatasetError:
    url = write(tmp_path, lines)
    with pytest.raises(DatasetError) as raised:
        load_cases(url, recorded=recorded)
    return raised.value


def test_invalid_json_names_the_line(tmp_path):
    error = _error(tmp_path, [line(id="a", input="q"), '{"id": "b", "input": }'])
    assert (error.line, error.field) == (2, None)
    assert str(error) == f"{tmp_path / 'cases.jsonl'}:2: invalid JSON: Expecting value (column 22)"


def test_a_line_that_is_not_an_object(tmp_path):
    error = _error(tmp_path, ['["a"]'])
    assert str(error) == f"{tmp_path / 'cases.jsonl'}:1: expected a JSON object, got list"


def test_missing_id_and_unknown_field(tmp_path):
    error = _error(tmp_path, [line(id="a", input="q"), line(input="q")])
    assert str(error) == f"{tmp_path / 'cases.jsonl'}:2: field 'id': required field is missing"
    error = _error(tmp_path, [line(id="a", input="q", answer="x")])
    assert str(error) == (
        f"{tmp_path / 'cases.jsonl'}:1: field 'answer': unknown field (expected id, input, expected, metadata)"
    )


def test_empty_id_is_rejected(tmp_path):
    error = _error(tmp_path, [line(id="", input="q")])
    assert (error.line, error.field) == (1, "id")


def test_duplicate_ids_name_both_lines(tmp_path):
    error = _error(tmp_path, [line(id="a", input="q"), line(id="b", input="q"), "", line(id="a", input="r")])
    assert str(error) == f"{tmp_path / 'cases.jsonl'}:4: field 'id': duplicate id 'a' (first on line 1)"


def test_an_id_is_a_json_string_never_a_number_read_as_one(tmp_path):
    # Read as "5", `"id": 5` would pair with another file's case "5" without a word.
    error = _error(tmp_path, [line(id="a", input="q"), line(id=5, input="q")])
    assert (error.line, error.field, error.message) == (2, "id", "expected a JSON string, got 5")


def test_an_id_holds_at_most_256_characters(tmp_path):
    assert len(load_cases(write(tmp_path, [line(id="x" * 256, input="q")])).cases[0].id) == 256
    error = _error(tmp_path, [line(id="x" * 257, input="q")])
    assert (error.line, error.field) == (1, "id") and "at most 256 characters" in error.message
    assert len(error.message) < 120  # the value is echoed cut short


def test_a_grade_is_a_number_never_text(tmp_path):
    error = _error(tmp_path, [line(id="a", input="q", expected={"relevant": [{"doc_id": "d", "grade": "1"}]})])
    assert (error.line, error.field) == (1, "expected.relevant.0.grade")


def test_nesting_past_the_limit_is_one_line_not_a_recursion_error(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    for recorded in (False, True):
        error = _error_of(tmp_path, [line(id="a", input="q"), '{"id": "b", "input": ' + deep + "}"], recorded)
        assert error.line == 2 and f"nested more than {MAX_DEPTH} levels deep" in error.message
        assert "\n" not in str(error)
    at_the_limit = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)  # the case object is the first level
    assert load_cases(write(tmp_path, ['{"id": "a", "input": ' + at_the_limit + "}"])).cases[0].id == "a"


def test_brackets_inside_strings_are_not_nesting(tmp_path):
    text = "[" * 1000 + "\\\"{"
    (case,) = load_cases(write(tmp_path, [line(id="a", input=text)])).cases
    assert case.input == text


def test_a_lone_surrogate_is_refused_at_load_naming_the_field(tmp_path):
    # It could be neither hashed nor stored: the run would fail mid-way.
    error = _error(tmp_path, [line(id="a", input="q"), '{"id": "b", "input": {"question": "why\\ud800"}}'])
    assert (error.line, error.field) == (2, "input.question") and "lone surrogate \\ud800" in error.message
    error = _error(tmp_path, ['{"id": "a", "input": {"\\udfff": 1}}'])
    assert (error.line, error.field) == (1, "input.\\udfff")
    (case,) = load_cases(write(tmp_path, ['{"id": "a", "input": "\\ud83d\\ude00"}'])).cases  # a pair is one character
    assert case.input == "\U0001f600"


def test_were_a_lone_surrogate_to_reach_hashing_it_is_one_line():
    with pytest.raises(StoreError, match="lone surrogate"):
        content_hash({"question": "\ud800"})


def test_a_repeated_key_is_refused_never_the_last_one_kept(tmp_path):
    error = _error(tmp_path, [line(id="a", input="q"), '{"id": "b", "id": "c", "input": "q"}'])
    assert (error.line, error.field) == (2, "id") and "duplicate key 'id'" in error.message
    error = _error(tmp_path, ['{"id": "a", "input": {"q": [{"x": 1, "x": 2}]}}'])
    assert (error.line, error.field) == (1, "input.q.0.x")
    # An object repeating a key inside the value a repeated key replaced: the outer one is named.
    error = _error(tmp_path, ['{"id": "a", "input": {"x": {"y": 1, "y": 2}, "x": 3}}'])
    assert error.field == "input.x"


def test_wrong_types_name_the_nested_field(tmp_path):
    error = _error(tmp_path, [line(id="a", input="q", expected={"relevant": "kb-01"})])
    assert str(error) == (
        f"{tmp_path / 'cases.jsonl'}:1: field 'expected.relevant': Input should be a valid list (got \"kb-01\")"
    )
    error = _error(tmp_path, [line(id="a", input="q", expected={"relevant": [{"doc_id": "d", "grade": -1}]})])
    assert (error.line, error.field) == (1, "expected.relevant.0.grade")
    error = _error(tmp_path, [line(id="a", input="q", metadata=["billing"])])
    assert (error.line, error.field) == (1, "metadata")


def test_empty_dataset(tmp_path):
    error = _error(tmp_path, ["", "  "])
    assert str(error) == f"{tmp_path / 'cases.jsonl'}: the dataset holds no cases"


def test_missing_file(tmp_path):
    with pytest.raises(DatasetError) as raised:
        load_cases(str(tmp_path / "nope.jsonl"))
    assert str(raised.value) == f"{tmp_path / 'nope.jsonl'}: cases file not found"


def test_non_utf8_file(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "a", "input": "q"}\n\n{"id": "b", "input": "\xff"}\n')
    with pytest.raises(DatasetError) as raised:
        load_cases(str(path))
    assert str(raised.value) == f"{path}:3: not UTF-8 text (invalid start byte)"


@pytest.mark.parametrize("grade", ["Infinity", "-Infinity", "NaN"])
def test_a_grade_must_be_finite(tmp_path, grade):
    # json reads Infinity as a float: it would turn every retrieval metric of the case into an error.
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "input": "q", "expected": {"relevant": [{"doc_id": "d", "grade": ' + grade + "}]}}\n")
    with pytest.raises(DatasetError) as raised:
        load_cases(str(path))
    assert (raised.value.line, raised.value.field) == (1, "expected.relevant.0.grade")


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"], ids=["U+2028", "U+2029", "U+0085"])
def test_unicode_line_separators_inside_strings_are_text(tmp_path, separator):
    path = tmp_path / "cases.jsonl"
    rows = [{"id": "a", "input": f"first{separator}second"}, {"id": "b", "input": "x"}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    dataset = load_cases(str(path))
    assert [case.input for case in dataset.cases] == [f"first{separator}second", "x"]


def test_crlf_line_endings(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "a", "input": "x"}\r\n{"id": "b", "input": "y"}\r\n')
    assert [case.id for case in load_cases(str(path)).cases] == ["a", "b"]


def test_unterminated_string_message_reads_cleanly(tmp_path):
    error = _error(tmp_path, ['{"id": "a", "input": "open'])
    assert " at at " not in error.message


class _LinesOnly:
    """A file that can be iterated line by line but never read whole."""

    def __init__(self, raw: bytes) -> None:
        self.lines = raw.splitlines(keepends=True)
        self.served = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __iter__(self):
        for line in self.lines:
            self.served += 1
            yield line

    def read(self, *args: object) -> bytes:
        raise AssertionError("the loader read the whole file")


def test_the_file_is_read_line_by_line_and_hashed_as_it_goes(tmp_path, monkeypatch):
    raw = b'{"id": "a", "input": "x"}\r\n\n{"id": "b", "input": "y\xe2\x80\xa8z"}\n{"id": "c", "input": 1}'
    handle = _LinesOnly(raw)
    monkeypatch.setattr(_load.fsspec, "open", lambda *args, **kwargs: handle)
    dataset = load_cases(str(tmp_path / "cases.jsonl"))
    assert [case.id for case in dataset.cases] == ["a", "b", "c"]
    assert dataset.lines == {"a": 1, "b": 3, "c": 4}
    assert dataset.sha256 == hashlib.sha256(raw).hexdigest()


def test_a_bad_line_stops_the_read_there(tmp_path, monkeypatch):
    raw = b'{"id": "a", "input": "x"}\n{"id": \n' + b'{"id": "z", "input": 0}\n' * 1000
    handle = _LinesOnly(raw)
    monkeypatch.setattr(_load.fsspec, "open", lambda *args, **kwargs: handle)
    with pytest.raises(DatasetError) as raised:
        load_cases(str(tmp_path / "cases.jsonl"))
    assert raised.value.line == 2 and handle.served == 2
