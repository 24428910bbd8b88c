"""Re-rankers for the planted project: ``rerank(query, passages) -> passages``."""

from __future__ import annotations

from oloproof import Passage


def move_relevant_up(query, passages):
    """Passages whose doc id starts with ``rel-`` first, otherwise in their order."""
    return sorted(passages, key=lambda passage: not passage.doc_id.startswith("rel-"))


def invent_passage(query, passages):
    """A broken re-ranker: returns a passage that was never a candidate."""
    return [Passage(doc_id="invented-1", score=1.0, text="A passage nobody retrieved.")] + list(passages)


NOT_CALLABLE = 42
