"""Rows of the ``retrievals`` table: one per retrieved candidate."""

from __future__ import annotations

from oloproof.records._base import Record

__all__ = ["RetrievalRow"]


class RetrievalRow(Record):
    """One candidate a case's retrieval returned, and what became of it."""

    run_id: str
    """The run the retrieval belongs to."""

    case_id: str
    """The case that was retrieved for."""

    position: int
    """1-based position in the retriever's order."""

    doc_id: str
    """The candidate's document."""

    chunk_id: str | None = None
    """Its chunk, when the corpus is chunked."""

    score: float | None = None
    """The retriever's own score; recorded, never used to re-rank."""

    text: str | None = None
    """The passage text."""

    in_top_k: bool
    """Whether the candidate was among the first ``top_k`` offered to assembly."""

    in_context: bool
    """Whether it was kept in the context the generator saw."""

    drop_reason: str | None = None
    """Why it was left out of the context: ``beyond_top_k`` or ``token_budget``."""

    relevant_grade: float | None = None
    """Its document's relevance grade in the case's labels; ``None`` when unlabelled."""

    repeat: int = 0
    """Which repeat retrieved it: 0, unless each repeat retrieves afresh (``retrieve_repeats``)."""
