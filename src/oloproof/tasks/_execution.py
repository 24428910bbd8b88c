"""The execution cache: one record per case under the whole system's identity.

A plain re-run with nothing changed finds every case here and runs no stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.records import (
    AssemblyRecord,
    ExecutionRecord,
    GenerationRecord,
    RetrievalRecord,
    StageRecord,
    StoredObject,
)
from oloproof.stages._batch import Batch
from oloproof.stages._identity import execution_key
from oloproof.tasks._agent import agent_passages
from oloproof.tasks._cached import Outcome, is_hit
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._results import CaseResult
from oloproof.tasks._retry import retry_io_only

__all__ = ["CachedExecution", "lookup_executions", "record_executions"]

R = TypeVar("R", bound=StageRecord)


@dataclass(frozen=True, slots=True)
class CachedExecution:
    """A case's execution found in the execution cache, and the key it was found under."""

    key: str
    """The execution identity."""
    record: ExecutionRecord
    """What the cache kept of the case."""


def _uses_execution_cache(env: RunEnvironment) -> bool:
    # Diagnosis variants change what a stage sees without changing the system.
    ctx = env.request
    if env.system.config.kind == "recorded":  # nothing executes, so nothing is cached
        return False
    if ctx.stages == "retrieve":  # an execution without its generation is no execution to reuse
        return False
    return ctx.context_source == "assembled" and ctx.replay_from is None and not ctx.bypass_generation_cache


@task(cache_policy=NO_CACHE, name="lookup-executions", task_run_name="lookup executions ({batch.label})")
def lookup_executions(env: RunEnvironment, batch: Batch) -> dict[str, CachedExecution]:
    """Return the cached execution of each case of the batch that has one."""
    if not _uses_execution_cache(env):
        return {}
    system = env.system.config
    keys = {case_id: execution_key(system, env.cases[case_id].input, batch.repeat, env.retrieve_repeats) for case_id in batch.case_ids}
    found = env.store.get_records("execute", sorted(set(keys.values())))
    env.progress("execute", sum(1 for key in keys.values() if key in found))
    records = {key: ExecutionRecord.model_validate(found[key]) for key in set(keys.values()) if key in found}
    return {
        case_id: CachedExecution(key=key, record=records[key])
        for case_id, key in keys.items()
        if key in records
    }


def _ok_record(outcome: Outcome | None, kind: type[R]) -> R | None:
    return outcome.record_of(kind) if outcome is not None and outcome.ok else None


def _merge(
    case_id: str, key: str, stages: dict[str, Outcome | None], run_id: str, context_tools: tuple[str, ...] | None,
    repeat: int = 0,
) -> CaseResult:
    """One case's result from its stage outcomes; ``context_tools`` names an agent's
    (``None`` for other systems), whose results are its retrieval and its context."""
    retrieved, assembled, generated = stages["retrieve"], stages["assemble"], stages["generate"]
    failed = next((o for o in (retrieved, assembled, generated) if o is not None and not o.ok), None)
    retrieval = _ok_record(retrieved, RetrievalRecord)
    assembly = _ok_record(assembled, AssemblyRecord)
    generation = _ok_record(generated, GenerationRecord)
    tally = generation.tools if generation is not None and not is_hit(generated, run_id) else None
    candidates = retrieval.candidates if retrieval else None
    context, dropped = (assembly.context, assembly.dropped) if assembly else (None, None)
    if context_tools is not None and generation is not None:
        seen = agent_passages(generation.output_items, context_tools)
        if seen is not None:
            candidates, context, dropped = seen[0], seen[1], []
    return CaseResult(
        case_id=case_id,
        status="missing" if failed else "ok",
        execution_key=key,
        error_stage=failed.error_stage if failed else None,
        error=failed.error if failed else None,
        retrieve_hit=is_hit(retrieved, run_id),
        generate_hit=is_hit(generated, run_id),
        retrieve_ran=retrieved is not None
        and retrieved.error_stage in (None, "retrieve")
        and not (retrieval is not None and retrieval.replayed),
        generate_ran=generated is not None and generated.error_stage in (None, "generate"),
        retrieve_ms=retrieved.ms if retrieved else None,
        generate_ms=generated.ms if generated else None,
        retrieval_key=retrieved.key if retrieved else None,
        assembly_key=assembled.key if assembled else None,
        generation_key=generated.key if generated else None,
        query=retrieval.query if retrieval else None,
        candidates=candidates,
        context=context,
        dropped=dropped,
        output=generation.output if generation else None,
        output_items=generation.output_items if generation else None,
        tool_hits=tally.hits if tally else 0,
        tool_misses=tally.misses if tally else 0,
        repeat=repeat,
    )


@task(cache_policy=NO_CACHE, name="record-executions", task_run_name="record executions ({batch.label})",
    retries=2,
    retry_condition_fn=retry_io_only,
)
def record_executions(
    env: RunEnvironment,
    batch: Batch,
    cached: dict[str, CachedExecution],
    retrievals: dict[str, Outcome] | None,
    assemblies: dict[str, Outcome] | None,
    generations: dict[str, Outcome] | None,
) -> dict[str, CaseResult]:
    """Merge each case's stage outcomes and record successful executions."""
    system = env.system.config
    tools = env.system.context_tools if system.kind == "agent" else None
    results: dict[str, CaseResult] = {}
    executions: dict[str, StoredObject] = {}
    for case_id in batch.case_ids:
        if case_id in cached:
            found = cached[case_id]
            results[case_id] = CaseResult.of_execution(case_id, found.key, found.record, batch.repeat)
            continue
        key = execution_key(system, env.cases[case_id].input, batch.repeat, env.retrieve_repeats)
        stages = {
            name: (None if outcomes is None else outcomes.get(case_id))
            for name, outcomes in (("retrieve", retrievals), ("assemble", assemblies), ("generate", generations))
        }
        results[case_id] = result = _merge(case_id, key, stages, env.run_id, tools, batch.repeat)
        if result.ok and _uses_execution_cache(env):
            executions[key] = result.execution().stored()
    env.store.put_records("execute", executions)
    return results
