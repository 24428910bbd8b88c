"""Every loader, fed arbitrary input: it loads, or it raises the project's own error
naming the file (and, where the input has lines, the line). Never a raw traceback,
never a half-read result.

Inputs are drawn by hypothesis from the shapes users actually get wrong: random bytes,
random JSON values, and valid documents with one field replaced by a random value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from judged_runs import judged_run

from oloproof._exceptions import OloproofError
from oloproof.comparison import load_policy
from oloproof.config import load_project, parse_overrides
from oloproof.dataset import load_cases
from oloproof.judging import case_texts, load_labels

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip

CASE = {"id": "a", "input": {"question": "q?"},
        "expected": {"answer": "x", "relevant": [{"doc_id": "d1", "grade": 1}]}, "metadata": {"topic": "t"}}
YAML = ("system:\n  name: s\n  version: v\n  rag:\n    object: app:Rag\n    depth: 4\n    top_k: 2\n"
        "dataset: cases.jsonl\nevaluators:\n  - {type: hit_rate, k: 2}\nmax_concurrency: 4\n")
POLICY = "confidence: 0.95\nrules:\n  - {name: r, metric: m, kind: non-inferiority, margin: 5}\n"


def _holds(error: OloproofError, path: Path, lined: bool = True) -> None:
    assert error.path == str(path), str(error)
    assert "\n" not in str(error)
    if lined and error.line is not None:
        assert error.line >= 1


def _replace(document, value, draw_path):
    """``document`` with the value at one path replaced."""
    if isinstance(document, dict) and document:
        key = draw_path(sorted(document, key=str))
        return {**document, key: value if not isinstance(document[key], dict | list) else
                _replace(document[key], value, draw_path)}  # fmt: skip
    if isinstance(document, list) and document:
        return [_replace(document[0], value, draw_path), *document[1:]]
    return value


@PROPERTY
@given(st.lists(st.binary(max_size=40) | json_values.map(lambda v: json.dumps(v).encode()), min_size=1, max_size=4))
def test_cases_files(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("cases") / "cases.jsonl"
    path.write_bytes(b"\n".join([json.dumps(CASE).encode(), *lines]))
    for recorded in (False, True):
        try:
            dataset = load_cases(str(path), recorded=recorded)
        except OloproofError as error:
            _holds(error, path)
        else:
            assert len(dataset) >= 1


@PROPERTY
@given(json_values, st.data())
def test_a_case_with_one_field_replaced(tmp_path_factory, value, data):
    path = tmp_path_factory.mktemp("cases") / "cases.jsonl"
    case = _replace(CASE, value, lambda keys: data.draw(st.sampled_from(keys)))
    path.write_text(json.dumps(case) + "\n", encoding="utf-8")
    try:
        load_cases(str(path))
    except OloproofError as error:
        _holds(error, path)
        assert error.line == 1 or error.line is None


@PROPERTY
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_project_files(tmp_path_factory, raw):
    folder = tmp_path_factory.mktemp("project")
    (folder / "oloproof.yaml").write_bytes(raw)
    try:
        load_project(folder)
    except OloproofError as error:
        _holds(error, folder / "oloproof.yaml")


@PROPERTY
@given(st.sampled_from(["system.rag.top_k", "system.rag.depth", "max_concurrency", "evaluators.0.k", "results",
                        "slices", "confidence", "batch_size", "system.rag.token_budget"]),
       st.text(max_size=20))  # fmt: skip
def test_set_overrides(tmp_path_factory, key, text):
    folder = tmp_path_factory.mktemp("project")
    (folder / "oloproof.yaml").write_text(YAML, encoding="utf-8")
    try:
        load_project(folder, parse_overrides([f"{key}={text}"]))
    except OloproofError as error:
        assert "\n" not in str(error)
        assert error.path in ("--set", str(folder / "oloproof.yaml")), str(error)


@PROPERTY
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_policy_files(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("policy") / "compare.yaml"
    path.write_bytes(raw)
    try:
        load_policy(path)
    except OloproofError as error:
        _holds(error, path)


@PROPERTY
@given(json_values, st.data())
def test_a_policy_with_one_field_replaced(tmp_path_factory, value, data):
    import yaml

    path = tmp_path_factory.mktemp("policy") / "compare.yaml"
    policy = _replace(yaml.safe_load(POLICY), value, lambda keys: data.draw(st.sampled_from(keys)))
    path.write_text(json.dumps(policy), encoding="utf-8")
    try:
        load_policy(path)
    except OloproofError as error:
        _holds(error, path)


RUN = judged_run("run_P", [5, 1, 4, 2])


@PROPERTY
@given(st.lists(st.binary(max_size=40) | json_values.map(lambda v: json.dumps(v).encode())
                | st.fixed_dictionaries({"case_id": st.sampled_from(["c0000", "c0001", "x"]),
                                         "criterion": st.sampled_from(["relevance", "nope"]),
                                         "label": json_values, "annotator": json_values}).map(
                    lambda v: json.dumps(v).encode()),
                min_size=1, max_size=5))  # fmt: skip
def test_label_files(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("labels") / "labels.jsonl"
    path.write_bytes(b"\n".join(lines))
    try:
        labels = load_labels(str(path), run=RUN, criterion="relevance", texts=case_texts(RUN, "relevance", {}),
                             find_sample=lambda _: None)
    except OloproofError as error:
        _holds(error, path)
    else:
        assert labels.labels and all(label.case_id in {"c0000", "c0001"} for label in labels.labels)


@pytest.mark.parametrize("loader", ["cases", "project", "policy"])
def test_the_property_tests_see_errors_at_all(tmp_path, loader):
    # Guard against a vacuous property: a plainly bad input does raise the project's error.
    path = tmp_path / {"cases": "cases.jsonl", "project": "oloproof.yaml", "policy": "compare.yaml"}[loader]
    path.write_bytes(b"\xff\n")
    call = {"cases": lambda: load_cases(str(path)), "project": lambda: load_project(tmp_path),
            "policy": lambda: load_policy(path)}[loader]  # fmt: skip
    with pytest.raises(OloproofError):
        call()
