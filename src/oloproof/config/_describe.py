"""One pydantic error as the one line a user reads."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from oloproof._limits import shown

__all__ = ["describe"]

_NUMBER_TYPES = ("int_type", "float_type", "int_parsing", "float_parsing")
_EXPONENT = re.compile(r"^[-+]?[0-9][0-9_]*(\.[0-9_]*)?[eE][-+]?[0-9]+$")


def describe(error: Mapping[str, Any], *, echo: bool = True) -> str:
    """What is wrong with one field, the value cut short where it is echoed.

    Args:
        error: One entry of ``ValidationError.errors()``.
        echo: Whether the value given may be repeated (never for a provider entry,
            where a key may have been pasted).
    """
    kind = error.get("type", "")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    value = error.get("input")
    message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    if echo and "input" in error and kind != "value_error":
        message = f"{message} (got {shown(value)})"
    if kind in _NUMBER_TYPES and isinstance(value, str) and _numeric(value):
        # Numbers are strict: text is never read as one, so say how to write it.
        if _EXPONENT.match(value.strip()):
            return f"{message}: YAML reads an exponent as a number only with a '.' and a sign, e.g. 1.0e+3"
        return f"{message}: write the number unquoted"
    return message


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
