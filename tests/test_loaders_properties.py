"""Every loader, fed arbitrary input: it loads, or it raises the project's own error in
one line naming the file (and, where the input has lines, the line). Never a raw
traceback, never a half-read result, never a value silently turned into another type.

Inputs are drawn by hypothesis from the shapes users actually get wrong: random bytes,
random JSON values, and valid documents with one field replaced by a random value or
one key repeated. The values include nesting past the limit (100,000 levels among
them), lone surrogate escapes, repeated keys and names past 256 characters; each must
be refused, and numbers given as text must never load as numbers.

``HYPOTHESIS_PROFILE=thorough`` draws 10,000 examples per loader instead of the
suite's few hundred, e.g.::

    HYPOTHESIS_PROFILE=thorough python -m pytest -n 0 -p no:cacheprovider \\
        tests/test_loaders_properties.py --hypothesis-seed=20260916 --hypothesis-show-statistics
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from judged_runs import judged_run

from oloproof._exceptions import OloproofError
from oloproof._limits import MAX_DEPTH, MAX_NAME
from oloproof.comparison import load_policy
from oloproof.config import load_project, parse_overrides
from oloproof.config._criteria import load_criteria
from oloproof.dataset import load_cases
from oloproof.judging import case_texts, load_labels

_EXAMPLES = {"default": 200, "thorough": 10_000}
PROPERTY = settings(
    max_examples=_EXAMPLES.get(os.environ.get("HYPOTHESIS_PROFILE", "default"), _EXAMPLES["default"]),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- Values as a file writes them -------------------------------------------------------


@dataclass(frozen=True)
class Obj:
    """A JSON object as written: its pairs in order, a key possibly repeated."""

    pairs: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Deep:
    """Lists (``[``) or objects (``{``) nested ``levels`` deep, written as text: no
    Python value that deep could be built or serialised without recursion."""

    levels: int
    bracket: str


def render(value: Any) -> str:
    """JSON text, every non-ASCII character escaped: lone surrogates become ``\\udXXX``
    escapes, as a file holds them. JSON is YAML: the same text serves both."""
    if isinstance(value, Deep):
        if value.bracket == "[":
            return "[" * value.levels + "]" * value.levels
        return '{"a": ' * value.levels + "1" + "}" * value.levels
    if isinstance(value, Obj):
        return "{" + ", ".join(f"{json.dumps(key)}: {render(item)}" for key, item in value.pairs) + "}"
    if isinstance(value, dict):
        return render(Obj(tuple(value.items())))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render(item) for item in value) + "]"
    return json.dumps(value)


def python(value: Any) -> Any:
    """What a lenient reader would make of a written value (a repeated key: the last)."""
    if isinstance(value, Obj):
        return {key: python(item) for key, item in value.pairs}
    if isinstance(value, dict):
        return {key: python(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [python(item) for item in value]
    return value


def yaml_reads(value: Any) -> Any:
    """What YAML makes of a written value: it reads ``1e-05``, ``NaN`` and ``Infinity``
    (JSON's spellings) as text, so a YAML file holds text where JSON holds a number."""
    if isinstance(value, float):
        return yaml.safe_load(json.dumps(value))
    return python(value)


def must_refuse(value: Any) -> bool:
    """Whether ``value`` holds something every loader refuses wherever it stands: nesting
    past the limit, a repeated key, or text that is not valid Unicode."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Deep) and item.levels > MAX_DEPTH:
            return True
        if isinstance(item, str) and _lone_surrogate(item):
            return True
        if isinstance(item, Obj):
            keys = [key for key, _ in item.pairs]
            if len(set(keys)) != len(keys) or any(_lone_surrogate(key) for key in keys):
                return True
            stack.extend(child for _, child in item.pairs)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    if value is None:
        return "null"
    return "compound"


surrogates = st.characters(categories=["Cs"])
strings = (
    st.text(max_size=12)
    | st.tuples(st.text(max_size=3), surrogates, st.text(max_size=3)).map("".join)
    | st.sampled_from([MAX_NAME - 1, MAX_NAME, MAX_NAME + 1, 5_000]).map("n".__mul__)
    | st.integers(-3, 100).map(str)  # numbers as text: never read as numbers
    | st.floats(0, 1).map(str)
)
keys = st.sampled_from(["a", "id", "x"]) | st.text(max_size=6) | surrogates
deep = st.builds(
    Deep,
    st.sampled_from([MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 1_000, 100_000]) | st.integers(1, 80),
    st.sampled_from("[{"),
)
scalars = (
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True, allow_infinity=True) | strings
)
values = st.recursive(
    scalars | deep,
    lambda inner: st.lists(inner, max_size=4) | st.lists(st.tuples(keys, inner), max_size=4).map(
        lambda pairs: Obj(tuple(pairs))),
    max_leaves=12,
)  # fmt: skip


# What a replaced field is given: any value, or one close to what the field takes, so
# that edited documents load often enough for the checks on what loaded to bite.
replacements = (
    values
    | st.integers(-2, 100)
    | st.floats(-1, 200)
    | st.sampled_from(["pass", "fail", "c0000", "relevance", "superiority", "equivalence", "s", "hit_rate"])
    | st.sampled_from([MAX_NAME, MAX_NAME + 1]).map("n".__mul__)
)


def _leaves(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a leaf (a scalar or an empty container) of ``document``."""
    if isinstance(document, dict) and document:
        return [path for key, item in document.items() for path in _leaves(item, (*prefix, key))]
    if isinstance(document, list) and document:
        return [path for index, item in enumerate(document) for path in _leaves(item, (*prefix, index))]
    return [prefix]


def _branches(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a non-empty mapping of ``document``."""
    found = [prefix] if isinstance(document, dict) and document else []
    items = document.items() if isinstance(document, dict) else enumerate(document) if isinstance(document, list) else ()
    return found + [path for key, item in items for path in _branches(item, (*prefix, key))]


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``document`` with the value at ``path`` replaced."""
    if not path:
        return value
    head, *rest = path
    if isinstance(document, list):
        return [replaced(item, tuple(rest), value) if index == head else item for index, item in enumerate(document)]
    return {**document, head: replaced(document[head], tuple(rest), value)}


def repeated(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``document`` with the mapping at ``path`` repeating its first key, given ``value`` again."""
    if not path:
        first = next(iter(document))
        return Obj((*document.items(), (first, value)))
    head, *rest = path
    if isinstance(document, list):
        return [repeated(item, tuple(rest), value) if index == head else item for index, item in enumerate(document)]
    return {**document, head: repeated(document[head], tuple(rest), value)}


def edited(document: Any):
    """A strategy: ``(written document, path replaced or None, value written)``, a leaf
    replaced by a random value, or a mapping repeating a key."""
    leaves, branches = _leaves(document), _branches(document)

    @st.composite
    def draw(data):
        value = data(replacements)
        if data(st.integers(0, 4)) == 0:
            return repeated(document, data(st.sampled_from(branches)), value), None, value
        path = data(st.sampled_from(leaves))
        return replaced(document, path, value), path, value

    return draw()


def at(loaded: Any, path: tuple[Any, ...]) -> tuple[bool, Any]:
    """``(found, value)`` at ``path`` of a loaded value (a model's dump)."""
    for part in path:
        try:
            loaded = loaded[part]
        except (KeyError, IndexError, TypeError):
            return False, None
    return True, loaded


def assert_not_coerced(given: Any, loaded: Any, path: tuple[Any, ...], *, text_from_numbers: set[str]) -> None:
    """A loaded value is of the kind it was written as (``given``, as its parser read it):
    text is not read as a number, a boolean not as 1, a list not as text. Only the
    settings in ``text_from_numbers`` read a written number as text (``version: 3``)."""
    found, value = at(loaded, path)
    if not found:
        return
    dotted = ".".join(map(str, path))
    kinds = (_kind(given), _kind(value))
    allowed = kinds[0] == kinds[1] or (kinds == ("number", "text") and dotted in text_from_numbers)
    assert allowed, f"{dotted}: written as {given!r}, loaded as {value!r}"


def assert_one_line(error: OloproofError, path: Path | str, lined: bool = True) -> None:
    event("refused")
    assert error.path == str(path), str(error)
    assert "\n" not in str(error) and "\r" not in str(error), repr(str(error))
    str(error).encode("utf-8")  # printable and storable
    if lined and error.line is not None:
        assert error.line >= 1


def assert_names_bounded(given: Any, path: tuple[Any, ...] | None, names: set[str]) -> None:
    """Reached only for a document that loaded: a name past the limit would not have."""
    given = python(given)
    if path is not None and ".".join(map(str, path)) in names and isinstance(given, str):
        assert len(given) <= MAX_NAME, f"{'.'.join(map(str, path))}: {len(given)} characters loaded"


# --- Cases and recorded rows ------------------------------------------------------------

CASE = {"id": "a", "input": {"question": "q?"},
        "expected": {"answer": "x", "relevant": [{"doc_id": "d1", "chunk_id": "k", "grade": 1}],
                     "gold_context": [{"doc_id": "d1", "text": "t"}]}, "metadata": {"topic": "t"}}  # fmt: skip
ROW = {"id": "r1", "query": "q", "context": "c", "response": "a", "metadata": {"lang": "vi"}}
# Document ids are read as text from integers, as a system's passages are.
CASE_TEXT_FROM_NUMBERS = {"expected.relevant.0.doc_id", "expected.relevant.0.chunk_id",
                          "expected.gold_context.0.doc_id"}  # fmt: skip


@pytest.mark.slow
@PROPERTY
@given(st.lists(st.binary(max_size=40) | values.map(lambda v: render(v).encode()), min_size=1, max_size=4))
def test_cases_files(tmp_path, lines):
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"\n".join([json.dumps(CASE).encode(), *lines]))
    for recorded in (False, True):
        try:
            dataset = load_cases(str(path), recorded=recorded)
        except OloproofError as error:
            assert_one_line(error, path)
        else:
            event("loaded")
            assert len(dataset) >= 1


@PROPERTY
@given(edited(CASE))
def test_a_case_with_one_field_replaced_or_a_key_repeated(tmp_path, edit):
    document, where, value = edit
    path = tmp_path / "cases.jsonl"
    path.write_text(render(document) + "\n", encoding="utf-8")
    try:
        (case,) = load_cases(str(path)).cases
    except OloproofError as error:
        assert_one_line(error, path)
        assert error.line == 1
    else:
        event("loaded")
        assert where is not None and not must_refuse(value), "loaded what must be refused"
        assert_names_bounded(value, where, {"id"})
        assert_not_coerced(python(value), case.model_dump(), where, text_from_numbers=CASE_TEXT_FROM_NUMBERS)


@PROPERTY
@given(edited(ROW))
def test_a_recorded_row_with_one_field_replaced_or_a_key_repeated(tmp_path, edit):
    document, where, value = edit
    path = tmp_path / "rows.jsonl"
    path.write_text(render(document) + "\n", encoding="utf-8")
    try:
        (case,) = load_cases(str(path), recorded=True).cases
    except OloproofError as error:
        assert_one_line(error, path)
        assert error.line == 1
    else:
        event("loaded")
        assert where is not None and not must_refuse(value), "loaded what must be refused"
        assert_names_bounded(value, where, {"id"})
        if where == ("id",):
            assert case.id == value  # a given id is text, never a number read as text


# --- oloproof.yaml and --set ------------------------------------------------------------

PROJECT = {
    "system": {"name": "s", "version": "v",
               "rag": {"object": "app:Rag", "depth": 4, "top_k": 2, "token_budget": 100,
                       "index_version": "i", "retriever_version": "r"}},
    "dataset": "cases.jsonl", "results": ".oloproof/results", "storage_options": {"anon": True},
    "evaluators": [{"type": "hit_rate", "k": 2}], "slices": ["metadata.topic"], "min_slice_support": 4,
    "max_concurrency": 4, "timeouts": {"retrieve": 30, "assemble": 30.5, "generate": 120, "judge": None},
    "confidence": 0.9, "batch_size": 10, "task_runner": {"type": "dask", "address": "tcp://h:1", "n_workers": 2},
    "providers": {"p": {"type": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "K",
                        "max_concurrency": 2, "rpm": 60, "tpm": 1000, "timeout_s": 30.0, "max_retries": 2,
                        "rate_window_s": 60.0, "prices": {"input_per_mtok": 1.0, "output_per_mtok": 2},
                        "deployments": ["gpt"]}},
}  # fmt: skip
PROJECT_NAMES = {"system.name", "system.version", "system.rag.index_version", "system.rag.retriever_version"}
# Versions and paths: YAML reads `version: 3` as a number, and it names a version.
PROJECT_TEXT_FROM_NUMBERS = PROJECT_NAMES | {"dataset", "results"}


def test_the_base_project_loads(tmp_path):
    (tmp_path / "oloproof.yaml").write_text(render(PROJECT), encoding="utf-8")
    assert load_project(tmp_path).config.model_dump(exclude_unset=True)["max_concurrency"] == 4


@PROPERTY
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode) | values.map(lambda v: render(v).encode()))
def test_project_files(tmp_path, raw):
    (tmp_path / "oloproof.yaml").write_bytes(raw)
    try:
        load_project(tmp_path)
    except OloproofError as error:
        assert_one_line(error, tmp_path / "oloproof.yaml")
    else:
        event("loaded")


@PROPERTY
@given(edited(PROJECT))
def test_a_project_with_one_field_replaced_or_a_key_repeated(tmp_path, edit):
    document, where, value = edit
    path = tmp_path / "oloproof.yaml"
    path.write_text(render(document), encoding="utf-8")
    try:
        config = load_project(tmp_path).config
    except OloproofError as error:
        assert_one_line(error, path)
    else:
        event("loaded")
        assert where is not None and not must_refuse(value), "loaded what must be refused"
        assert_names_bounded(value, where, PROJECT_NAMES)
        assert_not_coerced(yaml_reads(value), config.model_dump(), where, text_from_numbers=PROJECT_TEXT_FROM_NUMBERS)


SET_KEYS = sorted(".".join(map(str, leaf)) for leaf in _leaves(PROJECT) if all(isinstance(p, str) for p in leaf))
set_values = (  # the text given, and the value it was written from
    replacements.map(lambda value: (render(value), value))
    | st.text(max_size=20).map(lambda text: (text, None))
    | st.tuples(st.text(max_size=3), surrogates, st.text(max_size=3)).map(
        lambda parts: ("".join(parts), None))  # argv's undecodable bytes
    | st.integers(-3, 100).map(lambda n: (f"'{n}'", None))
    | st.floats(0, 1).map(lambda x: (f'"{x}"', None))
)  # fmt: skip


@pytest.mark.slow
@PROPERTY
@given(st.sampled_from(SET_KEYS) | st.text(max_size=12), set_values)
def test_set_overrides(tmp_path, key, written):
    text, value = written
    (tmp_path / "oloproof.yaml").write_text(render(PROJECT), encoding="utf-8")
    try:
        config = load_project(tmp_path, parse_overrides([f"{key}={text}"])).config
    except OloproofError as error:
        assert_one_line(error, error.path or "", lined=False)
        assert error.path in ("--set", str(tmp_path / "oloproof.yaml")), str(error)
    else:
        event("loaded")
        assert not _lone_surrogate(key + text) and not must_refuse(value), "loaded what must be refused"
        if key in SET_KEYS and "=" not in key and text.strip():
            try:
                given = yaml.safe_load(text)
            except (yaml.YAMLError, ValueError, RecursionError):
                given = text  # not YAML: taken as the text it is
            where = tuple(key.split("."))
            assert_names_bounded(given, where, PROJECT_NAMES)
            if not isinstance(given, dict | list):
                assert_not_coerced(given, config.model_dump(), where, text_from_numbers=PROJECT_TEXT_FROM_NUMBERS)


# --- compare.yaml ---------------------------------------------------------------------

POLICY = {"confidence": 0.95,
          "rules": [{"name": "r", "metric": "m", "kind": "non-inferiority", "margin": 5, "min_pairs": 10,
                     "plan_difference": 1.5}],
          "judges": {"min_labels": 50, "min_kappa_low": 0.6, "confidence": 0.9}}  # fmt: skip


@pytest.mark.slow
@PROPERTY
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode) | values.map(lambda v: render(v).encode()))
def test_policy_files(tmp_path, raw):
    path = tmp_path / "compare.yaml"
    path.write_bytes(raw)
    try:
        load_policy(path)
    except OloproofError as error:
        assert_one_line(error, path)
    else:
        event("loaded")


@PROPERTY
@given(edited(POLICY))
def test_a_policy_with_one_field_replaced_or_a_key_repeated(tmp_path, edit):
    document, where, value = edit
    path = tmp_path / "compare.yaml"
    path.write_text(render(document), encoding="utf-8")
    try:
        policy = load_policy(path)
    except OloproofError as error:
        assert_one_line(error, path)
    else:
        event("loaded")
        assert where is not None and not must_refuse(value), "loaded what must be refused"
        assert_names_bounded(value, where, {"rules.0.name", "rules.0.metric"})
        assert_not_coerced(yaml_reads(value), policy.model_dump(), where, text_from_numbers=set())


# --- testing_criteria -----------------------------------------------------------------

CRITERIA = [{"type": "azure_ai_evaluator", "name": "groundedness", "evaluator_name": "builtin.groundedness",
             "initialization_parameters": {"deployment_name": "gpt-4o", "temperature": 0.0}, "threshold": 3,
             "data_mapping": {"context": "{{item.context}}", "response": "{{item.response}}"}}]  # fmt: skip


@PROPERTY
@given(edited(CRITERIA), st.sampled_from(["criteria.json", "criteria.yaml"]))
def test_criteria_with_one_field_replaced_or_a_key_repeated(tmp_path, edit, name):
    from oloproof.providers import ProviderConfig

    document, where, value = edit
    path = tmp_path / name
    path.write_text(render(document), encoding="utf-8")
    try:
        criteria = load_criteria(name, directory=tmp_path, config_path=str(tmp_path / "oloproof.yaml"),
                                 config_lines={}, providers={"p": ProviderConfig(type="openai", base_url="http://h/v1")})  # fmt: skip
    except OloproofError as error:
        assert_one_line(error, path)
    else:
        event("loaded")
        assert where is not None and not must_refuse(value), "loaded what must be refused"
        assert_names_bounded(value, where, {"0.name"})
        entry = criteria.entries[0]
        if name.endswith(".json"):  # carried as written, for the evaluator to check
            for key in ("threshold", "data_mapping"):
                if key in entry:
                    assert render(entry[key]) == render(document[0][key])


# --- Human labels ---------------------------------------------------------------------

RUN = judged_run("run_P", [5, 1, 4, 2])
LABELS = [{"case_id": "c0000", "criterion": "relevance", "label": "pass", "annotator": "ana", "note": "n"},
          {"case_id": "c0001", "criterion": "relevance", "label": 4}]  # fmt: skip


def _load_labels(path: Path):
    return load_labels(str(path), run=RUN, criterion="relevance", texts=case_texts(RUN, "relevance", {}),
                       find_sample=lambda _: None)  # fmt: skip


@PROPERTY
@given(st.lists(st.binary(max_size=40) | values.map(lambda v: render(v).encode())
                | st.fixed_dictionaries({"case_id": st.sampled_from(["c0000", "c0001", "x"]),
                                         "criterion": st.sampled_from(["relevance", "nope"]),
                                         "label": values, "annotator": values}).map(
                    lambda v: render(v).encode()),
                min_size=1, max_size=5))  # fmt: skip
def test_label_files(tmp_path, lines):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b"\n".join(lines))
    try:
        labels = _load_labels(path)
    except OloproofError as error:
        assert_one_line(error, path)
    else:
        event("loaded")
        assert labels.labels and all(label.case_id in {"c0000", "c0001"} for label in labels.labels)


@PROPERTY
@given(edited(LABELS))
def test_labels_with_one_field_replaced_or_a_key_repeated(tmp_path, edit):
    document, where, value = edit
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(render(row) + "\n" for row in document))
    try:
        labels = _load_labels(path)
    except OloproofError as error:
        assert_one_line(error, path)
    else:
        event("loaded")
        assert where is not None and not must_refuse(value), "loaded what must be refused"
        assert_names_bounded(value, where, {f"{line}.{name}" for line in (0, 1)
                                            for name in ("case_id", "criterion", "annotator")})  # fmt: skip
        written = python(document)
        for label in labels.labels:
            row = written[label.line - 1]
            assert (_kind(label.label), label.label) == (_kind(row["label"]), row["label"])
            assert label.annotator == row.get("annotator") and label.case_id == row["case_id"]


# --- The properties can fail ----------------------------------------------------------


@pytest.mark.parametrize("loader", ["cases", "project", "policy"])
def test_the_property_tests_see_errors_at_all(tmp_path, loader):
    # Guard against a vacuous property: a plainly bad input does raise the project's error.
    path = tmp_path / {"cases": "cases.jsonl", "project": "oloproof.yaml", "policy": "compare.yaml"}[loader]
    path.write_bytes(b"\xff\n")
    call = {"cases": lambda: load_cases(str(path)), "project": lambda: load_project(tmp_path),
            "policy": lambda: load_policy(path)}[loader]  # fmt: skip
    with pytest.raises(OloproofError):
        call()


def test_the_checks_see_what_must_be_refused():
    assert must_refuse(Obj((("a", 1), ("a", 2)))) and must_refuse(["\ud800"]) and must_refuse(Deep(MAX_DEPTH + 1, "["))
    assert not must_refuse(Obj((("a", 1), ("b", Deep(MAX_DEPTH, "{")))))
    with pytest.raises(AssertionError):
        assert_not_coerced("10", {"timeouts": {"generate": 10.0}}, ("timeouts", "generate"), text_from_numbers=set())
    with pytest.raises(AssertionError):
        assert_not_coerced(True, {"top_k": 1}, ("top_k",), text_from_numbers=set())
    assert_not_coerced(3, {"version": "3"}, ("version",), text_from_numbers={"version"})
