"""The vendor's agent messages: ``content`` items typed ``text``, ``tool_call`` and ``tool_result``."""

from __future__ import annotations

from typing import Any

from oloproof.transcripts._model import ToolCall, Transcript
from oloproof.transcripts._reading import (
    Builder,
    at,
    expect_list,
    expect_object,
    expect_string,
    fail,
    field,
    messages,
)

__all__ = ["read_vendor_messages"]

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def read_vendor_messages(value: object) -> Transcript:
    """Read the vendor's agent messages.

    A message is ``{"role", "content"}``; ``content`` is a string or a list of items:
    ``{"type": "text", "text"}``, ``{"type": "tool_call", "tool_call_id", "name",
    "arguments"}`` (arguments a JSON object) in assistant messages, and one
    ``{"type": "tool_result", "tool_result"}`` in a ``tool`` message, which names
    its call in ``tool_call_id``.

    Args:
        value: The messages, as decoded JSON.

    Returns:
        The transcript.

    Raises:
        TranscriptError: The value is not such a list; the error names the path.
    """
    builder = Builder()
    for path, message, who in messages(value, _ROLES):
        content = field(message, "content", path)
        if who == "tool":
            _result(builder, message, content, path)
            continue
        if isinstance(content, str):
            builder.message(who, [content])
            continue
        texts: list[str] = []
        calls: list[ToolCall] = []
        for number, item in enumerate(expect_list(content, at(path, "content"), "a string or a list of items")):
            where = at(at(path, "content"), number)
            _item(builder, expect_object(item, where), where, who, texts, calls)
        builder.message(who, texts, calls)
    return builder.transcript()


def _item(builder: Builder, item: dict[str, Any], where: str, who: str,
          texts: list[str], calls: list[ToolCall]) -> None:
    kind = item.get("type")
    if kind == "text":
        texts.append(expect_string(field(item, "text", where), at(where, "text")))
    elif kind == "tool_call" and who == "assistant":
        arguments = expect_object(field(item, "arguments", where), at(where, "arguments"))
        calls.append(builder.call(field(item, "name", where), at(where, "name"),
                                  field(item, "tool_call_id", where), at(where, "tool_call_id"), arguments))
    elif kind == "tool_call":
        raise fail(at(where, "type"), f"expected a tool call only in an assistant message, not a {who} one")
    else:
        expected = "'text' or 'tool_call'" if who == "assistant" else "'text'"
        raise fail(at(where, "type"), f"expected an item type {expected}, got {kind!r}")


def _result(builder: Builder, message: dict[str, Any], content: object, path: str) -> None:
    items = expect_list(content, at(path, "content"), "a list with one tool_result item")
    if len(items) != 1:
        raise fail(at(path, "content"), f"expected one tool_result item, got {len(items)}")
    where = at(at(path, "content"), 0)
    item = expect_object(items[0], where)
    if item.get("type") != "tool_result":
        raise fail(at(where, "type"), f"expected the item type 'tool_result', got {item.get('type')!r}")
    builder.result(field(message, "tool_call_id", path), field(item, "tool_result", where),
                   at(path, "tool_call_id"))
