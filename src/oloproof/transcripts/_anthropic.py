"""Anthropic Messages: ``text``, ``tool_use`` and ``tool_result`` content blocks."""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from oloproof._json import json_kind
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
)

__all__ = ["read_anthropic_messages"]

_ROLES = frozenset({"user", "assistant"})
_SKIPPED = frozenset({"thinking", "redacted_thinking"})


def read_anthropic_messages(value: object) -> Transcript:
    """Read Anthropic Messages.

    ``content`` is a string or a list of blocks: ``text``; ``tool_use`` (``id``,
    ``name``, ``input`` as an object) in assistant messages; ``tool_result``
    (``tool_use_id``, ``content`` as a string or text blocks, concatenated) in user
    messages. Each tool result becomes its own ``tool`` message, and the user
    message's text follows them. ``thinking`` blocks are not part of a transcript.

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
        if isinstance(content, str):
            builder.message(who, [content])
            continue
        texts: list[str] = []
        calls: list[ToolCall] = []
        for number, block in enumerate(expect_list(content, at(path, "content"), "a string or a list of blocks")):
            where = at(at(path, "content"), number)
            _block(builder, expect_object(block, where), where, who, texts, calls)
        if who == "assistant" or texts:
            builder.message(who, texts, calls)
    return builder.transcript()


def _block(builder: Builder, block: dict[str, Any], where: str, who: str,
           texts: list[str], calls: list[ToolCall]) -> None:
    kind = block.get("type")
    if kind == "text":
        texts.append(expect_string(field(block, "text", where), at(where, "text")))
    elif kind == "tool_use" and who == "assistant":
        arguments = expect_object(field(block, "input", where), at(where, "input"))
        calls.append(builder.call(field(block, "name", where), at(where, "name"),
                                  field(block, "id", where), at(where, "id"), arguments))
    elif kind == "tool_result" and who == "user":
        content = block.get("content", "")
        output: JsonValue = content if isinstance(content, str) else joined_text(
            expect_list(content, at(where, "content"), "a string or a list of text blocks"),
            at(where, "content"), frozenset({"text"}))
        failed = block.get("is_error", False)
        if not isinstance(failed, bool):
            raise fail(at(where, "is_error"), f"expected true or false, got {json_kind(failed)}")
        builder.result(field(block, "tool_use_id", where), output, at(where, "tool_use_id"), is_error=failed)
    elif kind not in _SKIPPED or who != "assistant":
        expected = ["text", "thinking", "tool_use"] if who == "assistant" else ["text", "tool_result"]
        raise fail(at(where, "type"), f"expected a block type in {expected} in a {who} message, got {kind!r}")
