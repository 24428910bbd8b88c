"""The retrieve stage: call ``retrieve(input, depth)`` and record positions.

A system that declares retriever parameters is called ``retrieve(input, depth, params)``.
"""

from __future__ import annotations

import functools
from typing import Any, cast

from prefect import task
from typing_extensions import TypedDict

from oloproof._exceptions import NotFoundError, SystemContractError
from oloproof._system._passage import Retrieval
from oloproof.records import Candidate, RetrievalRecord
from oloproof.stages._batch import Batch
from oloproof.stages._identity import content_hash, retrieval_key
from oloproof.tasks._cached import Outcome, WorkItem, fresh, run_cached
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._policy import stage_task_options
from oloproof.tasks._replay import replay_retrieval

__all__ = ["retrieval_items", "retrieve_passages"]


def retrieval_items(env: RunEnvironment, batch: Batch) -> list[WorkItem]:
    """The retrieve work of a batch, keyed by retrieval identity."""
    if env.recorded is not None:
        return _replay_items(env, batch)
    system = env.system.config
    depth = _depth(env)
    params = env.system.retriever_params
    extra: tuple[Any, ...] = () if params is None else (params,)
    items = []
    for case_id in batch.case_ids:
        case_input = env.cases[case_id].input
        items.append(
            WorkItem(
                case_id=case_id,
                key=retrieval_key(system, case_input, batch.repeat),
                call=env.system.retrieve,
                args=(fresh(case_input), depth, *map(fresh, extra)),
                finish=functools.partial(_record, env, case_id, depth=depth),
            )
        )
    return items


def _replay_items(env: RunEnvironment, batch: Batch) -> list[WorkItem]:
    # Replays are keyed by what they replay; they never touch the retrieve cache.
    depth = _depth(env)
    where = f"re-ranker {env.request.reranker}"
    items = []
    for case_id in batch.case_ids:
        recorded = (env.recorded or {}).get(case_id)
        if recorded is None:
            raise NotFoundError(
                f"run {env.request.replay_from} has no recorded retrieval for case {case_id!r}",
                field="replay_from",
            )
        items.append(
            WorkItem(
                case_id=case_id,
                key=content_hash({"replay": env.request.replay_from, "case": case_id, "reranker": env.request.reranker}),
                call=replay_retrieval,
                args=(recorded, depth, env.reranker, where),
                finish=functools.partial(_replayed_record, env, case_id, depth=depth),
            )
        )
    return items


def _depth(env: RunEnvironment) -> int:
    depth = env.system.config.depth
    if depth is None:  # resolving refuses a staged system without one
        raise SystemContractError("a staged system needs a depth", field="depth")
    return depth


def _replayed_record(env: RunEnvironment, case_id: str, value: Any, depth: int) -> RetrievalRecord:
    return _record(env, case_id, value, depth).model_copy(update={"replayed": True})


def _record(env: RunEnvironment, case_id: str, value: Any, depth: int) -> RetrievalRecord:
    where = f"{env.system.config.object}.retrieve"
    if not isinstance(value, Retrieval):
        raise SystemContractError(
            f"{where} returned {type(value).__name__} for case {case_id!r}; expected Retrieval",
            field="retrieve",
        )
    if len(value.candidates) > depth:
        raise SystemContractError(
            f"{where} returned {len(value.candidates)} candidates for case {case_id!r}; "
            f"depth is {depth}",
            field="retrieve",
        )
    return RetrievalRecord(
        query=value.query,
        depth=depth,
        candidates=[cast(Candidate, passage.model_dump(mode="json")) for passage in value.candidates],
    )


class _Inputs(TypedDict):
    env: RunEnvironment
    batch: Batch


def _identities(inputs: _Inputs) -> list[tuple[str, str]] | None:
    env = inputs["env"]
    if env.recorded is not None:
        return None  # a replay is cheap and must reflect the re-ranker as it is now
    return [(item.case_id, item.key) for item in _planned(env, inputs["batch"], body=False)]


def _planned(env: RunEnvironment, batch: Batch, *, body: bool) -> list[WorkItem]:
    """The batch's work items, planned once for its cache key and its body (see `Plans`)."""
    return env.plans.of_batch("retrieve", batch, (env, batch), lambda: retrieval_items(env, batch), body=body)


@task(**stage_task_options("retrieve", _identities))
def retrieve_passages(env: RunEnvironment, batch: Batch) -> dict[str, Outcome]:
    """Retrieve each case of the batch, reusing records under the same identity."""
    return run_cached(env, "retrieve", _planned(env, batch, body=True), use_cache=env.recorded is None)
