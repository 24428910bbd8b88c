"""Replaying a parent run's recorded retrievals, optionally through a re-ranker.

No retriever call is made: candidates come from the parent run's
``retrievals`` table, in their recorded order.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import defaultdict
from typing import Any

from oloproof._exceptions import NotFoundError, SystemContractError
from oloproof._system._passage import Passage, Retrieval
from oloproof.records import Candidate, RecordedRetrieval
from oloproof.store import ResultsStore, run_manifest, run_table

__all__ = ["check_reranked", "load_recorded_retrievals", "replay_retrieval"]


def load_recorded_retrievals(store: ResultsStore, run_id: str) -> dict[str, RecordedRetrieval]:
    """Each case's recorded query and candidates in a complete run.

    Raises:
        NotFoundError: No complete run has that id.
    """
    if not store.exists(run_manifest(run_id)):
        raise NotFoundError(f"no complete run {run_id!r} in the store", path=store.url)
    candidates: dict[str, list[Candidate]] = defaultdict(list)
    for row in sorted(store.read_table(run_table(run_id, "retrievals")), key=lambda r: (r["case_id"], r["position"])):
        candidates[row["case_id"]].append(
            Candidate(doc_id=row["doc_id"], chunk_id=row["chunk_id"], score=row["score"], text=row["text"])
        )
    recorded = {}
    for row in store.read_table(run_table(run_id, "cases")):
        if row["status"] == "ok" and row.get("retrieval_key") is not None:
            recorded[row["case_id"]] = RecordedRetrieval(
                query=row.get("query"), candidates=candidates.get(row["case_id"], [])
            )
    return recorded


def check_reranked(original: list[Passage], reranked: Any, where: str) -> tuple[Passage, ...]:
    """The re-ranker's passages, each of which must be one of the candidates."""
    if not isinstance(reranked, list | tuple) or not all(isinstance(p, Passage) for p in reranked):
        raise SystemContractError(f"{where} must return a list of Passage", field="reranker")
    known = {(p.doc_id, p.chunk_id, p.text) for p in original}
    for passage in reranked:
        if (passage.doc_id, passage.chunk_id, passage.text) not in known:
            raise SystemContractError(
                f"{where} returned passage {passage.unit_id!r}, which was not among the candidates",
                field="reranker",
            )
    return tuple(reranked)


def replay_retrieval(recorded: RecordedRetrieval, depth: int, reranker: Any = None, where: str = "") -> Retrieval:
    """The recorded retrieval, re-ranked when a re-ranker is given."""
    passages = [Passage(**candidate) for candidate in recorded.candidates]
    if reranker is not None:
        reranked = reranker(recorded.query, list(passages))
        if inspect.isawaitable(reranked):
            reranked = asyncio.run(_awaited(reranked))  # a pool thread has no running loop
        passages = list(check_reranked(passages, reranked, where))
    return Retrieval(query=recorded.query, depth=depth, candidates=tuple(passages))


async def _awaited(value: Any) -> Any:
    return await value
