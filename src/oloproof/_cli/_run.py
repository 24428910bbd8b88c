"""``oloproof run``."""

from __future__ import annotations

import argparse

from oloproof._cli._common import emit, quiet_prefect
from oloproof._cli._progress import progress_bar
from oloproof.flows._remote import public_overrides

__all__ = ["run_command"]


def run_command(args: argparse.Namespace) -> int:
    """Validate the project, run the flow, print the report."""
    quiet_prefect()
    from oloproof._ids import new_run_id
    from oloproof.tasks import RunContext, prepare_environment, register_environment, release_environment

    overrides = list(args.overrides)
    context = RunContext(
        run_id=new_run_id(), project_dir=args.project_dir, overrides=tuple(overrides), results=args.results
    )
    # Everything is validated before the flow starts, so bad input writes nothing.
    env = prepare_environment(context)
    try:
        env.store.check_writable()
    except BaseException:
        env.executor.close()
        raise
    register_environment(env)
    from oloproof.flows import evaluate
    from oloproof.flows._runner import task_runner_for
    from oloproof.report import render_run

    flow = evaluate
    if env.project.config.task_runner.type != "threads":
        flow = evaluate.with_options(task_runner=task_runner_for(env.project.config.task_runner))

    stages = ["execute", "retrieve", "generate", "judge"] if env.system.config.kind == "rag" else ["execute", "generate", "judge"]
    try:
        with progress_bar(len(env.cases), stages):
            # Flow parameters are stored by the Prefect API: credentials given with
            # --set stay in this process (the prepared environment already holds them).
            report = flow(
                project=args.project_dir, overrides=public_overrides(overrides), results=args.results,
                run_id=context.run_id,
            )
    finally:
        release_environment(context.run_id)
    emit(report, args.json, render_run)
    return 0
