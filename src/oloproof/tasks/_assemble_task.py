"""The assemble stage: apply top-k and the token budget to each retrieval."""

from __future__ import annotations

import functools
import inspect
from typing import Any

from prefect import task
from typing_extensions import TypedDict

from oloproof._exceptions import SystemContractError
from oloproof._system._passage import Passage
from oloproof.records import AssemblyRecord, Candidate, RetrievalRecord
from oloproof.stages._assemble import assemble_context
from oloproof.stages._batch import Batch
from oloproof.stages._identity import assembly_key
from oloproof.tasks._cached import Outcome, WorkItem, passthrough, run_cached
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._policy import stage_task_options

__all__ = ["assemble_contexts", "assembly_items"]


def assembly_items(
    env: RunEnvironment, batch: Batch, retrievals: dict[str, Outcome]
) -> list[WorkItem]:
    """The assemble work of the batch's cases whose retrieval succeeded."""
    system = env.system.config
    counter = env.system.count_tokens
    # Counting tokens is synchronous and cheap; an async counter goes through the limiter.
    inline = env.system.config.token_budget is None or not inspect.iscoroutinefunction(counter)
    items = []
    for case_id in batch.case_ids:
        retrieved = retrievals.get(case_id)
        record = None if retrieved is None or not retrieved.ok else retrieved.record_of(RetrievalRecord)
        # An ok outcome always has its key and record.
        if retrieved is None or retrieved.key is None or record is None:
            continue
        candidates = record.candidates
        items.append(
            WorkItem(
                case_id=case_id,
                key=assembly_key(system, retrieved.key),
                call=_count_all,
                args=(env, candidates[: system.top_k]),
                finish=functools.partial(_record, env, case_id, candidates),
                inline=inline,
            )
        )
    return items


def _count_all(env: RunEnvironment, offered: list[Candidate]) -> list[int] | None:
    if env.system.config.token_budget is None:
        return None
    counter = env.system.count_tokens
    return [counter(Passage(**passage)) for passage in offered]


def _record(env: RunEnvironment, case_id: str, candidates: list[Candidate], counts: Any) -> AssemblyRecord:
    if counts is not None and any(
        isinstance(count, bool) or not isinstance(count, int) or count < 0 for count in counts
    ):
        raise SystemContractError(
            f"{env.system.config.object}.count_tokens returned {counts!r} for case {case_id!r}; "
            "expected non-negative integers",
            field="count_tokens",
        )
    config = env.system.config
    context, dropped = assemble_context(
        candidates, top_k=config.top_k or 0, token_budget=config.token_budget, token_counts=counts
    )
    return AssemblyRecord(context=context, dropped=dropped)


class _Inputs(TypedDict):
    env: RunEnvironment
    batch: Batch
    retrievals: dict[str, Outcome]


def _identities(inputs: _Inputs) -> list[tuple[str, str]]:
    items = _planned(inputs["env"], inputs["batch"], inputs["retrievals"], body=False)
    return [(item.case_id, item.key) for item in items]


def _planned(env: RunEnvironment, batch: Batch, retrievals: dict[str, Outcome], *, body: bool) -> list[WorkItem]:
    """The batch's work items, planned once for its cache key and its body (see `Plans`)."""
    return env.plans.of_batch("assemble", batch, (env, batch, retrievals),
                              lambda: assembly_items(env, batch, retrievals), body=body)  # fmt: skip


@task(**stage_task_options("assemble", _identities))
def assemble_contexts(
    env: RunEnvironment, batch: Batch, retrievals: dict[str, Outcome]
) -> dict[str, Outcome]:
    """Assemble each successfully retrieved case; failed retrievals pass through."""
    done = run_cached(env, "assemble", _planned(env, batch, retrievals, body=True))
    return {
        case_id: done.get(case_id) or passthrough(retrievals.get(case_id))
        for case_id in batch.case_ids
    }
