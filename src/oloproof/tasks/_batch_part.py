"""`BatchPart`: what a group of judged batches leaves of a run, encoded (made by `encode_batch`)."""

from __future__ import annotations

from dataclasses import dataclass

from oloproof.records import CacheCount, CaseFacts, JudgmentBrief

__all__ = ["BatchPart"]


@dataclass(frozen=True, slots=True)
class BatchPart:
    """One batch's rows, encoded, and what the run's summary needs of them."""

    index: int
    """The batch's position in the run."""
    facts: dict[str, CaseFacts]
    """Per case id: ``best_relevant_position``, ``relevant_position``, ``context_truncated``."""
    judgments: list[JudgmentBrief]
    """What the summary reads of the batch's judgment rows (settled as this run's)."""
    counts: dict[str, CacheCount]
    """Hits and misses of the execution, retrieve and generate caches, by cache."""
    chunks: dict[str, bytes]
    """Per table name in ``CHUNKED_TABLES``: the rows as one :func:`encode_chunk` chunk."""
