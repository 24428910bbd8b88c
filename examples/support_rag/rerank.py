"""A re-ranker for ``oloproof diagnose --intervention reranker --reranker rerank:move_up``.

The retriever ranks passages by how many question words they share, so a long passage
that mentions everything outranks a short one that answers. ``move_up`` moves up the
passages whose words are most densely the question's: shared words per word of the
passage, the retriever's order breaking ties. It returns the same passages, reordered.
"""

from __future__ import annotations

from app import words


def move_up(query, passages):
    """``passages`` reordered by the density of the query's words in them."""
    question = words(query)

    def density(passage):
        text = words(passage.text or "")
        return len(question & text) / max(len(text), 1)

    ranked = sorted(enumerate(passages), key=lambda pair: (-density(pair[1]), pair[0]))
    return [passage for _, passage in ranked]
