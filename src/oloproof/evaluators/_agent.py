"""Agent-response mode: a judge's ``query`` and ``response`` given as message lists.

An agent's response is a transcript (its tool calls, their results, the final
answer) in any supported format. The judged response is the final assistant text;
unless a context is given, the context is what the context tools returned
(``file_search`` always, plus the configured ``context_tools``), numbered in call
order then rank with each passage's document id. A transcript without a context
tool result has no context to judge against: ``not_applicable:no_context_tool_results``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue

from oloproof._exceptions import DatasetError, TranscriptError
from oloproof.transcripts import ContextTool, Extraction, Transcript, extract_context, read_transcript

__all__ = [
    "NO_CONTEXT_TOOL_RESULTS",
    "absent_context",
    "check_messages",
    "conversation_text",
    "extract_agent_response",
    "is_messages",
    "passages_of",
    "ranked_documents",
]

NO_CONTEXT_TOOL_RESULTS = "not_applicable:no_context_tool_results"
"""The reason a context-reading judgment of a transcript without context tool results is excluded."""


def absent_context(output_items: Any, reason: str) -> str:
    """Why a case without retrieval or context is excluded: an agent's run that called no
    context tool has ``no_context_tool_results``, any other case ``reason``."""
    return NO_CONTEXT_TOOL_RESULTS if output_items is not None else reason


def is_messages(value: Any) -> bool:
    """Whether an input is a message list (agent-response mode) rather than text.

    A non-empty list of JSON objects: a context is a list of chunks, which are
    objects too, so only the inputs that name messages (``query``, ``response``)
    are read this way.
    """
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def extract_agent_response(value: Any, context_tools: Sequence[ContextTool]) -> Extraction:
    """The judged response and the context tools' results of a response message list.

    Raises:
        TranscriptError: The messages are malformed; the error names the path inside them.
    """
    return extract_context(read_transcript(value), context_tools)


def conversation_text(value: Any) -> str:
    """A query message list as the prompt shows it.

    One user message alone is its text; a longer conversation is its turns, each
    headed by who spoke, tool calls and results left out (the query is what was asked).

    Raises:
        TranscriptError: The messages are malformed.
    """
    transcript: Transcript = read_transcript(value)
    spoken = [m for m in transcript.messages if m.role in ("user", "assistant") and m.texts]
    if len(spoken) == 1 and spoken[0].role == "user":
        return "".join(spoken[0].texts)
    turns: list[str] = []
    counts = {"user": 0, "assistant": 0}
    for message in spoken:
        counts[message.role] += 1
        who = "User" if message.role == "user" else "Agent"
        turns.append(f"{who} turn {counts[message.role]}:\n{''.join(message.texts)}")
    return "\n\n".join(turns)


def passages_of(extraction: Extraction) -> list[dict[str, JsonValue]]:
    """The context tools' results as passages (``doc_id``, ``text``), in call order then rank."""
    return [{"doc_id": p.document_id, "text": p.text} for p in extraction.passages]


def ranked_documents(extraction: Extraction) -> list[dict[str, JsonValue]]:
    """The context tools' results as the catalogue's ``retrieved_documents``.

    In call order then rank: the first of ``n`` passages scores ``n``, down to 1. A
    document returned twice keeps its first (best) place when the ranking is read.
    """
    count = len(extraction.passages)
    return [{"document_id": p.document_id, "relevance_score": float(count - index)}
            for index, p in enumerate(extraction.passages)]  # fmt: skip


def check_messages(value: Any, field: str, context_tools: Sequence[ContextTool], *, query: bool = False) -> None:
    """Check a row's message list before anything runs (nothing when it is not one).

    Raises:
        DatasetError: The messages are malformed; ``field`` is the row's field
            followed by the path inside the messages, e.g. ``response[1].tool_calls[0]``.
    """
    if not is_messages(value):
        return
    try:
        conversation_text(value) if query else extract_agent_response(value, context_tools)
    except TranscriptError as error:
        inside = error.field or ""
        raise DatasetError(error.message, field=field + (inside if inside.startswith("[") or not inside
                                                          else f".{inside}")) from None
