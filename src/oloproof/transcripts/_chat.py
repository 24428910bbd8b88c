"""OpenAI Chat Completions messages: assistant ``tool_calls`` and ``role: tool`` messages."""

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
    joined_text,
    messages,
    parse_arguments,
)

__all__ = ["read_chat_messages"]

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_TEXT = frozenset({"text"})


def read_chat_messages(value: object) -> Transcript:
    """Read OpenAI Chat Completions messages.

    ``content`` is a string, null or a list of ``{"type": "text", "text"}`` parts. An
    assistant message's ``tool_calls`` are ``{"id", "type": "function", "function":
    {"name", "arguments"}}`` with the arguments as JSON text; a ``tool`` message
    answers one call by ``tool_call_id``, its text parts concatenated.

    Args:
        value: The messages, as decoded JSON.

    Returns:
        The transcript.

    Raises:
        TranscriptError: The value is not such a list; the error names the path.
    """
    builder = Builder()
    for path, message, who in messages(value, _ROLES):
        content = message.get("content")
        if who == "tool":
            output = content if isinstance(content, str) else joined_text(
                expect_list(content, at(path, "content"), "a string or a list of text parts"),
                at(path, "content"), _TEXT)
            builder.result(field(message, "tool_call_id", path), output, at(path, "tool_call_id"))
            continue
        texts = _texts(content, at(path, "content"))
        calls: list[ToolCall] = []
        if "tool_calls" in message and message["tool_calls"] is not None:
            if who != "assistant":
                raise fail(at(path, "tool_calls"), f"expected tool calls only in an assistant message, not a {who} one")
            for number, call in enumerate(expect_list(message["tool_calls"], at(path, "tool_calls"))):
                calls.append(_call(builder, call, at(at(path, "tool_calls"), number)))
        builder.message(who, texts, calls)
    return builder.transcript()


def _texts(content: object, path: str) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    texts = []
    for number, part in enumerate(expect_list(content, path, "a string, null or a list of text parts")):
        where = at(path, number)
        item = expect_object(part, where)
        if item.get("type") != "text":
            raise fail(at(where, "type"), f"expected the part type 'text', got {item.get('type')!r}")
        texts.append(expect_string(field(item, "text", where), at(where, "text")))
    return texts


def _call(builder: Builder, value: object, path: str) -> ToolCall:
    call: dict[str, Any] = expect_object(value, path)
    if call.get("type", "function") != "function":
        raise fail(at(path, "type"), f"expected the call type 'function', got {call.get('type')!r}")
    function = expect_object(field(call, "function", path), at(path, "function"))
    where = at(path, "function")
    arguments = parse_arguments(field(function, "arguments", where), at(where, "arguments"))
    return builder.call(field(function, "name", where), at(where, "name"),
                        field(call, "id", path), at(path, "id"), arguments)
