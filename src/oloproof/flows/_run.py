"""The run flow: orchestrates the stage tasks over batches of cases.

The flow only orchestrates: every computation and every write is a task.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from prefect import flow
from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture, as_completed
from prefect.runtime import flow_run
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import opaque, quote

from oloproof._ids import new_run_id
from oloproof.flows._runner import THREAD_WORKERS
from oloproof.flows._storage import prefect_result_storage
from oloproof.records import EvaluatorEntry, RunManifest, RunVariant
from oloproof.tasks import (
    Batch,
    RunContext,
    RunEnvironment,
    assemble_contexts,
    environment,
    generate_outputs,
    judge_cases,
    lookup_executions,
    plan_batches,
    publish_report,
    record_executions,
    release_environment,
    retrieve_passages,
    summarize_run,
    write_run,
)
from oloproof.tasks._identity import content_hash

__all__ = ["evaluate", "run_name"]


def run_name(env: RunEnvironment) -> str:
    """``run <system> <version> · <n> cases``, as the Prefect UI shows it."""
    config = env.system.config
    return f"run {config.name} {config.version} · {len(env.cases)} cases"


def run_tags(env: RunEnvironment) -> list[str]:
    """Tags a person can filter by in the Prefect UI."""
    config = env.system.config
    tags = ["oloproof", f"system:{config.name}", f"version:{config.version}"]
    if config.index_version is not None:
        tags.append(f"index_version:{config.index_version}")
    return tags


def _label_flow_run(name: str | None, tags: list[str]) -> None:
    # Name and tags need the validated project, which exists only once the flow runs.
    flow_run_id = flow_run.get_id()
    if flow_run_id is None:
        return
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        current = client.read_flow_run(flow_run_id)
        merged = sorted(set(current.tags or []) | set(tags))
        client.update_flow_run(flow_run_id, name=name or current.name, tags=merged)


def _context(params: dict[str, Any]) -> RunContext:
    overrides = list(params.get("overrides") or [])
    if params.get("index_version"):
        overrides.append(f"system.rag.index_version={params['index_version']}")
    return RunContext(
        run_id=params.get("run_id") or "",
        project_dir=str(params.get("project") or "."),
        overrides=tuple(overrides),
        results=params.get("results") or None,
        replay_from=params.get("replay_from"),
        context_source=params.get("context_source") or "assembled",
        reranker=params.get("reranker"),
        bypass_generation_cache=bool(params.get("bypass_generation_cache")),
        case_ids=tuple(params["case_ids"]) if params.get("case_ids") is not None else None,
        parent=params.get("parent"),
    )


def _stage_tasks(env: RunEnvironment) -> dict[str, Any]:
    storage = prefect_result_storage(env.store, env.project.config.storage_options)
    return {
        task.name: task.with_options(result_storage=storage)
        for task in (retrieve_passages, assemble_contexts, generate_outputs, judge_cases)
    }


def _submit_batch(
    context: RunContext, env: RunEnvironment, batch: Batch, cached: dict[str, Any], tasks: dict[str, Any]
) -> tuple[list[PrefectFuture[Any]], PrefectFuture[Any]]:
    todo = Batch(batch.index, tuple(c for c in batch.case_ids if c not in cached))
    retrieved = assembled = generated = None
    if todo.case_ids:
        if env.system.config.kind == "rag":
            retrieved = tasks["retrieve"].submit(context, todo)
            assembled = tasks["assemble"].submit(context, todo, _opaque(retrieved))
        generated = tasks["generate"].submit(context, todo, _opaque(assembled))
    stages = [future for future in (retrieved, assembled, generated) if future is not None]
    return stages, record_executions.submit(
        context, batch, _quote(cached), _opaque(retrieved), _opaque(assembled), _opaque(generated)
    )


def _threads() -> bool:
    context = FlowRunContext.get()
    return context is not None and isinstance(context.task_runner, ThreadPoolTaskRunner)


def _opaque(future: PrefectFuture[Any] | None) -> Any:
    # Resolve the upstream result without Prefect walking (and copying) every
    # nested value of it: batch results hold thousands of passages. Only Prefect's
    # own thread runner unwraps these annotations; Dask resolves arguments itself.
    if future is None or not _threads():
        return future
    return opaque(future)


def _quote(value: Any) -> Any:
    # Pass a materialized value without Prefect walking every nested value of it.
    return quote(value) if _threads() else value


def _raise_first_failure(env: RunEnvironment, futures: list[PrefectFuture[Any]]) -> None:
    # Futures are watched as they finish, not in order: the first failure closes
    # the run's executor, which cancels every other batch's pending calls so they
    # return at once, and is then the one error reported.
    for future in as_completed(futures):
        future.wait()  # settles the future's own final state (the API's may lag behind)
        if future.state.is_failed() or future.state.is_crashed():
            env.executor.close()
            future.result()


def _manifest(env: RunEnvironment, summary: dict[str, Any], started: datetime) -> RunManifest:
    ctx, config = env.context, env.project.config
    return RunManifest(
        run_id=ctx.run_id,
        status="complete",
        created_at=started,
        finished_at=datetime.now(UTC),
        project=str(env.project.directory),
        system=env.system_dict,
        system_name=env.system.config.name,
        system_version=env.system.config.version,
        index_version=env.system.config.index_version,
        dataset=env.dataset.url,
        dataset_sha256=env.dataset.sha256,
        case_count=len(env.cases),
        evaluators=[
            EvaluatorEntry(criterion=e.criterion, kind=e.kind, llm_judge=e.is_llm_judge,
                           spec=e.spec(), spec_hash=content_hash(e.spec()))
            for e in env.evaluators
        ],
        slices=list(config.slices),
        min_slice_support=config.min_slice_support,
        confidence=config.confidence,
        cache=summary["cache"],
        variant=RunVariant(context_source=ctx.context_source, replay_from=ctx.replay_from,
                           reranker=ctx.reranker, bypass_generation_cache=ctx.bypass_generation_cache,
                           case_ids=list(ctx.case_ids) if ctx.case_ids is not None else None),
        parent=ctx.parent,
    )


@flow(
    name="oloproof-run",
    flow_run_name="run {project}",
    validate_parameters=False,
    task_runner=ThreadPoolTaskRunner(max_workers=THREAD_WORKERS),
)
def evaluate(
    project: str = ".",
    overrides: list[str] | None = None,
    index_version: str | None = None,
    results: str | None = None,
    run_id: str | None = None,
    replay_from: str | None = None,
    context_source: str = "assembled",
    reranker: str | None = None,
    bypass_generation_cache: bool = False,
    case_ids: list[str] | None = None,
    parent: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Evaluate a project: run every stage over every case, judge, and record the run.

    Args:
        project: The project folder (holding ``oloproof.yaml``).
        overrides: ``key.path=value`` settings applied over the file.
        index_version: Shorthand for ``system.rag.index_version=...`` (index events).
        results: Shorthand for ``results=...``: the store URL.
        run_id: The id to record the run under; a new ``run_<ULID>`` when absent.
        replay_from: Replay this run's recorded retrievals instead of retrieving.
        context_source: ``assembled``, or ``gold`` to generate from ``expected.gold_context``.
        reranker: ``module:function`` applied to replayed candidates.
        bypass_generation_cache: Re-execute generation even when cached.
        case_ids: Run only these cases (diagnosis child runs).
        parent: What a child run was run for (recorded in its manifest).

    Returns:
        The run manifest with its ``metrics``; per-case records are in the store.
    """
    started = datetime.now(UTC)
    params = dict(locals())
    params["run_id"] = run_id or new_run_id()
    context = _context(params)
    env = environment(context)
    try:
        # Child runs keep the name their parent flow gave them.
        _label_flow_run(run_name(env) if context.parent is None else None, run_tags(env))
        tasks = _stage_tasks(env)
        batches = plan_batches(list(env.cases), env.project.config.batch_size)
        lookups = [lookup_executions.submit(context, batch) for batch in batches]
        submitted = [_submit_batch(context, env, b, f.result(), tasks) for b, f in zip(batches, lookups)]
        merged = [record for _, record in submitted]
        judged = [tasks["judge"].submit(context, b, _opaque(m)) for b, m in zip(batches, merged)]
        _raise_first_failure(env, [future for stages, _ in submitted for future in stages] + merged + judged)
        case_results = [r for m in merged for r in m.result().values()]
        judgments = [row for future in judged for rows in future.result().values() for row in rows]
        del submitted, merged, judged  # the merged results are all that is still needed
        summary = summarize_run.submit(context, _quote(case_results), _quote(judgments)).result()
        manifest = _manifest(env, summary, started).model_dump(mode="json")
        write_run.submit(context, manifest, _quote(case_results), _quote(summary)).result()
        publish_report.submit(context, manifest, _quote(summary["metrics"])).result()
        # Per-case data stays in the store: Prefect walks a flow's return value, and
        # at 100,000 cases that walk alone would take many seconds.
        return {**manifest, "metrics": summary["metrics"]}
    finally:
        release_environment(context.run_id)
