"""OpenAI Responses API items: ``message``, ``function_call``, ``function_call_output``, ``file_search_call``."""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

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
    parse_arguments,
    role,
)

__all__ = ["read_responses_items"]

_TEXT = frozenset({"input_text", "output_text"})
_TYPES = ("message", "function_call", "function_call_output", "file_search_call", "reasoning")


class _Reader:
    """Joins consecutive call items to the assistant message before them, as Chat Completions does."""

    def __init__(self) -> None:
        self.builder = Builder()
        self.texts: list[str] | None = None  # the open assistant message, if any
        self.calls: list[ToolCall] = []
        self.deferred: list[tuple[str, JsonValue, str]] = []  # file search results, after their message

    def open(self, texts: list[str]) -> None:
        self.close()
        self.texts = texts

    def close(self) -> None:
        if self.texts is not None:
            self.builder.message("assistant", self.texts, self.calls)
        self.texts, self.calls = None, []
        for call_id, content, path in self.deferred:
            self.builder.result(call_id, content, path)
        self.deferred = []

    def call(self, call: ToolCall) -> None:
        if self.texts is None:
            self.texts = []
        self.calls.append(call)


def read_responses_items(value: object) -> Transcript:
    """Read OpenAI Responses API input or output items.

    ``message`` items (the ``type`` may be left out) hold a string or
    ``input_text``/``output_text`` parts; ``function_call`` items (arguments as
    JSON text) and ``file_search_call`` items join the assistant message before
    them; ``function_call_output`` answers a call by ``call_id``. A file search's
    ``results`` become its result, in the vendor's shape (``file_id``,
    ``file_name``, ``score``, ``content: [{"type": "text", "text"}]``); without
    ``results`` the call has none. ``reasoning`` items are not part of a transcript.

    Args:
        value: The items, as decoded JSON.

    Returns:
        The transcript.

    Raises:
        TranscriptError: The value is not such a list; the error names the path.
    """
    reader = _Reader()
    for index, entry in enumerate(expect_list(value, "", "a list of items")):
        path = at("", index)
        item: dict[str, Any] = expect_object(entry, path)
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            who = role(field(item, "role", path), at(path, "role"))
            texts = _texts(field(item, "content", path), at(path, "content"))
            if who == "assistant":
                reader.open(texts)
            else:
                reader.close()
                reader.builder.message(who, texts)
        elif kind == "function_call":
            arguments = parse_arguments(field(item, "arguments", path), at(path, "arguments"))
            reader.call(reader.builder.call(field(item, "name", path), at(path, "name"),
                                            field(item, "call_id", path), at(path, "call_id"), arguments))
        elif kind == "file_search_call":
            _file_search(reader, item, path)
        elif kind == "function_call_output":
            reader.close()
            output = field(item, "output", path)
            if not isinstance(output, str):
                output = joined_text(expect_list(output, at(path, "output"), "a string or a list of text parts"),
                                     at(path, "output"), frozenset({"input_text"}))
            reader.builder.result(field(item, "call_id", path), output, at(path, "call_id"))
        elif kind != "reasoning":
            raise fail(at(path, "type"), f"expected an item type in {list(_TYPES)}, got {kind!r}")
    reader.close()
    return reader.builder.transcript()


def _texts(content: object, path: str) -> list[str]:
    if isinstance(content, str):
        return [content]
    texts = []
    for number, part in enumerate(expect_list(content, path, "a string or a list of content parts")):
        where = at(path, number)
        item = expect_object(part, where)
        if item.get("type") not in _TEXT:
            raise fail(at(where, "type"), f"expected a part type in {sorted(_TEXT)}, got {item.get('type')!r}")
        texts.append(expect_string(field(item, "text", where), at(where, "text")))
    return texts


def _file_search(reader: _Reader, item: dict[str, Any], path: str) -> None:
    queries = expect_list(field(item, "queries", path), at(path, "queries"))
    for number, query in enumerate(queries):
        expect_string(query, at(at(path, "queries"), number))
    call = reader.builder.call("file_search", at(path, "type"), field(item, "id", path), at(path, "id"),
                               {"queries": queries})
    reader.call(call)
    if item.get("results") is None:
        return
    results: list[JsonValue] = []
    for number, entry in enumerate(expect_list(item["results"], at(path, "results"))):
        where = at(at(path, "results"), number)
        result = expect_object(entry, where)
        shaped: dict[str, JsonValue] = {}
        for source, target in (("file_id", "file_id"), ("filename", "file_name")):
            if result.get(source) is not None:
                shaped[target] = expect_string(result[source], at(where, source))
        if result.get("score") is not None:
            shaped["score"] = result["score"]
        text = expect_string(field(result, "text", where), at(where, "text"))
        shaped["content"] = [{"type": "text", "text": text}]
        results.append(shaped)
    reader.deferred.append((call.id, results, at(path, "id")))
