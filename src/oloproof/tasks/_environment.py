"""What a run's tasks share inside one process: system, cases, store, executor.

Tasks receive a small, picklable `RunContext`; `environment()` turns it into
the live `RunEnvironment`, built once per process (so a Dask worker rebuilds
it from the project folder instead of unpickling user objects).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from oloproof._exceptions import DatasetError
from oloproof._system._resolve import SystemHandle, import_callable, resolve_system
from oloproof.config import Project, load_project
from oloproof.dataset import Case, Dataset, load_cases
from oloproof.evaluators import Evaluator, build_evaluators
from oloproof.store import ResultsStore
from oloproof.tasks._executor import StageExecutor
from oloproof.tasks._replay import load_recorded_retrievals

__all__ = [
    "RunContext",
    "RunEnvironment",
    "add_progress_hook",
    "environment",
    "prepare_environment",
    "register_environment",
    "release_environment",
    "remove_progress_hook",
]

ProgressHook = Callable[[str, int], None]

_LOCK = threading.Lock()
_ENVIRONMENTS: dict[str, RunEnvironment] = {}
_PROGRESS_HOOKS: list[ProgressHook] = []


@dataclass(frozen=True)
class RunContext:
    """The picklable description of a run every task receives."""

    run_id: str
    project_dir: str
    overrides: tuple[str, ...] = ()
    """``--set`` settings applied over ``oloproof.yaml``."""
    results: str | None = None
    """The results store URL given on the command line (``--results``); the project's otherwise."""
    replay_from: str | None = None
    """A parent run whose recorded retrievals are replayed (no retriever calls)."""
    context_source: str = "assembled"
    """``assembled`` (normal) or ``gold`` (``expected.gold_context`` replaces the context)."""
    reranker: str | None = None
    """``module:function`` re-ranking replayed candidates before assembly."""
    bypass_generation_cache: bool = False
    """Re-execute generation even when a cached record exists (diagnosis controls)."""
    case_ids: tuple[str, ...] | None = None
    """Run only these cases of the dataset (diagnosis child runs)."""
    parent: dict[str, Any] | None = None
    """What a child run was run for: ``{"diagnosis_request": ..., "role": ...}``."""


@dataclass
class RunEnvironment:
    """The live objects behind a `RunContext`."""

    context: RunContext
    project: Project
    system: SystemHandle
    dataset: Dataset
    evaluators: list[Evaluator]
    store: ResultsStore
    executor: StageExecutor
    cases: dict[str, Case] = field(default_factory=dict)
    recorded: dict[str, dict[str, Any]] | None = None
    """The parent run's recorded retrievals, when replaying."""
    reranker: Callable[..., Any] | None = None
    """The re-ranker applied to replayed candidates."""
    planned: dict[tuple[str, tuple[str, ...]], Any] = field(default_factory=dict)
    """Work planned by a batch's cache policy, waiting for that batch's task body."""

    @property
    def system_dict(self) -> dict[str, Any]:
        return self.system.config.model_dump(mode="json")

    def keep_plan(self, stage: str, case_ids: tuple[str, ...], plan: Any) -> Any:
        """Keep the work a cache policy planned, so the task body need not plan it again."""
        self.planned[(stage, case_ids)] = plan
        return plan

    def take_plan(self, stage: str, case_ids: tuple[str, ...], build: Callable[[], Any]) -> Any:
        """The kept plan of this batch (once), or a fresh one."""
        plan = self.planned.pop((stage, case_ids), None)
        return build() if plan is None else plan

    def progress(self, stage: str, count: int = 1) -> None:
        for hook in list(_PROGRESS_HOOKS):
            hook(stage, count)


def prepare_environment(context: RunContext) -> RunEnvironment:
    """Validate everything a run needs; raises before anything is written."""
    project = load_project(context.project_dir, list(context.overrides), results=context.results)
    system = resolve_system(project)
    evaluators = build_evaluators(
        project.config.evaluators, rag=system.config.kind == "rag", error=project.error
    )
    dataset = load_cases(project.dataset_url, project.config.storage_options)
    store = ResultsStore(project.results_url, project.config.storage_options)
    cases = {case.id: case for case in dataset.cases}
    if context.case_ids is not None:
        unknown = sorted(set(context.case_ids) - set(cases))
        if unknown:
            raise DatasetError(
                f"no case with id {unknown[0]!r} in the dataset", path=dataset.url, field="id"
            )
        wanted = set(context.case_ids)
        cases = {case_id: case for case_id, case in cases.items() if case_id in wanted}
    recorded = reranker = None
    if context.replay_from is not None:
        recorded = load_recorded_retrievals(store, context.replay_from)
    if context.reranker is not None:
        reranker = import_callable(context.reranker, project_dir=project.directory, option="--reranker")
    return RunEnvironment(
        recorded=recorded,
        reranker=reranker,
        context=context,
        project=project,
        system=system,
        dataset=dataset,
        evaluators=evaluators,
        store=store,
        executor=StageExecutor(project.config.max_concurrency, project.config.timeouts.seconds()),
        cases=cases,
    )


def environment(context: RunContext) -> RunEnvironment:
    """Return this process's environment for ``context``, building it once."""
    with _LOCK:
        env = _ENVIRONMENTS.get(context.run_id)
        if env is None:
            env = _ENVIRONMENTS[context.run_id] = prepare_environment(context)
        return env


def register_environment(env: RunEnvironment) -> None:
    """Make an already prepared environment the one tasks of its run use."""
    with _LOCK:
        _ENVIRONMENTS[env.context.run_id] = env


def release_environment(run_id: str) -> None:
    """Drop and close a run's environment."""
    with _LOCK:
        env = _ENVIRONMENTS.pop(run_id, None)
    if env is not None:
        env.executor.close()


def add_progress_hook(hook: ProgressHook) -> None:
    """Receive ``(stage, count)`` whenever user calls complete."""
    _PROGRESS_HOOKS.append(hook)


def remove_progress_hook(hook: ProgressHook) -> None:
    """Stop receiving progress."""
    if hook in _PROGRESS_HOOKS:
        _PROGRESS_HOOKS.remove(hook)
