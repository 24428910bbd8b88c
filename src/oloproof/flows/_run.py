"""The run flow: orchestrates the stage tasks over batches of cases.

The flow only orchestrates: every computation and every write is a task, and
every task is handed the run's `RunEnvironment` as an argument.

Two flows share one body, `run_stages`: `evaluate`, the entry point of
deployments, turns its parameters into a `RunRequest` and prepares it itself;
`prepared_flow` runs an environment its caller already prepared (the
CLI validates everything before a flow starts, and a diagnosis prepares its
child runs). That flow is bound to the environment, so the system instance, the
store and any credentials travel by reference, and Prefect records only the
request's public parameters.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast
from uuid import UUID

from prefect import Flow, flow, get_run_logger
from prefect.runtime import flow_run
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner
from typing_extensions import TypedDict

from oloproof._ids import new_run_id
from oloproof.config import parse_overrides
from oloproof.flows._batches import quoted, run_batches
from oloproof.flows._collector import collecting_less
from oloproof.flows._events import delivering_events
from oloproof.flows._orphans import crash_orphaned_runs, project_tag, where_running
from oloproof.flows._publish import publish_run_pages
from oloproof.flows._runner import THREAD_WORKERS
from oloproof.judging import judge_id
from oloproof.records import (
    EvaluatorEntry,
    MetricSummary,
    RunManifest,
    RunParent,
    RunReport,
    RunSweep,
    RunVariant,
)
from oloproof.report import render_run
from oloproof.tasks import (
    RunEnvironment,
    RunRequest,
    RunSummary,
    prepare_environment,
    publish_report,
    release_workers,
    summarize_run,
    write_run,
)

__all__ = ["PreparedRun", "evaluate", "prepared_flow", "run_name", "run_stages", "run_tags"]


def run_name(env: RunEnvironment) -> str:
    """``run <system> <version> · <n> cases · config <hash>``, as the Prefect UI shows it.

    The hash (`RunEnvironment.config_hash`) tells apart runs whose settings differ,
    a ``--set`` override among them.
    """
    config = env.system.config
    cases = "1 case" if len(env.cases) == 1 else f"{len(env.cases)} cases"
    return f"run {config.name} {config.version} · {cases} · config {env.config_hash}"


def run_tags(env: RunEnvironment) -> list[str]:
    """Tags a person can filter by in the Prefect UI: the run id, the system and its settings."""
    config = env.system.config
    tags = ["oloproof", f"run:{env.run_id}", f"system:{config.name}", f"version:{config.version}"]
    if config.index_version is not None:
        tags.append(f"index_version:{config.index_version}")
    tags.append(f"config:{env.config_hash}")
    return tags


def _label_flow_run(tags: list[str], project: str) -> None:
    # Tags need the validated project; the flow run was named when it was created.
    flow_run_id = flow_run.get_id()
    if flow_run_id is None:
        return
    from prefect.client.orchestration import get_client

    tag = project_tag(project)
    run_uuid = UUID(str(flow_run_id))
    with get_client(sync_client=True) as client:
        current = client.read_flow_run(run_uuid)
        merged = sorted(set(current.tags or []) | set(tags) | {tag})
        client.update_flow_run(run_uuid, tags=merged, infrastructure_pid=where_running())
        crash_orphaned_runs(client, tag, run_uuid)


def _stages_of(env: RunEnvironment) -> str:
    return {"rag": "retrieve, assemble, generate, judge", "plain": "generate, judge",
            "agent": "generate (the agent's runs, each tool call cached), judge",
            "recorded": "judge"}[env.system.config.kind]  # fmt: skip


def _log_report(manifest: RunManifest, metrics: list[MetricSummary]) -> None:
    # The run's logs end with what the command prints, less the exploratory slices.
    overall = [row for row in metrics if row["slice"] is None]
    get_run_logger().info("\n".join(render_run({**manifest.model_dump(mode="json"), "metrics": overall})))


def _metric_of(evaluator: Any, criterion: str) -> str | None:
    if len(evaluator.outputs()) == 1:
        return None
    return criterion.removeprefix(f"{evaluator.criterion}.")


def _manifest(env: RunEnvironment, summary: RunSummary, started: datetime) -> RunManifest:
    ctx, config = env.request, env.project.config
    return RunManifest(
        run_id=ctx.run_id,
        kind=ctx.kind,
        status="complete",
        config_hash=env.config_hash,
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
        rows_named_by_line=env.dataset.named_by_line,
        evaluators=[
            EvaluatorEntry(criterion=o.criterion, metric=_metric_of(e, o.criterion), kind=o.metric_kind,
                           llm_judge=e.is_llm_judge, spec=e.spec(), spec_hash=e.spec_hash,
                           judge=e.judge_identity(), judge_id=judge_id(e.judge_identity()))
            for e in env.evaluators
            for o in e.outputs()
        ],
        slices=list(config.slices),
        min_slice_support=config.min_slice_support,
        confidence=config.confidence,
        cache=summary.cache,
        judges=summary.judges,
        variant=RunVariant(context_source=ctx.context_source, replay_from=ctx.replay_from,
                           reranker=ctx.reranker, bypass_generation_cache=ctx.bypass_generation_cache,
                           case_ids=list(ctx.case_ids) if ctx.case_ids is not None else None,
                           stages=ctx.stages),
        parent=RunParent.model_validate(ctx.parent) if ctx.parent is not None else None,
        sweep=RunSweep.model_validate(ctx.sweep) if ctx.sweep is not None else None,
        repeats=env.repeats,
        judge_repeats=config.judge_repeats,
        retrieve_repeats=env.retrieve_repeats,
    )


def run_stages(env: RunEnvironment) -> RunReport:
    """Run every stage over every case of ``env``, judge, and record the run.

    The body of both run flows: it must run inside a flow run.

    Returns:
        The run manifest with its ``metrics``; per-case records are in the store.
    """
    started = datetime.now(UTC)
    with collecting_less():
        return _run_stages(env, started)


def _run_stages(env: RunEnvironment, started: datetime) -> RunReport:
    try:
        _label_flow_run(run_tags(env), str(env.project.directory))
        get_run_logger().info("Run %s: %d cases of %s %s (config %s); stages: %s", env.run_id, len(env.cases),
                              env.system.config.name, env.system.config.version, env.config_hash,
                              _stages_of(env))  # fmt: skip
        parts = run_batches(env)
        summary = summarize_run.submit(quoted(env), quoted(parts)).result()
        manifest = _manifest(env, summary, started)
        write_run.submit(quoted(env), manifest, quoted(parts), quoted(summary.metrics)).result()
        del parts  # its chunks and briefs are written: let them go before the report page is built
        publish_report.submit(manifest, quoted(summary.metrics), env.store_arguments).result()
        publish_run_pages(env.store, manifest, summary.metrics)
        _log_report(manifest, summary.metrics)
        # Per-case data stays in the store: Prefect walks a flow's return value, and
        # at 100,000 cases that walk alone would take many seconds. The flow's result is
        # the manifest's JSON: what run.json holds, and what Prefect records.
        return cast("RunReport", {**manifest.model_dump(mode="json"), "metrics": summary.metrics})
    except BaseException:
        # Stop every other batch's pending calls now: the task runner joins its
        # threads before this flow returns, and a signal must not wait for them.
        env.close()
        raise
    finally:
        release_workers(env.run_id)


class _FlowOptions(TypedDict):
    """The options of Prefect's ``flow`` decorator that both run flows share."""

    name: str
    validate_parameters: bool
    task_runner: TaskRunner[Any]


_RUN_FLOW: _FlowOptions = {
    "name": "oloproof-run",
    "validate_parameters": False,
    "task_runner": ThreadPoolTaskRunner(max_workers=THREAD_WORKERS),
}
"""Both run flows are one flow to Prefect and the UI."""

_PREPARED: dict[str, RunEnvironment] = {}
"""Environments `evaluate` prepared to name its flow runs, by flow run id, until each run's body takes its own."""


def _evaluate_request(project: str = ".", overrides: list[str] | None = None, index_version: str | None = None,
                      results: str | None = None, run_id: str | None = None) -> RunRequest:
    """`evaluate`'s parameters as the request they define."""
    return RunRequest(run_id=run_id or new_run_id(), project=str(project or "."),
                      settings=settings_of(overrides, index_version), results=results or None)  # fmt: skip


def _evaluate_run_name() -> str:
    """The name of an `evaluate` flow run, given as Prefect creates it: ``run_name``.

    Prefect names a flow run before its first log line, and only a prepared run
    knows its system and cases: the run is prepared here and its body takes the
    environment. A request that does not prepare is named ``run <project>``; the
    body then fails the run with the error.
    """
    parameters = flow_run.get_parameters()
    try:
        env = prepare_environment(_evaluate_request(**parameters))
    except Exception:  # noqa: BLE001 - the body prepares it again and fails the run with it
        return f"run {parameters.get('project') or '.'}"
    _PREPARED[str(flow_run.get_id())] = env
    return run_name(env)


def settings_of(overrides: list[str] | None, index_version: str | None) -> dict[str, Any]:  # YAML values, dates too: not JSON
    """A deployment's ``overrides`` (``key=value`` text) and ``index_version`` as settings."""
    settings = parse_overrides(list(overrides or []))
    if index_version:
        settings["system.rag.index_version"] = str(index_version)
    return settings


@flow(**_RUN_FLOW, flow_run_name=_evaluate_run_name)
def evaluate(
    project: str = ".",
    overrides: list[str] | None = None,
    index_version: str | None = None,
    results: str | None = None,
    run_id: str | None = None,
) -> RunReport:
    """Evaluate a project: run every stage over every case, judge, and record the run.

    The entry point of deployments and index events.

    Args:
        project: The project folder (holding ``oloproof.yaml``).
        overrides: ``key.path=value`` settings applied over the file.
        index_version: Sets ``system.rag.index_version`` (index events).
        results: The results store URL; the project's when absent.
        run_id: The id to record the run under; a new ``run_<ULID>`` when absent.

    Returns:
        The run manifest with its ``metrics``; per-case records are in the store.
    """
    env = _PREPARED.pop(str(flow_run.get_id()), None) or prepare_environment(
        _evaluate_request(project, overrides, index_version, results, run_id)
    )
    try:
        return run_stages(env)
    finally:
        env.close()


def prepared_flow(env: RunEnvironment) -> Flow[..., RunReport]:
    """The flow that evaluates ``env``, a run prepared by its caller (the CLI, a diagnosis, a sweep).

    The flow's parameters are the run's request as Prefect records it
    (``RunRequest.public``, credentials left out); its body runs ``env``. A flow made
    for each run, not a method flow: Prefect binds a method flow's instance on the one
    function all instances share, so two runs in flight at once would both run the one
    bound last.
    """

    def evaluate(
        run_id: str,
        project: str,
        settings: dict[str, Any],  # the flow's parameter schema, as Prefect records it: a JSON object
        results: str | None = None,
        context_source: str = "assembled",
        replay_from: str | None = None,
        reranker: str | None = None,
        bypass_generation_cache: bool = False,
        case_ids: list[str] | None = None,
        parent: dict[str, str] | None = None,
        kind: str = "run",
        stages: str = "all",
        sweep: dict[str, Any] | None = None,
    ) -> RunReport:
        """Evaluate the prepared run.

        Returns:
            The run manifest with its ``metrics``; per-case records are in the store.
        """
        return run_stages(env)

    return flow(**_RUN_FLOW, flow_run_name="run {project}")(evaluate)  # named by `PreparedRun.__call__`


class PreparedRun:
    """A validated, prepared run and the flow that evaluates it (`prepared_flow`).

    Args:
        env: The prepared environment; its owner closes it.
    """

    def __init__(self, env: RunEnvironment) -> None:
        self.env = env
        self.evaluate = prepared_flow(env)

    def __call__(self, **flow_options: Any) -> RunReport:
        """Run the flow (``flow_options`` as for ``Flow.with_options``); returns once its
        events are delivered.

        The flow run is created under `run_name`, or the ``flow_run_name`` given (a
        diagnosis names its child runs).
        """
        name = run_name(self.env)
        bound = self.evaluate.with_options(**{"flow_run_name": lambda: name, **flow_options})
        return delivering_events(lambda: bound(**self.env.request.public()))
