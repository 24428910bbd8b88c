"""``oloproof sweep``."""

from __future__ import annotations

import argparse
from typing import Any

from oloproof._cli._common import emit, emit_json, print_lines, quiet_prefect
from oloproof._cli._signals import stop_on_signals
from oloproof._exceptions import UsageError

__all__ = ["sweep_command"]


def sweep_command(args: argparse.Namespace) -> int:
    """Validate the sweep, run (or plan) it, print its table and its claim."""
    quiet_prefect()
    from oloproof.config import parse_overrides
    from oloproof.flows._sweep import SweepRequest, prepare_sweep
    from oloproof.flows._sweep_plan import plan_sweep
    from oloproof.sweep import parse_grid

    if args.holdout is not None and not 0.0 < args.holdout < 1.0:
        raise UsageError(f"--holdout must be a share between 0 and 1, got {args.holdout:g}", field="--holdout")
    if args.parallel < 1:
        raise UsageError("--parallel must be at least 1", field="--parallel")
    if args.max_settings < 1:
        raise UsageError("--max-settings must be at least 1", field="--max-settings")
    request = SweepRequest(
        project=args.project_dir, grids=tuple(parse_grid(text) for text in args.grids), objective=args.objective,
        settings=parse_overrides(args.overrides), baseline=parse_overrides(args.baseline), results=args.results,
        holdout=args.holdout, seed=args.seed, limit=args.max_settings, allow_more=args.yes, stages=args.stages,
        parallel=args.parallel,
    )  # fmt: skip
    # Every setting is validated and prepared before anything runs or is written.
    sweep = prepare_sweep(request)
    try:
        if args.dry_run:
            plan = plan_sweep(sweep)
            emit(plan, args.json, _plan_lines)
            return 0
        from oloproof.flows._api import connect_prefect_api

        connect_prefect_api()
        sweep.store.check_writable()
        with stop_on_signals(sweep.close):
            record = sweep()
    finally:
        sweep.close()
    if args.json:
        emit_json(record)
    else:
        from oloproof.report import render_table
        from oloproof.sweep import render_sweep

        print_lines(render_sweep(record, render_table))
    return 0


def _plan_lines(plan: Any) -> list[str]:
    settings = plan["settings"]
    return [
        (f"Sweep {plan['sweep_id']}: {len(settings) - 1} settings and the baseline; "
        f"{plan['runs']} to run, {plan['complete']} complete"),
        *(f"  {label}" for label in settings),
        _calls_line(plan),
    ]  # fmt: skip


def _calls_line(plan: Any) -> str:
    """``Calls: retrieve 13, generate 35, judge 0; 178 reused``, each upper bound in parentheses."""
    generate = _at_most(plan["generate_unknown"], "whose context is not retrieved yet")
    judge = _at_most(plan["judge_unknown"], "whose output is not generated yet")
    reused = f"at least {plan['reused']}" if plan["generate_unknown"] or plan["judge_unknown"] else plan["reused"]
    repeats = plan.get("repeats") or 1
    counted = f" (the first of {repeats} repeats: each further repeat generates and judges again)" if repeats > 1 else ""
    return (f"Calls: retrieve {plan['retrieve']}, generate {plan['generate']}{generate}, "
            f"judge {plan['judge']}{judge}; {reused} reused{counted}")  # fmt: skip


def _at_most(count: int, why: str) -> str:
    return f" (+ at most {count} {why})" if count else ""


def add_sweep_parser(commands: Any) -> None:
    """The ``sweep`` command's arguments."""
    sweep = commands.add_parser("sweep", help="run a project over a grid of settings and choose one, honestly")
    sweep.add_argument("project_dir", nargs="?", default=".", metavar="PROJECT_DIR")
    sweep.add_argument("--grid", dest="grids", action="append", default=[], metavar="KEY=V1,V2,...",
                       help="a setting and its values, e.g. --grid system.rag.top_k=1,2,4 (repeatable: the product)")
    sweep.add_argument("--objective", required=True, metavar="CRITERION",
                       help="the criterion a setting is chosen by, e.g. answer_correct")
    sweep.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="override a setting for the baseline and every setting alike")
    sweep.add_argument("--baseline", action="append", default=[], metavar="KEY=VALUE",
                       help="the baseline's own overrides (default: the project's settings)")
    sweep.add_argument("--stages", choices=("all", "retrieve"), default="all",
                       help="retrieve: retrieval alone, scored by the retrieval metrics and document_retrieval")
    sweep.add_argument("--holdout", type=float, metavar="FRACTION",
                       help="choose on the other cases, then re-estimate the choice on this share of them")
    sweep.add_argument("--seed", type=int, default=0, help="seed of the holdout split (default 0)")
    sweep.add_argument("--max-settings", type=int, default=256, metavar="N",
                       help="refuse a grid of more settings without --yes (default 256)")
    sweep.add_argument("--parallel", type=int, default=2, metavar="N",
                       help="run up to N settings at once; their calls share max_concurrency (default 2)")
    sweep.add_argument("--yes", action="store_true", help="sweep a grid past --max-settings")
    sweep.add_argument("--dry-run", action="store_true", help="print the plan: settings and calls per stage")
    sweep.add_argument("--results", metavar="URL", help="results store URL (overrides the project's)")
    sweep.add_argument("--json", action="store_true", help="print the sweep's result as JSON")
