"""Which format a transcript is in, told from features only one format has."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oloproof._exceptions import TranscriptError
from oloproof.transcripts._anthropic import read_anthropic_messages
from oloproof.transcripts._chat import read_chat_messages
from oloproof.transcripts._model import Transcript
from oloproof.transcripts._reading import at, expect_list, fail
from oloproof.transcripts._responses import read_responses_items
from oloproof.transcripts._vendor import read_vendor_messages

__all__ = ["read_transcript"]

_READERS: dict[str, Callable[[object], Transcript]] = {
    "anthropic": read_anthropic_messages,
    "chat": read_chat_messages,
    "responses": read_responses_items,
    "vendor": read_vendor_messages,
}


def read_transcript(value: object) -> Transcript:
    """Read a transcript in whichever supported format it is in.

    The format is told by features only it has: a ``type`` on the items
    (Responses), ``tool_calls`` or a ``tool`` message with string content (Chat
    Completions), ``tool_call``/``tool_result`` items with ``tool_result`` (the
    vendor's), ``tool_use`` blocks or results with ``tool_use_id`` (Anthropic). A
    value with features of two formats is refused. Plain text messages have none;
    they are read when every format that reads them gives the same transcript.

    Args:
        value: The transcript, as decoded JSON.

    Returns:
        The transcript.

    Raises:
        TranscriptError: The value mixes formats, fits none, or is malformed in
            the one it is in; the error names the path.
    """
    items = expect_list(value, "", "a list of messages or items")
    found: dict[str, str] = {}
    for index, item in enumerate(items):
        for name, where in _marks(item, at("", index)):
            found.setdefault(name, where)
    if len(found) > 1:
        (first, here), (second, there) = list(found.items())[:2]  # in the order they appear
        raise fail(there, f"expected one format, found {_NAMES[first]} at {here or 'the top'}"
                          f" and {_NAMES[second]} here")
    if found:
        return _READERS[next(iter(found))](items)
    read: dict[str, Transcript] = {}
    errors: dict[str, TranscriptError] = {}
    for name, reader in _READERS.items():
        try:
            read[name] = reader(items)
        except TranscriptError as error:
            errors[name] = error
    if not read:
        details = "; ".join(f"{_NAMES[name]}: {error}" for name, error in sorted(errors.items()))
        raise fail("", f"expected a transcript in a supported format, it fits none ({details})")
    transcripts = list(read.values())
    if any(other != transcripts[0] for other in transcripts[1:]):
        raise fail("", f"expected a transcript whose format can be told, it reads differently as {sorted(read)}")
    return transcripts[0]


_NAMES = {
    "anthropic": "Anthropic Messages",
    "chat": "Chat Completions",
    "responses": "Responses API items",
    "vendor": "the vendor's agent messages",
}


def _marks(item: object, path: str) -> list[tuple[str, str]]:
    if not isinstance(item, dict):
        return []
    marks: list[tuple[str, str]] = []
    if "type" in item:
        marks.append(("responses", at(path, "type")))
    if item.get("tool_calls") is not None:
        marks.append(("chat", at(path, "tool_calls")))
    content = item.get("content")
    if item.get("role") == "tool" and isinstance(content, str):
        marks.append(("chat", at(path, "content")))
    if isinstance(content, list):
        for number, part in enumerate(content):
            mark = _part_mark(part)
            if mark is not None:
                marks.append((mark, at(at(path, "content"), number)))
    return marks


def _part_mark(part: Any) -> str | None:
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind == "tool_call" or (kind == "tool_result" and "tool_result" in part):
        return "vendor"
    if kind == "tool_use" or (kind == "tool_result" and "tool_use_id" in part):
        return "anthropic"
    if kind in ("input_text", "output_text"):
        return "responses"
    return None
