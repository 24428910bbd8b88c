"""What every reader shares: paths inside a value, checks that name them, and the call ids seen."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import JsonValue

from oloproof._exceptions import TranscriptError
from oloproof._json import json_kind as kind
from oloproof.transcripts._model import Message, Role, ToolCall, ToolResult, Transcript

__all__ = [
    "Builder",
    "at",
    "expect_list",
    "expect_object",
    "expect_string",
    "fail",
    "field",
    "joined_text",
    "kind",
    "messages",
    "parse_arguments",
    "role",
]


def at(path: str, step: str | int) -> str:
    """The path one step below ``path``: ``[2]`` for an index, ``.name`` for a key."""
    if isinstance(step, int):
        return f"{path}[{step}]"
    return f"{path}.{step}" if path else step


def fail(path: str, message: str) -> TranscriptError:
    """The error for ``path``; the root of the value has no field."""
    return TranscriptError(message, field=path or None)


def expect_object(value: object, path: str) -> dict[str, Any]:
    """``value`` as a JSON object, or the error naming ``path``."""
    if not isinstance(value, dict):
        raise fail(path, f"expected an object, got {kind(value)}")
    return value


def expect_list(value: object, path: str, what: str = "a list") -> list[Any]:
    """``value`` as a JSON list, or the error naming ``path``."""
    if not isinstance(value, list):
        raise fail(path, f"expected {what}, got {kind(value)}")
    return value


def expect_string(value: object, path: str) -> str:
    """``value`` as a string, or the error naming ``path``."""
    if not isinstance(value, str):
        raise fail(path, f"expected a string, got {kind(value)}")
    return value


def field(item: dict[str, Any], key: str, path: str) -> Any:
    """The required entry ``key`` of ``item``."""
    if key not in item:
        raise fail(path, f"expected an object with '{key}'")
    return item[key]


def parse_arguments(text: object, path: str) -> dict[str, JsonValue]:
    """A call's arguments given as JSON text, parsed; they must be one JSON object."""
    source = expect_string(text, path)
    try:
        value = json.loads(source)
    except (ValueError, RecursionError) as error:
        raise fail(path, f"expected JSON text of an object, could not parse it: {error}") from None
    if not isinstance(value, dict):
        raise fail(path, f"expected JSON text of an object, got {kind(value)}")
    return value


def joined_text(parts: Sequence[object], path: str, types: frozenset[str]) -> str:
    """A tool output given as text parts: the concatenation of their texts."""
    texts = []
    for index, part in enumerate(parts):
        where = at(path, index)
        item = expect_object(part, where)
        if item.get("type") not in types:
            raise fail(at(where, "type"), f"expected one of {sorted(types)}, got {item.get('type')!r}")
        texts.append(expect_string(field(item, "text", where), at(where, "text")))
    return "".join(texts)


ROLES: frozenset[str] = frozenset({"system", "developer", "user", "assistant"})


def role(value: object, path: str, allowed: frozenset[str] = ROLES) -> Role:
    """A message's role, one of ``allowed``."""
    if value not in allowed:
        raise fail(path, f"expected a role in {sorted(allowed)}, got {value!r}")
    return value  # type: ignore[return-value]  # checked against the literal's values just above


def messages(value: object, allowed: frozenset[str] = ROLES) -> Iterator[tuple[str, dict[str, Any], Role]]:
    """Each message of a list of messages: its path, the message object and its role (one of ``allowed``)."""
    for index, entry in enumerate(expect_list(value, "", "a list of messages")):
        path = at("", index)
        message = expect_object(entry, path)
        yield path, message, role(field(message, "role", path), at(path, "role"), allowed)


class Builder:
    """Collects messages in order, checking that every result answers an earlier call."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._calls: set[str] = set()
        self._answered: set[str] = set()

    def message(self, role: Role, texts: Sequence[str] = (), calls: Sequence[ToolCall] = ()) -> None:
        """Add a message without results."""
        self.messages.append(Message(role=role, texts=tuple(texts), tool_calls=tuple(calls)))

    def call(self, name: object, name_path: str, call_id: object, id_path: str,
             arguments: dict[str, JsonValue]) -> ToolCall:
        """A tool call, its id registered; ids are unique within a transcript."""
        checked = expect_string(call_id, id_path)
        if checked in self._calls:
            raise fail(id_path, f"expected a new call id, '{checked}' is already an earlier call's")
        self._calls.add(checked)
        return ToolCall(name=expect_string(name, name_path), id=checked, arguments=arguments)

    def result(self, call_id: object, content: JsonValue, path: str, *, is_error: bool = False) -> None:
        """Add a ``tool`` message with one result, whose id must name an earlier call."""
        checked = expect_string(call_id, path)
        if checked not in self._calls:
            raise fail(path, f"expected the id of an earlier tool call, got '{checked}', which matches no call")
        if checked in self._answered:
            raise fail(path, f"expected one result per call, call '{checked}' already has one")
        self._answered.add(checked)
        self.messages.append(Message(role="tool", tool_results=(ToolResult(call_id=checked, content=content, is_error=is_error),)))

    def transcript(self) -> Transcript:
        """The messages collected so far."""
        return Transcript(messages=tuple(self.messages))
