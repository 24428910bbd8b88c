"""Context assembly: deterministic, and recorded passage by passage.

The rule, in rank order:

1. Only the first ``top_k`` candidates are offered; every candidate below is
   recorded as dropped with reason ``beyond_top_k``.
2. With a ``token_budget``, each offered passage is kept if it fits in what
   remains of the budget after the passages already kept (a running total in
   rank order). A passage that does not fit is dropped with reason
   ``token_budget``; a *later* passage that still fits is kept. Passages are
   never truncated or reordered.
"""

from __future__ import annotations

from collections.abc import Sequence

from oloproof.records import AssembledPassage, Candidate, DroppedPassage

__all__ = ["assemble_context"]


def assemble_context(
    candidates: Sequence[Candidate],
    *,
    top_k: int,
    token_budget: int | None,
    token_counts: Sequence[int] | None,
) -> tuple[list[AssembledPassage], list[DroppedPassage]]:
    """Apply the top-k cut-off and the token budget.

    Args:
        candidates: The retrieval's candidates in the retriever's order.
        top_k: How many of the first candidates are offered.
        token_budget: The most tokens the context may hold, or ``None``.
        token_counts: ``count_tokens`` of each of the first ``top_k`` candidates
            (required with a budget).

    Returns:
        The kept passages and the dropped ones, each with its 1-based
        ``position`` (and ``tokens`` when counted); dropped ones carry ``reason``.
    """
    kept: list[AssembledPassage] = []
    dropped: list[DroppedPassage] = []
    used = 0
    for index, passage in enumerate(candidates):
        # Keys in this order: the recorded entries have always had it.
        position, doc_id = index + 1, passage["doc_id"]
        chunk_id, text = passage.get("chunk_id"), passage.get("text")
        if index >= top_k:
            dropped.append(DroppedPassage(position=position, doc_id=doc_id, chunk_id=chunk_id, text=text,
                                          reason="beyond_top_k", tokens=None))  # fmt: skip
            continue
        if token_budget is None:
            kept.append(AssembledPassage(position=position, doc_id=doc_id, chunk_id=chunk_id, text=text, tokens=None))
            continue
        tokens = int(token_counts[index]) if token_counts is not None else 0
        if used + tokens <= token_budget:
            used += tokens
            kept.append(AssembledPassage(position=position, doc_id=doc_id, chunk_id=chunk_id, text=text,
                                         tokens=tokens))  # fmt: skip
        else:
            dropped.append(DroppedPassage(position=position, doc_id=doc_id, chunk_id=chunk_id, text=text,
                                          reason="token_budget", tokens=tokens))  # fmt: skip
    return kept, dropped
