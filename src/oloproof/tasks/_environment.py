"""What one run is: its validated request, and the live objects it runs with.

A `RunRequest` is built once (by the CLI, a deployment's parameters or a
diagnosis) and `prepare_environment` turns it into a `RunEnvironment`: the
project, the system instance, the cases, the store and the call executor.
Tasks receive the environment as an argument. It pickles as its request, so a
Dask worker prepares its own from the project folder instead of unpickling
user objects (once per worker process and request), and closes it and forgets it
when the flow run ends (`release_workers`): a long-lived cluster runs many flows.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from oloproof._exceptions import DatasetError, ProviderConfigError, UsageError
from oloproof._json import content_hash
from oloproof._secrets import public_settings
from oloproof._system._resolve import SystemHandle, import_callable, resolve_system
from oloproof.config import Project, load_project
from oloproof.dataset import Case, Dataset, load_cases
from oloproof.evaluators import Evaluator, JudgeContext
from oloproof.providers import ProviderPool
from oloproof.records import RecordedRetrieval, RunKind
from oloproof.store import ResultsStore
from oloproof.tasks._executor import StageExecutor
from oloproof.tasks._flights import Flights
from oloproof.tasks._group import RunGroup
from oloproof.tasks._inputs import build_project_evaluators, check_inputs
from oloproof.tasks._plans import Plans
from oloproof.tasks._replay import load_recorded_retrievals

__all__ = [
    "ProgressHook",
    "RunEnvironment",
    "RunRequest",
    "prepare_environment",
    "release_worker_environments",
    "release_workers",
    "worker_environment_count",
]

ProgressHook = Callable[[str, int], None]
"""Told ``(stage, count)`` whenever user calls complete."""


class RunRequest(BaseModel):
    """Everything that defines one run, validated once and passed as it is."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_id: str
    """The id the run is recorded under (``run_<ULID>``)."""

    project: str
    """The project folder, holding ``oloproof.yaml``."""

    # YAML values, dates among them: not JSON until `public` dumps them for Prefect.
    settings: dict[str, Any] = Field(default_factory=dict)
    """``dotted.key: value`` settings applied over ``oloproof.yaml`` (``--set``)."""

    results: str | None = None
    """The results store URL (``--results``); the project's when absent."""

    context_source: Literal["assembled", "gold"] = "assembled"
    """``assembled`` (normal) or ``gold`` (``expected.gold_context`` replaces the context)."""

    replay_from: str | None = None
    """A parent run whose recorded retrievals are replayed (no retriever calls)."""

    reranker: str | None = None
    """``module:function`` re-ranking replayed candidates before assembly."""

    bypass_generation_cache: bool = False
    """Re-execute generation even when a cached record exists (diagnosis controls)."""

    case_ids: tuple[str, ...] | None = None
    """Run only these cases of the dataset (diagnosis child runs)."""

    parent: dict[str, str] | None = None
    """What a child run was run for: ``{"run_id", "diagnosis_request", "role"}``."""

    kind: RunKind = "run"
    """What the run is made for, as its manifest records it: ``run`` for a user's run,
    ``diagnosis_child`` for a diagnosis's re-execution, ``sweep_child`` for a sweep's setting."""

    stages: Literal["all", "retrieve"] = "all"
    """``all``, or ``retrieve``: retrieval alone, no generator and no judge, scored by the
    evaluators that read only the retrieval (retrieval metrics, ``document_retrieval``)."""

    sweep: dict[str, Any] | None = None
    """The sweep and setting a ``sweep_child`` run answers: ``{"sweep_id", "setting", "settings"}``."""

    def public(self) -> dict[str, Any]:  # a flow's parameters, as Prefect records them
        """The request as JSON parameters, without credentials (what Prefect records)."""
        data = self.model_dump(mode="json")
        data["settings"] = public_settings(self.settings)
        return data


@dataclass(eq=False)
class RunEnvironment:
    """The live objects behind a `RunRequest`.

    Pickles as its request (see the module docstring): user objects, the
    executor and credentials never travel.
    """

    request: RunRequest
    project: Project
    system: SystemHandle
    dataset: Dataset
    evaluators: list[Evaluator]
    store: ResultsStore
    executor: StageExecutor
    cases: dict[str, Case]
    judges: JudgeContext = field(default_factory=JudgeContext)
    """What judge calls share: the run's provider pool."""
    recorded: dict[str, RecordedRetrieval] | None = None
    """The parent run's recorded retrievals, when replaying."""
    reranker: Callable[..., Any] | None = None
    """The re-ranker applied to replayed candidates."""
    on_progress: ProgressHook | None = None
    """Told of completed user calls (the CLI's progress bar)."""
    flights: Flights = field(default_factory=Flights)
    """The calls in flight that equal ones wait for instead of calling: the run's
    own, or one shared by the runs given the same."""
    group: RunGroup | None = None
    """The runs executed at once with this one (a sweep's settings), sharing its
    limiter, flights and providers; ``None``: the run has its own."""
    plans: Plans = field(default_factory=Plans)
    """Each stage task's plan of its batch, made for its cache key and taken by its body."""

    @property
    def run_id(self) -> str:
        return self.request.run_id

    @property
    def system_dict(self) -> dict[str, JsonValue]:
        return self.system.config.model_dump(mode="json")

    @property
    def repeats(self) -> int:
        """How many times each case is generated: the project's ``repeats``, or 1 for a
        system that says it is deterministic and for runs that generate nothing."""
        settings = self.project.config.system
        if settings is not None and settings.deterministic:
            return 1
        if self.system.config.kind == "recorded":
            return 1
        if self.request.stages == "retrieve" and not self.project.config.retrieve_repeats:
            return 1
        return self.project.config.repeats

    @property
    def retrieve_repeats(self) -> bool:
        """Whether each repeat retrieves afresh (``retrieve_repeats``, with more than one repeat)."""
        return self.project.config.retrieve_repeats and self.repeats > 1

    @property
    def config_hash(self) -> str:
        """Eight hex digits of every setting of the run: the project's configuration, ``--set``
        overrides applied, with the system's resolved settings. Equal settings, equal hash."""
        settings = {**self.project.config.model_dump(mode="json"), "system": self.system_dict}
        return content_hash(settings)[:8]

    @property
    def store_arguments(self) -> str:
        """What a hint in the run's logs or artifact appends to find this store from anywhere:
        `` --project <the project's folder>``, or `` --results URL`` when the run was pointed
        at another store than its project's."""
        from oloproof._locate import store_arguments

        overridden = self.request.results is not None or "results" in self.request.settings
        return store_arguments(self.store.url if overridden else None, str(self.project.directory))

    def progress(self, stage: str, count: int = 1) -> None:
        if self.on_progress is not None:
            self.on_progress(stage, count)

    def close(self) -> None:
        """Close the providers' clients, then stop the run's calls (pending ones are
        cancelled); idempotent. A run of a group stops the group: its runs share the
        calls, and one that fails fails them all."""
        if self.group is not None:
            self.group.close()
            return
        if self.judges.providers is not None:
            self.executor.run_coroutine(self.judges.providers.aclose())
        self.executor.close()

    def __reduce__(self) -> tuple[Any, ...]:
        return _prepared_in_worker, (self.request,)


def retrieval_only(evaluators: list[Evaluator], kind: str) -> list[Evaluator]:
    """The evaluators of a retrieval-only run: those that read the retrieval and not the output.

    Raises:
        UsageError: The system has no retrieval stage, or no evaluator reads only the retrieval.
    """
    if kind != "rag":
        raise UsageError("a retrieval-only run (--stages retrieve) needs a @rag_system: it runs retrieve alone",
                         field="--stages")  # fmt: skip
    kept = [e for e in evaluators if e.needs_retrieval and not e.reads_output]
    if not kept:
        raise UsageError("no evaluator reads only the retrieval: a retrieval-only run scores the retrieval "
                         "metrics (hit_rate, ndcg, ...) and document_retrieval", field="--stages")  # fmt: skip
    return kept


def prepare_environment(
    request: RunRequest,
    *,
    on_progress: ProgressHook | None = None,
    flights: Flights | None = None,
    group: RunGroup | None = None,
) -> RunEnvironment:
    """Validate everything a run needs; raises before anything is written.

    ``flights``: shared by runs of one process whose equal calls in flight at once
    should be made once; each run has its own when it is not given. ``group``: the
    runs executed at once with this one, sharing its limiter, flights and providers.
    """
    project = load_project(request.project, request.settings, results=request.results)
    system = resolve_system(project)
    evaluators, locate = build_project_evaluators(project, system)
    if request.stages == "retrieve":
        evaluators = retrieval_only(evaluators, system.config.kind)
    dataset = load_cases(project.dataset_url, project.config.storage_options,
                         recorded=system.config.kind == "recorded")  # fmt: skip
    check_inputs(evaluators, dataset, locate)
    _check_repeats(project, system.config.kind, evaluators)
    judges = _judge_context(project, evaluators, group)
    store = ResultsStore(project.results_url, project.config.storage_options)
    cases = {case.id: case for case in dataset.cases}
    if request.case_ids is not None:
        unknown = sorted(set(request.case_ids) - set(cases))
        if unknown:
            raise DatasetError(
                f"no case with id {unknown[0]!r} in the dataset", path=dataset.url, field="id"
            )
        wanted = set(request.case_ids)
        cases = {case_id: case for case_id, case in cases.items() if case_id in wanted}
    recorded = reranker = None
    if request.replay_from is not None:
        recorded = load_recorded_retrievals(store, request.replay_from)
    if request.reranker is not None:
        reranker = import_callable(request.reranker, project_dir=project.directory, option="--reranker")
    return RunEnvironment(
        request=request,
        project=project,
        system=system,
        dataset=dataset,
        evaluators=evaluators,
        store=store,
        executor=group.executor if group is not None else StageExecutor(project.config.max_concurrency,
                                                                          project.config.timeouts.seconds()),
        cases=cases,
        judges=judges,
        recorded=recorded,
        reranker=reranker,
        on_progress=on_progress,
        flights=group.flights if group is not None else flights if flights is not None else Flights(),
        group=group,
    )


def _check_repeats(project: Project, kind: str, evaluators: list[Evaluator]) -> None:
    """Repeats only where there is something to sample again.

    Raises:
        ConfigError: ``repeats`` over recorded data (nothing executes), or
            ``judge_repeats`` with no LLM judge among the evaluators.
    """
    config = project.config
    if config.repeats > 1 and kind == "recorded":
        raise project.error(f"repeats: {config.repeats} over recorded data: nothing is executed again, each row is "
                            "judged as it was recorded (leave repeats out, or use judge_repeats)", ("repeats",))  # fmt: skip
    if config.retrieve_repeats and kind != "rag":
        raise project.error(f"retrieve_repeats: true but the system is {'an' if kind == 'agent' else 'a'} {kind} "
                            "system: only a @rag_system's retrieval is a stage of its own to repeat",
                            ("retrieve_repeats",))  # fmt: skip
    if config.judge_repeats > 1 and not any(e.is_llm_judge for e in evaluators):
        raise project.error(f"judge_repeats: {config.judge_repeats} but no evaluator is an LLM judge: the others "
                            "give the same verdict every time", ("judge_repeats",))  # fmt: skip


def _judge_context(project: Project, evaluators: list[Evaluator], group: RunGroup | None) -> JudgeContext:
    """The providers the judges name, checked before anything runs: every key
    variable set, every endpoint reachable. Clients are made later, on the loop;
    the runs of a group with the same providers share one pool, and its limits."""
    names = sorted({name for evaluator in evaluators for name in evaluator.providers()})
    if not names:
        return JudgeContext()
    configs = project.config.providers
    pool = group.pool(configs) if group is not None else ProviderPool(configs, os.environ)
    try:
        pool.check(names)
        pool.preflight(names)
    except ProviderConfigError as exc:
        location = tuple(exc.field.split(".")) if exc.field else ("providers",)
        at = project.error(exc.message, location)
        raise ProviderConfigError(at.message, path=at.path, line=at.line, field=at.field) from None
    return JudgeContext(providers=pool)


_WORKER_LOCK = threading.Lock()
_WORKER_ENVIRONMENTS: dict[str, RunEnvironment] = {}


def _prepared_in_worker(request: RunRequest) -> RunEnvironment:
    # Unpickling side only: each worker process prepares a run once, however
    # many of its tasks arrive.
    key = request.model_dump_json()
    with _WORKER_LOCK:
        env = _WORKER_ENVIRONMENTS.get(key)
        if env is None:
            env = _WORKER_ENVIRONMENTS[key] = prepare_environment(request)
        return env


def worker_environment_count() -> int:
    """How many environments this process prepared for tasks and still holds."""
    with _WORKER_LOCK:
        return len(_WORKER_ENVIRONMENTS)


def release_worker_environments(run_id: str) -> int:
    """Close and forget the environments this process prepared for run ``run_id``; returns how many."""
    with _WORKER_LOCK:
        keys = [key for key, env in _WORKER_ENVIRONMENTS.items() if env.run_id == run_id]
        released = [_WORKER_ENVIRONMENTS.pop(key) for key in keys]
    for env in released:
        env.close()
    return len(released)


def release_workers(run_id: str) -> None:
    """At the end of a flow run: every process its tasks ran in forgets the run's environment.

    Called inside the flow run, while its task runner still holds its workers; a Dask runner's
    workers are each told (those that never saw the run hold nothing). A failure to reach one is
    logged, never the run's error: its results are already written.
    """
    from prefect.context import FlowRunContext

    release_worker_environments(run_id)
    context = FlowRunContext.get()
    # Only a Dask runner has a client; it exists once the runner has started a task.
    client = getattr(context.task_runner, "_client", None) if context is not None else None
    if client is None:
        return
    try:
        client.run(release_worker_environments, run_id, on_error="ignore")
    except Exception as exc:  # noqa: BLE001 - a lost worker holds nothing any more
        logging.getLogger(__name__).warning("could not release run %s on its Dask workers: %s", run_id, exc)
