"""Reading the reply object out of text, and the small schema check."""

from __future__ import annotations

from typing import Any

import pytest
from providers_wire import GOOD, SCHEMA

from oloproof.providers._extract import extract_object, schema_problem


@pytest.mark.parametrize(
    "text",
    [
        '{"score": 4, "reason": "grounded in the context"}',
        '  \n{"score": 4, "reason": "grounded in the context"}\n',
        'Here it is:\n```json\n{"score": 4, "reason": "grounded in the context"}\n```\nDone.',
        'Sure {not json} then {"score": 4, "reason": "grounded in the context"} and {"score": 1}',
    ],
)
def test_the_first_complete_object_is_found(text: str) -> None:
    assert extract_object(text) == GOOD


def test_braces_inside_strings_do_not_confuse_it() -> None:
    assert extract_object('x {"reason": "a } b {", "score": 2}') == {
        "reason": "a } b {",
        "score": 2,
    }


@pytest.mark.parametrize(
    "text", ["", "no json here", '{"score": 4, "rea', "[1, 2]", '"just a string"']
)
def test_no_object_is_none(text: str) -> None:
    assert extract_object(text) is None


def test_a_fitting_object_has_no_problem() -> None:
    assert schema_problem(GOOD, SCHEMA) is None
    assert (
        schema_problem({**GOOD, "extra": 1}, SCHEMA) is None
    )  # additionalProperties is not checked
    assert (
        schema_problem({"score": 4.0, "reason": "x"}, SCHEMA) is None
    )  # 4.0 is an integer in JSON


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"score": 4}, "the reply lacks the required key 'reason'"),
        ({"score": "4", "reason": "x"}, "'score' is a string, expected integer"),
        ({"score": True, "reason": "x"}, "'score' is a boolean, expected integer"),
        ({"score": 4.5, "reason": "x"}, "'score' is a number, expected integer"),
        ({"score": 0, "reason": "x"}, "'score' is 0, below the minimum 1"),
        ({"score": 6, "reason": "x"}, "'score' is 6, above the maximum 5"),
        ({"score": 3, "reason": None}, "'reason' is a null, expected string"),
        ([GOOD], "the reply is an array, expected object"),
    ],
)
def test_problems_are_named(value: Any, problem: str) -> None:
    assert schema_problem(value, SCHEMA) == problem


def test_enum_const_nested_and_arrays() -> None:
    schema = {
        "type": "object",
        "properties": {
            "label": {"enum": ["yes", "no"]},
            "flag": {"type": "boolean"},
            "version": {"const": 1},
            "cited": {
                "type": "array",
                "items": {"type": "integer", "exclusiveMinimum": 0},
                "maxItems": 2,
            },
            "detail": {
                "type": "object",
                "properties": {"n": {"type": ["number", "null"]}},
                "required": ["n"],
            },
        },
    }
    assert schema_problem({"label": "yes", "cited": [1, 2], "detail": {"n": None}}, schema) is None
    assert (
        schema_problem({"label": "maybe"}, schema)
        == '\'label\' is "maybe", expected one of ["yes", "no"]'
    )
    assert schema_problem({"flag": 1}, schema) == "'flag' is an integer, expected boolean"
    assert (
        schema_problem({"version": True}, schema) == "'version' is true, expected 1"
    )  # True is not 1
    assert schema_problem({"cited": [1, 0]}, schema) == "'cited[1]' is 0, not above 0"
    assert schema_problem({"cited": [1, 2, 3]}, schema) == "'cited' has more than 2 items"
    assert schema_problem({"detail": {}}, schema) == "'detail' lacks the required key 'n'"
    assert (
        schema_problem({"detail": {"n": "x"}}, schema)
        == "'detail.n' is a string, expected number or null"
    )
