"""Passages as judges read them: numbered, each with its id, never a list repr."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import JsonValue

__all__ = ["context_sources", "context_text", "input_text", "passage_id", "render_passages"]


def passage_id(passage: Mapping[str, JsonValue]) -> str:
    """``doc_id``, or ``doc_id#chunk_id`` for a chunk."""
    chunk = passage.get("chunk_id")
    return f"{passage['doc_id']}#{chunk}" if chunk is not None else str(passage["doc_id"])


def render_passages(passages: Iterable[Mapping[str, JsonValue] | str]) -> str:
    """``[1] kb-01#c2`` then the passage's text, one block per passage.

    Plain strings (recorded contexts) are numbered without an id.
    """
    blocks = []
    for number, passage in enumerate(passages, start=1):
        if isinstance(passage, str):
            blocks.append(f"[{number}]\n{passage.strip()}")
        else:
            blocks.append(f"[{number}] {passage_id(passage)}\n{str(passage.get('text') or '').strip()}")
    return "\n\n".join(blocks)


def input_text(value: Any) -> str:
    """A text input (query, response, ground truth) as the prompt shows it: text as it
    is, several references one per line, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "\n".join(value)
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def context_text(value: Any) -> str:
    """A context as the prompt shows it: one string as it is, or a list of chunks
    (strings, or objects with ``text`` and optionally ``doc_id``) rendered as passages.

    Raises:
        ValueError: The value is neither, or a chunk has no text.
    """
    if isinstance(value, str):
        return value
    return render_passages(_chunks(value))


def context_sources(value: Any) -> list[str]:
    """A context as a list of source texts (one string is one source).

    Raises:
        ValueError: As :func:`context_text`.
    """
    if isinstance(value, str):
        return [value]
    return [chunk if isinstance(chunk, str) else str(chunk["text"]) for chunk in _chunks(value)]


def _chunks(value: Any) -> list[dict[str, JsonValue] | str]:
    # ValueError, not TypeError: callers record every ValueError as the case's bad input.
    if not isinstance(value, list):
        raise ValueError(f"a context must be a string or a list of chunks, got {type(value).__name__}")  # noqa: TRY004
    chunks: list[dict[str, JsonValue] | str] = []
    for index, chunk in enumerate(value):
        if isinstance(chunk, str):
            chunks.append(chunk)
        elif isinstance(chunk, dict) and isinstance(chunk.get("text"), str):
            chunks.append(chunk if chunk.get("doc_id") is not None else chunk["text"])
        else:
            raise ValueError(  # noqa: TRY004
                f"chunk {index} of the context must be a string or an object with a 'text' string"
            )
    return chunks
