"""``oloproof run``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from oloproof._cli._common import emit, quiet_prefect
from oloproof._cli._progress import progress_bar
from oloproof._cli._signals import interruption, stop_on_signals
from oloproof._exceptions import RunStoppedError, UsageError

if TYPE_CHECKING:
    from oloproof.records import RunReport
    from oloproof.tasks import RunEnvironment

__all__ = ["run_command"]


def run_command(args: argparse.Namespace) -> int:
    """Validate the project, run the flow, print the report."""
    quiet_prefect()
    from oloproof._ids import new_run_id
    from oloproof.config import parse_overrides
    from oloproof.flows._api import connect_prefect_api
    from oloproof.tasks import RunRequest, prepare_environment

    settings = parse_overrides(args.overrides)
    if args.repeats is not None:
        if args.repeats < 1:
            raise UsageError(f"--repeats must be at least 1, got {args.repeats}", field="--repeats")
        settings["repeats"] = args.repeats
    # Files named on the command line are the caller's, relative to where it runs.
    for key, value in (("dataset", args.dataset), ("testing_criteria", args.criteria)):
        if value is not None:
            settings[key] = value if "://" in value else str(Path(value).expanduser().resolve())
    request = RunRequest(run_id=new_run_id(), project=args.project_dir, settings=settings, results=args.results)
    # Everything is validated before the flow starts, so bad input writes nothing.
    env = prepare_environment(request)
    try:
        options = _flow_options(env)  # a task runner that cannot work is refused before any server starts
        connect_prefect_api()  # before anything is written: a server that never answers writes nothing
        env.store.check_writable()
        with stop_on_signals(env.close) as received:
            try:
                report = _evaluate(env, options)
            except RunStoppedError:
                if received:  # the signal's own exception was caught inside the engine
                    raise interruption(received[-1]) from None
                raise
    finally:
        env.close()
    from oloproof.report import render_run

    emit(report, args.json, render_run)
    return 0


def _flow_options(env: RunEnvironment) -> dict[str, object]:
    # Options of Prefect's Flow.with_options, handed through as they are.
    from oloproof.flows._runner import task_runner_for

    if env.project.config.task_runner.type == "threads":
        return {}
    return {"task_runner": task_runner_for(env.project.config.task_runner)}


def _evaluate(env: RunEnvironment, options: dict[str, object]) -> RunReport:
    from oloproof.flows import PreparedRun

    stages = {"rag": ["execute", "retrieve", "generate", "judge"], "plain": ["execute", "generate", "judge"],
              "agent": ["execute", "generate", "judge"], "recorded": ["judge"]}[env.system.config.kind]  # fmt: skip
    with progress_bar(len(env.cases), stages) as on_progress:
        if on_progress is not None:
            env.on_progress = on_progress
        return PreparedRun(env)(**options)
