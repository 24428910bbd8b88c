"""Any transcript, written in each of the four formats, reads back to itself."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oloproof.transcripts import (
    Message,
    ToolCall,
    ToolResult,
    Transcript,
    read_anthropic_messages,
    read_chat_messages,
    read_responses_items,
    read_transcript,
    read_vendor_messages,
)

_TEXT = st.text(max_size=8)
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
                     max_leaves=6)
_ARGUMENTS = st.dictionaries(_TEXT, _JSON, max_size=3)


@st.composite
def transcripts(draw: st.DrawFn) -> Transcript:
    """User, assistant and tool messages; each tool message answers one earlier unanswered call."""
    messages: list[Message] = []
    waiting: list[str] = []
    for _ in range(draw(st.integers(0, 8))):
        role = draw(st.sampled_from(["user", "assistant", *(["tool"] if waiting else [])]))
        if role == "user":
            messages.append(Message(role="user", texts=tuple(draw(st.lists(_TEXT, min_size=1, max_size=2)))))
        elif role == "assistant":
            calls = tuple(ToolCall(name=draw(_TEXT), id=f"call-{len(messages)}-{n}", arguments=draw(_ARGUMENTS))
                          for n in range(draw(st.integers(0, 2))))
            waiting.extend(call.id for call in calls)
            messages.append(Message(role="assistant", texts=tuple(draw(st.lists(_TEXT, max_size=2))),
                                    tool_calls=calls))
        else:
            call_id = waiting.pop(draw(st.integers(0, len(waiting) - 1)))
            messages.append(Message(role="tool", tool_results=(ToolResult(call_id=call_id, content=draw(_TEXT)),)))
    return Transcript(messages=tuple(messages))


def _vendor(transcript: Transcript) -> list[Any]:
    out: list[Any] = []
    for m in transcript.messages:
        if m.role == "tool":
            result = m.tool_results[0]
            out.append({"role": "tool", "tool_call_id": result.call_id,
                        "content": [{"type": "tool_result", "tool_result": result.content}]})
        else:
            out.append({"role": m.role, "content": [{"type": "text", "text": t} for t in m.texts] + [
                {"type": "tool_call", "tool_call_id": c.id, "name": c.name, "arguments": c.arguments}
                for c in m.tool_calls]})
    return out


def _chat(transcript: Transcript) -> list[Any]:
    out: list[Any] = []
    for m in transcript.messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_results[0].call_id, "content": m.tool_results[0].content})
            continue
        message: dict[str, Any] = {"role": m.role, "content": [{"type": "text", "text": t} for t in m.texts] or None}
        if m.tool_calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                                     for c in m.tool_calls]
        out.append(message)
    return out


def _responses(transcript: Transcript) -> list[Any]:
    out: list[Any] = []
    for m in transcript.messages:
        if m.role == "tool":
            out.append({"type": "function_call_output", "call_id": m.tool_results[0].call_id,
                        "output": m.tool_results[0].content})
            continue
        part = "output_text" if m.role == "assistant" else "input_text"
        out.append({"type": "message", "role": m.role, "content": [{"type": part, "text": t} for t in m.texts]})
        out.extend({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": json.dumps(c.arguments)}
                   for c in m.tool_calls)
    return out


def _anthropic(transcript: Transcript) -> list[Any]:
    out: list[Any] = []
    results: list[Any] = []  # tool results wait for the user message that carries them
    for m in transcript.messages:
        if m.role == "tool":
            results.append({"type": "tool_result", "tool_use_id": m.tool_results[0].call_id,
                            "content": m.tool_results[0].content})
            continue
        texts = [{"type": "text", "text": t} for t in m.texts]
        if m.role == "user":
            out.append({"role": "user", "content": results + texts})
            results = []
            continue
        if results:
            out.append({"role": "user", "content": results})
            results = []
        out.append({"role": "assistant", "content": texts + [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]})
    if results:
        out.append({"role": "user", "content": results})
    return out


WRITERS = [(_vendor, read_vendor_messages), (_chat, read_chat_messages), (_responses, read_responses_items),
           (_anthropic, read_anthropic_messages)]


# Generation and reading take longer on a loaded machine; neither is what is tested.
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(transcripts())
def test_every_format_reads_back_what_was_written(transcript):
    for write, read in WRITERS:
        value = json.loads(json.dumps(write(transcript)))
        assert read(value) == transcript, write.__name__
        assert read_transcript(value) == transcript, write.__name__
