"""The sweep flow: one child run per setting of a grid, then a claim that survives the choice.

Every setting is an ordinary run of kind ``sweep_child``, run as a subflow of the sweep's
flow and tagged with the sweep's id in its manifest. Up to ``parallel`` settings run at
once, as one `RunGroup`: one limiter keeps the project's ``max_concurrency`` over all of
them, the providers' pools are shared (so are their limits), and a call two settings need
at the same moment is made once. With the stage caches, every setting executes only what
its identities require: a setting that changes only ``top_k`` or ``token_budget`` calls no
retriever, and a context assembled before is never generated from again. Once a setting's
run is complete, the sweep records which run answered it
(``sweeps/<id>/settings/<setting>.json``); the same sweep asked again, after an
interruption, runs only the settings without one.
"""

from __future__ import annotations

import contextvars
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Literal

from prefect import flow
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from oloproof._exceptions import ConfigError, UsageError
from oloproof._ids import new_run_id
from oloproof._json import content_hash
from oloproof.config import load_project
from oloproof.flows._events import delivering_events
from oloproof.flows._publish import publish_sweep_page
from oloproof.flows._run import PreparedRun
from oloproof.records import RunManifest, StoredCase, StoredJudgment
from oloproof.store import ResultsStore, run_manifest, run_table, sweep_manifest, sweep_setting
from oloproof.sweep import GridAxis, SettingRows, expand_grid, setting_label, summarize_sweep
from oloproof.tasks import RunEnvironment, RunGroup, RunRequest, prepare_environment

__all__ = ["PreparedSweep", "SettingRun", "SweepRequest", "prepare_sweep", "summarize", "sweep"]


class SweepRequest(BaseModel):
    """One sweep: the grid, what it is judged by, and where it runs."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    project: str
    """The project folder, holding ``oloproof.yaml``."""

    grids: tuple[GridAxis, ...]
    """The axes whose cartesian product is the settings swept."""

    objective: str
    """The criterion a setting is chosen by, e.g. ``answer_correct``."""

    settings: dict[str, Any] = Field(default_factory=dict)
    """``--set`` overrides applied to the project, the baseline and every setting alike."""

    baseline: dict[str, Any] = Field(default_factory=dict)
    """The baseline's own overrides; empty: the project's settings."""

    results: str | None = None
    """The results store URL; the project's when absent."""

    holdout: float | None = None
    """The share of cases kept out of the choice and used to re-estimate the chosen setting."""

    seed: int = 0
    """Seed of the holdout split and of any interval drawn by simulation."""

    stages: Literal["all", "retrieve"] = "all"
    """``retrieve``: every setting retrieves only, scored by the retrieval metrics and
    ``document_retrieval``; no generator and no judge is called."""

    limit: int = 256
    """The most settings a grid may expand to without ``allow_more``."""

    allow_more: bool = False
    """Sweep more settings than ``limit`` (``--yes``)."""

    parallel: int = Field(default=2, ge=1)
    """The most settings run at once; their user calls share the project's ``max_concurrency``."""

    @property
    def identity(self) -> str:
        """What the sweep is recorded and resumed under: everything but the store and how it runs."""
        return content_hash(self.model_dump(mode="json", exclude={"results", "allow_more", "limit", "parallel"}))[:24]


@dataclass
class SettingRun:
    """One setting of the sweep: its overrides, its label and its prepared run."""

    label: str
    """E.g. ``top_k=4 token_budget=120``; ``baseline`` for the baseline."""
    overrides: dict[str, JsonValue]
    """The setting's own ``dotted.key: value`` overrides."""
    env: RunEnvironment
    """The setting's prepared run (validated before anything runs)."""
    run_id: str | None = None
    """The run that answered it, once it has one."""
    key: str = ""
    """The setting's hash, naming its record in the store."""


@dataclass
class PreparedSweep:
    """A validated sweep: every setting's run prepared, nothing run or written."""

    request: SweepRequest
    """The request."""
    baseline: SettingRun
    """The baseline's run."""
    settings: list[SettingRun]
    """Each setting's run, in grid order."""
    store: ResultsStore
    """Where the runs and the sweep's record go."""
    group: RunGroup
    """What the settings' runs share: the limiter, the flights and the providers."""
    criteria: dict[str, str] = field(default_factory=dict)
    """Every criterion the runs report, the objective first, and how each is summarized."""

    @property
    def sweep_id(self) -> str:
        """``swp_<hash>``: the request's identity."""
        return f"swp_{self.request.identity}"

    def all_runs(self) -> list[SettingRun]:
        """The baseline, then every setting."""
        return [self.baseline, *self.settings]

    def close(self) -> None:
        """Release every prepared run's environment, and stop any call still pending."""
        self.group.close()

    @flow(name="oloproof-sweep", flow_run_name="sweep {objective} · {count} settings", validate_parameters=False)
    def sweep(self, project: str, objective: str, count: int, grids: list[dict[str, Any]]) -> dict[str, JsonValue]:
        """Run every setting that has no complete run yet, then choose; the parameters are what the UI shows."""
        run_settings(self)
        return summarize(self)

    def __call__(self) -> dict[str, JsonValue]:
        """Run the sweep's flow; returns the sweep's result, as stored."""
        grids = [axis.model_dump(mode="json") for axis in self.request.grids]
        parameters: dict[str, Any] = {"project": self.request.project, "objective": self.request.objective,
                                      "count": len(self.settings), "grids": grids}  # fmt: skip
        return delivering_events(lambda: self.sweep(**parameters))


def prepare_sweep(request: SweepRequest) -> PreparedSweep:
    """Expand the grid and prepare every setting's run; raises before anything runs.

    Raises:
        ConfigError: A grid over an unknown key, a value its setting refuses, an empty
            grid or one past the limit (the error names ``--grid`` and the key).
        UsageError: No evaluator produces the objective.
    """
    overrides = expand_grid(request.grids, limit=request.limit, allow_more=request.allow_more)
    sweep_id = f"swp_{request.identity}"
    config = load_project(request.project, {**request.settings, **request.baseline}, results=request.results).config
    group = RunGroup(config.max_concurrency, config.timeouts.seconds())
    try:
        baseline = _prepare(request, sweep_id, "baseline", dict(request.baseline), group)
        settings = [_prepare(request, sweep_id, setting_label(one), dict(one), group) for one in overrides]
        criteria = [o.criterion for e in baseline.env.evaluators for o in e.outputs()]
        if request.objective not in criteria and request.stages == "retrieve":
            raise UsageError(f"the objective {request.objective!r} is not scored by a retrieval-only sweep, which "
                             f"calls no generator and no judge (its criteria: {', '.join(criteria)})",
                             field="--objective")  # fmt: skip
        if request.objective not in criteria:
            raise UsageError(f"no evaluator produces the objective {request.objective!r} "
                             f"(criteria: {', '.join(criteria) or 'none'})", field="--objective")  # fmt: skip
    except BaseException:
        group.close()
        raise
    kinds: dict[str, str] = {o.criterion: o.metric_kind for e in baseline.env.evaluators for o in e.outputs()}
    ordered = {request.objective: kinds[request.objective], **kinds}
    sweep = PreparedSweep(request=request, baseline=baseline, settings=settings,
                          store=baseline.env.store, group=group, criteria=ordered)  # fmt: skip
    for setting in sweep.all_runs():
        setting.key = content_hash({"sweep": sweep.sweep_id, "overrides": setting.overrides})[:24]
    return sweep


def _prepare(
    request: SweepRequest, sweep_id: str, label: str, overrides: dict[str, JsonValue], group: RunGroup
) -> SettingRun:
    settings = {**request.settings, **overrides}
    run = RunRequest(run_id=new_run_id(), project=request.project, settings=settings, results=request.results,
                     kind="sweep_child", stages=request.stages,
                     sweep={"sweep_id": sweep_id, "setting": label, "settings": overrides})  # fmt: skip
    try:
        env = prepare_environment(run, group=group)
    except ConfigError as error:
        if error.path != "--set" or not any(_names(error.field, key) for key in overrides):
            raise
        # The value came from the grid: say so, with the key the grid named.
        raise ConfigError(f"{label}: {error.message}", path="--grid", field=error.field) from None
    return SettingRun(label=label, overrides=overrides, env=env)


def _names(field: str | None, key: str) -> bool:
    return field is not None and (field == key or field.startswith(key + ".") or key.startswith(field + "."))


def run_settings(sweep: PreparedSweep) -> list[str]:
    """Run the settings that have no complete run yet, up to ``parallel`` at once (the
    body of the flow); returns every setting's run id, the baseline's first.

    Raises:
        Exception: The first setting's run that failed; the others are stopped then.
    """
    total = len(sweep.all_runs())
    todo: list[tuple[int, SettingRun]] = []
    for number, setting in enumerate(sweep.all_runs(), start=1):
        setting.run_id = _recorded_run(sweep.store, sweep.sweep_id, setting.key)
        if setting.run_id is None:
            todo.append((number, setting))
    workers = max(1, min(sweep.request.parallel, len(todo)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="oloproof-setting") as pool:
        # Each thread runs its setting as a subflow of this flow run: it needs this context.
        futures = [pool.submit(contextvars.copy_context().run, _run_setting, sweep, setting, f"{number} of {total}")
                   for number, setting in todo]  # fmt: skip
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [future for future in done if future.exception() is not None]
        if failed:
            sweep.group.close()  # the other settings' pending calls return at once
            wait(futures)
            failed[0].result()
    return [str(setting.run_id) for setting in sweep.all_runs()]


def _run_setting(sweep: PreparedSweep, setting: SettingRun, position: str) -> None:
    report = PreparedRun(setting.env)(flow_run_name=f"sweep {setting.label} · {position}")
    setting.run_id = str(report["run_id"])
    sweep.store.write_json(sweep_setting(sweep.sweep_id, setting.key),
                           {"run_id": setting.run_id, "setting": setting.label, "overrides": setting.overrides})  # fmt: skip


def _recorded_run(store: ResultsStore, sweep_id: str, key: str) -> str | None:
    """The complete run an earlier attempt of the sweep recorded for a setting, if any."""
    path = sweep_setting(sweep_id, key)
    if not store.exists(path):
        return None
    run_id = store.read_json(path).get("run_id")
    return run_id if isinstance(run_id, str) and store.exists(run_manifest(run_id)) else None


def read_setting(store: ResultsStore, run_id: str) -> tuple[RunManifest, list[StoredCase], list[StoredJudgment]]:
    """A setting's run as the sweep's result reads it."""
    manifest = RunManifest.model_validate(store.read_json(run_manifest(run_id)))
    cases = store.read_table(run_table(run_id, "cases"))
    judgments = store.read_table(run_table(run_id, "judgments"))
    return manifest, cases, judgments  # type: ignore[return-value]  # the tables' rows


def write_sweep(store: ResultsStore, sweep_id: str, record: dict[str, JsonValue]) -> None:
    """Write the sweep's result (last: its presence marks the sweep complete)."""
    store.write_json(sweep_manifest(sweep_id), record)


def summarize(sweep: PreparedSweep) -> dict[str, JsonValue]:
    """Read every setting's run, choose, and write the sweep's result (last)."""
    rows = []
    for setting in sweep.all_runs():
        if setting.run_id is None:  # run_settings gave every setting its run
            raise UsageError(f"setting {setting.label} has no run")
        manifest, cases, judgments = read_setting(sweep.store, setting.run_id)
        rows.append(SettingRows(label=setting.label, overrides=setting.overrides, manifest=manifest, cases=cases,
                                judgments=judgments))  # fmt: skip
    request = sweep.request
    output = next(o for e in sweep.baseline.env.evaluators for o in e.outputs() if o.criterion == request.objective)
    record = summarize_sweep(rows[0], rows[1:], objective=request.objective, criteria=sweep.criteria,
                             higher_is_better=output.higher_is_better,
                             confidence=sweep.baseline.env.project.config.confidence,
                             holdout=request.holdout, seed=request.seed)  # fmt: skip
    record = {"sweep_id": sweep.sweep_id, "request": request.model_dump(mode="json"), **record}
    write_sweep(sweep.store, sweep.sweep_id, record)
    publish_sweep_page(record)
    return record


@flow(name="oloproof-sweep", flow_run_name="sweep {objective}", validate_parameters=False)
def sweep(
    project: str = ".",
    grids: list[str] | None = None,
    objective: str = "",
    overrides: list[str] | None = None,
    results: str | None = None,
    stages: Literal["all", "retrieve"] = "all",
    holdout: float | None = None,
    seed: int = 0,
    parallel: int = 2,
) -> dict[str, JsonValue]:
    """Sweep a project over a grid and choose by ``objective``: the entry point of deployments.

    Args:
        project: The project folder (holding ``oloproof.yaml``).
        grids: ``key=v1,v2,...`` axes, as ``--grid`` takes them.
        objective: The criterion a setting is chosen by.
        overrides: ``key.path=value`` settings applied to the baseline and every setting.
        results: The results store URL; the project's when absent.
        stages: ``retrieve`` for a retrieval-only sweep.
        holdout: The share of cases the choice is re-estimated on.
        seed: Seed of the holdout split.
        parallel: The most settings run at once.

    Returns:
        The sweep's result (also written to the store). Asked again, it runs only the
        settings without a complete run.
    """
    from oloproof.config import parse_overrides
    from oloproof.sweep import parse_grid

    request = SweepRequest(project=project, grids=tuple(parse_grid(text) for text in grids or []),
                           objective=objective, settings=parse_overrides(overrides or []), results=results,
                           stages=stages, holdout=holdout, seed=seed, parallel=parallel)  # fmt: skip
    prepared = prepare_sweep(request)
    try:
        run_settings(prepared)
        return summarize(prepared)
    finally:
        prepared.close()
