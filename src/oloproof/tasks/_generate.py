"""The generate stage: call ``generate(input, context)`` (or a plain system).

A system that declares generator parameters gets them as the last argument:
``generate(input, context, params)``, or ``function(input, params)`` for a plain one.
"""

from __future__ import annotations

import functools
from typing import Any

from prefect import task
from pydantic import JsonValue
from typing_extensions import TypedDict

from oloproof._json import json_copy
from oloproof._system._passage import Passage
from oloproof.records import AssemblyRecord, GenerationRecord
from oloproof.stages._batch import Batch
from oloproof.stages._identity import generation_key
from oloproof.tasks._cached import CaseFailure, Outcome, WorkItem, fresh, passthrough, run_cached
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._policy import stage_task_options

__all__ = ["generate_outputs", "generation_items"]


def _context_for(
    env: RunEnvironment, case_id: str, assembled: Outcome | None
) -> list[dict[str, JsonValue]] | None:
    if env.system.config.kind == "plain":
        return None
    if env.request.context_source == "gold":
        gold = env.cases[case_id].expected.gold_context or []
        return [passage.model_dump(mode="json") for passage in gold]
    record = None if assembled is None else assembled.record_of(AssemblyRecord)
    if record is None:  # an ok outcome always has its record
        return []
    return [{"doc_id": p["doc_id"], "chunk_id": p.get("chunk_id"), "text": p.get("text")} for p in record.context]


def generation_items(
    env: RunEnvironment, batch: Batch, assemblies: dict[str, Outcome] | None
) -> list[WorkItem]:
    """The generate work of the batch's cases whose earlier stages succeeded (an
    agent's: its runs)."""
    system = env.system.config
    if system.kind == "agent":
        from oloproof.tasks._agent import agent_items  # the agent module imports this one's neighbours

        return agent_items(env, batch)
    params = env.system.generator_params
    extra: tuple[Any, ...] = () if params is None else (params,)
    items = []
    for case_id in batch.case_ids:
        assembled = None if assemblies is None else assemblies.get(case_id)
        if assemblies is not None and (assembled is None or not assembled.ok):
            continue
        case_input = env.cases[case_id].input
        context = _context_for(env, case_id, assembled)
        args: tuple[Any, ...] = (fresh(case_input),)
        if context is not None:
            args = (fresh(case_input), [Passage.model_validate(passage) for passage in context])
        items.append(
            WorkItem(
                case_id=case_id,
                key=generation_key(system, case_input, context, batch.repeat),
                call=env.system.generate,
                args=(*args, *map(fresh, extra)),
                finish=functools.partial(_record, env, case_id),
            )
        )
    return items


def _record(env: RunEnvironment, case_id: str, value: Any) -> GenerationRecord:
    try:
        output = json_copy(value)
    except ValueError as problem:
        # One odd output is that case's failure, not the run's.
        raise CaseFailure(
            f"{env.system.config.object} returned a value that is not JSON ({problem}); "
            "outputs must be JSON-serializable"
        ) from None
    return GenerationRecord(output=output)


class _Inputs(TypedDict):
    env: RunEnvironment
    batch: Batch
    assemblies: dict[str, Outcome] | None


def _identities(inputs: _Inputs) -> list[tuple[str, str]] | None:
    env = inputs["env"]
    if env.request.bypass_generation_cache:
        return None
    items = _planned(env, inputs["batch"], inputs["assemblies"], body=False)
    return [(item.case_id, item.key) for item in items]


def _planned(env: RunEnvironment, batch: Batch, assemblies: dict[str, Outcome] | None, *, body: bool) -> list[WorkItem]:
    """The batch's work items, planned once for its cache key and its body (see `Plans`)."""
    return env.plans.of_batch("generate", batch, (env, batch, assemblies),
                              lambda: generation_items(env, batch, assemblies), body=body)  # fmt: skip


@task(**stage_task_options("generate", _identities))
def generate_outputs(
    env: RunEnvironment, batch: Batch, assemblies: dict[str, Outcome] | None = None
) -> dict[str, Outcome]:
    """Generate each ready case of the batch; earlier failures pass through."""
    items = _planned(env, batch, assemblies, body=True)
    done = run_cached(env, "generate", items, use_cache=not env.request.bypass_generation_cache)
    return {
        case_id: done.get(case_id)
        or passthrough(None if assemblies is None else assemblies.get(case_id))
        for case_id in batch.case_ids
    }
