"""Passages as judges read them: numbered, each with its id, never a list repr."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["passage_id", "render_passages"]


def passage_id(passage: dict[str, Any]) -> str:
    """``doc_id``, or ``doc_id#chunk_id`` for a chunk."""
    chunk = passage.get("chunk_id")
    return f"{passage['doc_id']}#{chunk}" if chunk is not None else str(passage["doc_id"])


def render_passages(passages: Iterable[dict[str, Any] | str]) -> str:
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
