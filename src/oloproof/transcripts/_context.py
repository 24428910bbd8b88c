"""The judged response and the context an agent's context tools retrieved, out of a transcript."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from pydantic import JsonValue

from oloproof._exceptions import ConfigError, TranscriptError
from oloproof.transcripts._model import Frozen, Message, ToolCall, ToolResult, Transcript
from oloproof.transcripts._reading import at, expect_list, expect_object, expect_string, fail, kind

__all__ = ["FILE_SEARCH", "ContextPassage", "ContextTool", "Extraction", "extract_context"]

FILE_SEARCH = "file_search"
"""The vendor's retrieval tool, always a context tool."""


class ContextTool(Frozen):
    """A tool, besides ``file_search``, whose results are the context.

    Its result is a list of objects (or JSON text of one), each one passage, in rank order.
    """

    name: str
    """The tool's name, as its calls give it."""

    id_field: str = "doc_id"
    """The entry of each result object holding the document id (a string); ``doc_id``,
    as a live agent's context tools record their passages, by default."""

    text_field: str = "text"
    """The entry of each result object holding the passage's text (a string)."""


class ContextPassage(Frozen):
    """One retrieved passage of the context."""

    number: int
    """The passage's 1-based number in the context: in call order, then rank."""

    document_id: str
    """The document the passage comes from: a file search's ``file_name`` (or ``file_id``)."""

    text: str
    """The passage's text."""

    tool: str
    """The context tool that returned it."""

    call_id: str
    """The id of the call that returned it."""

    rank: int
    """The 1-based rank of its result within that call's results."""


class Extraction(Frozen):
    """What a judge reads of a transcript."""

    response: str
    """The final assistant text: the text parts of the last message, joined."""

    passages: tuple[ContextPassage, ...]
    """The context tools' results, in call order then rank; empty when they found nothing."""

    transcript: Transcript
    """The transcript without the context tools' results (their calls stay)."""

    not_applicable: Literal["no_context_tool_results"] | None
    """Why a context-based judgment does not apply: no context tool returned a result."""


def extract_context(transcript: Transcript, context_tools: Sequence[ContextTool] = ()) -> Extraction:
    """Split a transcript into the judged response and its context.

    ``file_search`` results are read the vendor's way: each result's ``file_name``
    (or ``file_id``) is the document id, and each of its non-empty
    ``content[].text`` a passage. A result given as text (all Chat Completions and
    Anthropic tool outputs are) must be the JSON text of the same shape. A context
    tool that returned an empty list (or only empty texts) is applicable with no
    passages.

    Args:
        transcript: The transcript.
        context_tools: The context tools besides ``file_search``.

    Returns:
        The response, the numbered passages and the transcript the judge reads.

    Raises:
        ConfigError: A context tool is named twice, or is ``file_search``.
        TranscriptError: The transcript does not end with assistant text, or a
            context tool's result does not have the shape its tool gives; the
            error names the path inside the transcript.
    """
    tools = _tools(context_tools)
    last = len(transcript.messages) - 1
    if last < 0 or transcript.messages[last].role != "assistant" or not transcript.messages[last].texts:
        raise fail(f"messages[{last}]" if last >= 0 else "messages",
                   "expected the transcript to end with an assistant message with text")
    calls: list[ToolCall] = [call for message in transcript.messages for call in message.tool_calls
                             if call.name in tools]
    results: dict[str, tuple[ToolResult, str]] = {}
    for index, message in enumerate(transcript.messages):
        for number, result in enumerate(message.tool_results):
            results[result.call_id] = (result, f"messages[{index}].tool_results[{number}].content")
    passages: list[ContextPassage] = []
    answered = [call for call in calls if call.id in results]
    for call in answered:
        result, path = results[call.id]
        if result.is_error:  # a failed search retrieved nothing; its error text is no passage
            continue
        try:
            read = _read(tools[call.name], result.content, path)
        except TranscriptError as error:
            # The path is the transcript's as read; the call's id finds it in any format.
            raise TranscriptError(f"the result of {call.name} call '{call.id}': {error.message}",
                                  field=error.field) from None  # fmt: skip
        for rank, document_id, text in read:
            passages.append(ContextPassage(number=len(passages) + 1, document_id=document_id, text=text,
                                    tool=call.name, call_id=call.id, rank=rank))
    removed = {call.id for call in answered}
    kept = tuple(_without(message, removed) for message in transcript.messages)
    return Extraction(
        response="".join(transcript.messages[last].texts),
        passages=tuple(passages),
        transcript=Transcript(messages=tuple(message for message in kept if message is not None)),
        not_applicable=None if answered else "no_context_tool_results",
    )


def _tools(context_tools: Sequence[ContextTool]) -> dict[str, ContextTool | None]:
    tools: dict[str, ContextTool | None] = {FILE_SEARCH: None}
    for index, tool in enumerate(context_tools):
        if tool.name in tools:
            raise ConfigError(f"expected each context tool once, '{tool.name}' is named twice"
                              if tool.name != FILE_SEARCH else "file_search is always a context tool",
                              field=f"context_tools[{index}]")
        tools[tool.name] = tool
    return tools


def _without(message: Message, removed: set[str]) -> Message | None:
    kept = tuple(result for result in message.tool_results if result.call_id not in removed)
    if len(kept) == len(message.tool_results):
        return message
    if not kept and not message.texts and not message.tool_calls:
        return None
    return message.model_copy(update={"tool_results": kept})


def _read(tool: ContextTool | None, content: JsonValue, path: str) -> list[tuple[int, str, str]]:
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except (ValueError, RecursionError) as error:
            raise fail(path, f"expected a context tool's result as a list or JSON text of one: {error}") from None
        path = f"{path} (JSON text)"
    passages: list[tuple[int, str, str]] = []
    for index, entry in enumerate(expect_list(content, path, "a list of results")):
        where = at(path, index)
        result = expect_object(entry, where)
        if tool is None:
            passages.extend((index + 1, _file(result, where), text) for text in _file_texts(result, where))
            continue
        for key in (tool.id_field, tool.text_field):
            if key not in result:
                raise fail(where, f"expected a result of {tool.name} with '{key}'")
        passages.append((index + 1, expect_string(result[tool.id_field], at(where, tool.id_field)),
                         expect_string(result[tool.text_field], at(where, tool.text_field))))
    return passages


def _file(result: dict[str, JsonValue], path: str) -> str:
    for key in ("file_name", "file_id"):
        if result.get(key) is not None:
            return expect_string(result[key], at(path, key))
    raise fail(path, "expected a file search result with 'file_name' or 'file_id'")


def _file_texts(result: dict[str, JsonValue], path: str) -> list[str]:
    if "content" not in result:
        raise fail(path, "expected a file search result with 'content'")
    texts = []
    for index, entry in enumerate(expect_list(result["content"], at(path, "content"))):
        where = at(at(path, "content"), index)
        item = expect_object(entry, where)
        if not isinstance(item.get("text"), str):
            raise fail(at(where, "text"), f"expected a string, got {kind(item.get('text'))}")
        if item["text"]:  # an empty text grounds nothing; the vendor leaves it out of the context too
            texts.append(item["text"])
    return texts

