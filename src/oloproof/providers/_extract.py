"""Reading a reply object out of model text, and checking it against its schema.

The checker is deliberately small (no new dependency): ``type`` (one or a
list), ``enum``, ``const``, ``minimum`` / ``maximum`` and their exclusive forms,
string and array lengths, ``required``, and ``properties`` / ``items``
recursively. Other keywords, ``additionalProperties`` included, are not checked:
a judge's reply with an extra key is still a usable reply.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import JsonValue

__all__ = ["extract_object", "schema_problem"]

_DECODER = json.JSONDecoder()
_MAX_STARTS = 200  # a reply with more "{" than this that parse as nothing is not JSON


def _any(value: Any) -> bool:  # an unknown type name checks nothing
    return True


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: (
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    ),
}


def extract_object(text: str) -> dict[str, JsonValue] | None:
    """The first JSON object in ``text``, or ``None``.

    Prose around the object and Markdown code fences are skipped: the object is
    the first ``{`` at which a complete JSON object parses.
    """
    stripped = text.strip()
    try:
        whole = json.loads(stripped)
    except ValueError:
        pass
    else:
        return whole if isinstance(whole, dict) else None
    start = text.find("{")
    for _ in range(_MAX_STARTS):
        if start < 0:
            return None
        try:
            value, _end = _DECODER.raw_decode(text, start)
        except ValueError:
            pass
        else:
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    return None


# A JSON Schema document, walked as written: its keywords hold any JSON.
def schema_problem(value: Any, schema: dict[str, Any], path: str = "") -> str | None:
    """What is wrong with ``value`` under ``schema``, in a few words, or ``None``.

    ``path`` is where ``value`` sits in the reply (``detail.items[2]``); empty for
    the reply itself.
    """
    where = f"'{path}'" if path else "the reply"
    types = schema.get("type")
    if isinstance(types, str):
        types = [types]
    if isinstance(types, list) and types and not any(_TYPES.get(t, _any)(value) for t in types):
        return f"{where} is {_kind(value)}, expected {' or '.join(map(str, types))}"
    if "enum" in schema and not any(_same(value, choice) for choice in schema["enum"]):
        return f"{where} is {_show(value)}, expected one of {_show(schema['enum'])}"
    if "const" in schema and not _same(value, schema["const"]):
        return f"{where} is {_show(value)}, expected {_show(schema['const'])}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        problem = _bounds(value, schema, where)
        if problem:
            return problem
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{where} is shorter than {schema['minLength']} characters"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{where} is longer than {schema['maxLength']} characters"
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                return f"{where} lacks the required key {key!r}"
        for key, sub in (schema.get("properties") or {}).items():
            if key in value and isinstance(sub, dict):
                problem = schema_problem(value[key], sub, f"{path}.{key}" if path else str(key))
                if problem:
                    return problem
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return f"{where} has fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{where} has more than {schema['maxItems']} items"
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                problem = schema_problem(item, items, f"{path}[{index}]")
                if problem:
                    return problem
    return None


def _bounds(value: float, schema: dict[str, Any], where: str) -> str | None:  # a JSON Schema, as above
    if "minimum" in schema and value < schema["minimum"]:
        return f"{where} is {_show(value)}, below the minimum {_show(schema['minimum'])}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"{where} is {_show(value)}, above the maximum {_show(schema['maximum'])}"
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        return f"{where} is {_show(value)}, not above {_show(schema['exclusiveMinimum'])}"
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        return f"{where} is {_show(value)}, not below {_show(schema['exclusiveMaximum'])}"
    return None


def _same(value: Any, expected: Any) -> bool:
    # In Python True == 1; in JSON a boolean is never a number.
    return value == expected and isinstance(value, bool) == isinstance(expected, bool)


def _kind(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return (
                "an integer" if name == "integer" else f"{'an' if name[0] in 'ao' else 'a'} {name}"
            )
    return type(value).__name__


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"
