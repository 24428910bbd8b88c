"""`BatchPart`: a group of batches' share of a finished run, made once they are judged.

A run never holds every case's merged result at once: as each group of batches
(one batch of a large run, all of a small one: see `group_batches`) is judged, its
``cases``, ``retrievals`` and ``judgments`` rows are encoded into compressed chunks
and the batch's results are let go. What the summary still needs (per-case facts,
cache counts, the judgment rows the metrics are computed from) travels with the
chunks; the run's tables are written from the chunks at the end.
"""

from __future__ import annotations

import dataclasses
from typing import cast

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.records import CacheCount, CaseFacts, JudgmentBrief, JudgmentRow, StoredObject
from oloproof.report._facts import case_facts
from oloproof.stages._batch import Batch
from oloproof.stages._batch_part import BatchPart
from oloproof.store import CASES, JUDGMENTS, RETRIEVALS, encode_chunk
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._judge import settle_judgments
from oloproof.tasks._persist import CHUNKED_TABLES, case_rows, retrieval_rows
from oloproof.tasks._results import CaseResult

__all__ = ["encode_batch"]


def _facts(env: RunEnvironment, result: CaseResult, top_k: int | None) -> CaseFacts:
    # The facts read passages as the JSON objects they are.
    candidates = cast("list[StoredObject] | None", result.candidates if result.ok else None)
    return case_facts(env.cases[result.case_id], candidates, cast("list[StoredObject] | None", result.dropped), top_k)


def _count(flags: list[bool]) -> CacheCount:
    hits = sum(1 for flag in flags if flag)
    return CacheCount(hit=hits, miss=len(flags) - hits)


def _counts(results: list[CaseResult], agent: bool = False, retrieve_repeats: bool = False) -> dict[str, CacheCount]:
    # A case's repeats share its one retrieval (unless each retrieves afresh): counted
    # once, from the first that ran it.
    retrieved: dict[tuple[str, int], bool] = {}
    for r in results:
        if r.retrieve_ran:
            retrieved.setdefault((r.case_id, r.repeat if retrieve_repeats else 0), r.retrieve_hit)
    counts = {
        "execution": _count([r.execution_hit for r in results]),
        "retrieve": _count(list(retrieved.values())),
        "generate": _count([r.generate_hit for r in results if r.generate_ran]),
    }
    if agent:  # tool calls, not cases: an agent run makes any number
        counts["tools"] = CacheCount(hit=sum(r.tool_hits for r in results), miss=sum(r.tool_misses for r in results))
    return counts


def _retrieval_of(results: list[CaseResult], retrieve_repeats: bool) -> dict[tuple[str, int], CaseResult]:
    """Each retrieval's result that shows it, by case and repeat: without
    ``retrieve_repeats`` a case's one retrieval, shown by its first ok repeat (else its
    first) under repeat 0; with it, every repeat's own."""
    shown: dict[tuple[str, int], CaseResult] = {}
    for result in results:
        key = (result.case_id, result.repeat if retrieve_repeats else 0)
        kept = shown.get(key)
        if kept is None or (not kept.ok and result.ok):
            shown[key] = result
    return shown


def _shown_at(result: CaseResult, repeat: int) -> CaseResult:
    """``result`` as the retrieval of ``repeat``: a case's one retrieval is repeat 0's,
    whichever repeat shows it."""
    return result if result.repeat == repeat else dataclasses.replace(result, repeat=repeat)


@task(cache_policy=NO_CACHE, name="encode-batch", task_run_name="encode rows ({batch.label})")
def encode_batch(
    env: RunEnvironment,
    batch: Batch,
    results: list[dict[str, CaseResult]],
    judged: list[dict[str, list[JudgmentRow]]],
) -> BatchPart:
    """Encode the table rows of judged batches (``batch`` spans them); their results
    can then be let go.

    Args:
        env: The run.
        batch: The batches' cases, in order, under the first one's index.
        results: Each batch's merged results, by case id.
        judged: Each batch's judgment rows, by case id.
    """
    merged = {(case_id, result.repeat): result for part in results for case_id, result in part.items()}
    ordered = [merged[case_id, r] for case_id in batch.case_ids for r in range(env.repeats) if (case_id, r) in merged]
    rows = settle_judgments([row for part in judged for rows_ in part.values() for row in rows_], env.run_id)
    top_k, again = env.system.config.top_k, env.retrieve_repeats
    shown = _retrieval_of(ordered, again)
    found = {key: _facts(env, result, top_k) for key, result in shown.items()}
    row_facts = {(r.case_id, r.repeat): found[r.case_id, r.repeat if again else 0] for r in ordered}
    facts = {case_id: fact for (case_id, repeat), fact in found.items() if repeat == 0}  # a case's first retrieval
    table_rows = {
        CASES.name: case_rows(env.run_id, ordered, row_facts, env.cases),
        RETRIEVALS.name: retrieval_rows(env.run_id, [_shown_at(r, key[1]) for key, r in shown.items()], env.cases, top_k),
        JUDGMENTS.name: rows,
    }
    chunks = {
        schema.name: encode_chunk((row.as_mapping() for row in table_rows[schema.name]), schema)
        for schema in CHUNKED_TABLES
    }
    briefs = [JudgmentBrief.of(row) for row in rows]
    return BatchPart(index=batch.index, facts=facts, judgments=briefs, counts=_counts(ordered, env.system.config.kind == "agent", again), chunks=chunks)
