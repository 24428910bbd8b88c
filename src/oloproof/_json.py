"""Canonical JSON: one text for one value; and JSON read within the loaders' limits.

Content hashes (stage identities, diagnosis and comparison ids) and the JSON
documents of the results store are both written through :func:`canonical_json`,
so a value always hashes and stores the same way. Every JSON or JSONL file a user
gives is read through :func:`load_json`, which refuses what could not be stored
or would exhaust the stack (see `oloproof._limits`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from oloproof._exceptions import OloproofError, StoreError
from oloproof._limits import MAX_DEPTH, Location, bad_text, dotted, shown, texts

__all__ = ["canonical_json", "content_hash", "json_copy", "json_kind", "load_json"]


def json_kind(value: object) -> str:
    """The JSON name of a value's type, for messages: ``a string``, ``null``, ``an object`` ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def json_copy(value: Any) -> Any:
    """A copy of a value a user's code returned, as plain JSON values that can be stored.

    Raises:
        ValueError: The value is not JSON (a set, an object, NaN, nested too deep), has
            a key that is not text (``{1: ...}`` would silently become ``"1"``), or holds
            text that is not valid Unicode (a lone surrogate); the message says which.
    """
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError("; ".join(str(error).splitlines()) or type(value).__name__) from None
    problem = bad_text(text)
    if problem is not None:
        raise ValueError(problem)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            key = next((key for key in item if not isinstance(key, str)), None)
            if key is not None:
                raise ValueError(f"a key that is not text: {key!r} ({type(key).__name__})")
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return json.loads(text)


def content_hash(value: Any) -> str:
    """Return the sha256 hex digest of ``value``'s canonical JSON.

    Raises:
        StoreError: The value has no JSON form, or holds text that is not valid
            Unicode (a lone surrogate), so it can be neither stored nor hashed.
    """
    text = canonical_json(value)
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:
        raise StoreError(f"value can be neither stored nor hashed: {bad_text(text)}") from None
    return hashlib.sha256(encoded).hexdigest()


def canonical_json(value: Any) -> str:
    """Serialise a value as canonical JSON text.

    Keys are sorted, non-ASCII characters are kept as they are and no
    insignificant whitespace is emitted, so equal values give equal text.
    The text of a JSON-native value never changes: existing cache keys stay valid.

    Args:
        value: Any JSON-serialisable value; NumPy scalars and arrays are accepted
            and written as the Python values they hold.

    Returns:
        The JSON text.

    Raises:
        StoreError: The value cannot be represented as JSON, so it can be
            neither stored nor hashed.
    """
    try:
        fast = orjson.dumps(value, default=_to_python, option=_ORJSON)
    except (TypeError, ValueError, RecursionError):
        pass  # a value orjson refuses (a key that is not text, a huge int, a lone surrogate): json's own text
    else:
        if not _float_text(fast) and (b"null" not in fast or _holds_no_nan(value, fast)):
            return fast.decode("utf-8")
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_to_python)
    except (TypeError, ValueError) as error:
        raise StoreError(f"value is not JSON-serialisable: {error}") from error


# orjson's text is json.dumps's (sorted keys, compact, UTF-8 as it is) but for a float of
# magnitude below 1e-4, which orjson writes as 0.0000… or 1e-7 where json writes 1e-05 or
# 1e-07, and NaN and infinities, which orjson writes as null where json writes NaN and
# Infinity. Text holding such a float (or text that looks like one) is written by json.
_FLOAT_TEXT = re.compile(rb"0\.0000[0-9]|[0-9]e-[0-9](?![0-9])")


def _float_text(fast: bytes) -> bool:
    # Two substring searches first: the expression alone costs more than orjson's encoding.
    return (b"0.0000" in fast or b"e-" in fast) and _FLOAT_TEXT.search(fast) is not None


def _holds_no_nan(value: Any, fast: bytes) -> bool:
    # A null in orjson's text is None, or NaN or an infinity: read back, only None
    # equals the value it came from (NaN equals nothing, inf is no None). A value that
    # compares otherwise (a tuple, an array) is written by json.
    try:
        return bool(orjson.loads(fast) == value)
    except (TypeError, ValueError):
        return False


_ORJSON = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""Sorted keys; dataclasses and dates go to ``default`` (which refuses them), as with json."""


def _to_python(value: Any) -> Any:
    # NumPy scalars and arrays both have tolist(); item() covers other array-likes
    # that hold a single value. Anything else has no JSON form.
    for name in ("tolist", "item"):
        method = getattr(value, name, None)
        if callable(method):
            return method()
    raise TypeError(f"object of type {type(value).__name__} is not JSON serialisable")


# A JSON string (possibly unterminated: the parser stops there anyway) or one bracket.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
# Text decoded from UTF-8 holds no surrogate: only a \uD800-\uDFFF escape makes one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def load_json(
    text: str,
    *,
    error: type[OloproofError],
    path: str,
    line: int | None = None,
    locate: Callable[[Location], int | None] | None = None,
) -> Any:
    """Parse JSON text that came from a user's file, within the loaders' limits.

    Refused, each with one ``error``: invalid JSON, nesting deeper than `MAX_DEPTH`
    (found by scanning the brackets before the parser recurses), a key repeated in
    one object, and a string that is not valid Unicode (a lone surrogate escape).

    Args:
        text: The JSON text, decoded from UTF-8.
        error: The error class to raise (the loader's own).
        path: The file, for the error.
        line: The line ``text`` is (a JSONL line); None for a whole document, whose
            errors name the line within ``text`` where it is known.
        locate: For a whole document, the line of a key path (e.g. from its YAML
            reading), for the errors the parser cannot place.

    Returns:
        The parsed value.

    Raises:
        OloproofError: Of class ``error``, naming the path, the line and the field.
    """

    def fail(message: str, *, offset: int | None = None, at: Location = ()) -> OloproofError:
        where = line
        if where is None and offset is not None:
            where = text.count("\n", 0, offset) + 1
        if where is None and at and locate is not None:
            where = locate(at)
        return error(message, path=path, line=where, field=dotted(at))

    deep = _too_deep(text)
    if deep is not None:
        column = deep - text.rfind("\n", 0, deep)
        raise fail(f"nested more than {MAX_DEPTH} levels deep (column {column}): refused", offset=deep)
    repeated: list[tuple[dict[str, Any], str]] = []
    try:
        value = json.loads(text, object_pairs_hook=_pairs(repeated))
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise error(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=where) from None
    except ValueError as exc:  # a number too long to convert
        raise fail(f"invalid JSON: {str(exc).split(';')[0]}") from None
    if repeated:
        at, key = _repeated(value, repeated)
        raise fail(f"duplicate key {shown(key)}: a key may appear once in an object", at=(*at, key))
    if _SURROGATE_ESCAPE.search(text):
        for at, string in texts(value):
            problem = bad_text(string)
            if problem is not None:
                raise fail(problem, at=at)
    return value


def _too_deep(text: str) -> int | None:
    """The offset of the first bracket nested past `MAX_DEPTH`, or None."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None  # the common case: too few brackets to nest that deep
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif token in "]}":
            depth -= 1
    return None


def _pairs(repeated: list[tuple[dict[str, Any], str]]) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """An ``object_pairs_hook`` that notes each object repeating a key, and the key."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    repeated.append((result, key))
                    break
                seen.add(key)
        return result

    return hook


def _repeated(value: Any, repeated: list[tuple[dict[str, Any], str]]) -> tuple[Location, str]:
    """The key path and key of the first object within ``value`` that repeated a key.

    Such an object may be gone from ``value`` (the value of a key its parent repeats);
    ``repeated`` holds each one, so no other object can have taken its id.
    """
    wanted = {id(item): key for item, key in repeated}
    stack: list[tuple[Location, Any]] = [((), value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            if id(item) in wanted:
                return where, wanted[id(item)]
            stack.extend(reversed([((*where, key), child) for key, child in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([((*where, index), child) for index, child in enumerate(item)]))
    return (), repeated[-1][1]
