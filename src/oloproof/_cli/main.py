"""``oloproof``: the thin command line over the flows and the store.

Commands import their machinery lazily, so ``oloproof --help`` never imports
Prefect. Every `OloproofError` is printed as one line, without a traceback.

Exit codes: 0 success (and ``Gate: PASS``), 2 bad input or usage, 3 ``Gate: BLOCK``,
130 interrupted (Ctrl-C), 143 terminated (SIGTERM),
1 anything unexpected.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NoReturn, TypeAlias

from oloproof._cli._signals import Terminated, interruption
from oloproof._exceptions import OloproofError

__all__ = ["COMMANDS", "build_parser", "main"]

EXIT_INPUT = 2
QUERY_TIMEOUT_S = 300.0
"""Default seconds ``oloproof query`` lets a statement run: a dashboard's query must end."""
_WRITES_NOTHING = frozenset({"query", "show", "results", "report", "trend", "server"})
"""Commands an interruption tells nothing of kept records: they write none."""


_Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""The sub-parsers action whose ``add_parser`` adds a command."""


def _add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", metavar="URL", help="results store URL (default: the project's)")
    parser.add_argument("--project", metavar="DIR", default=None, help="project folder whose store to read (default: .)")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def _add_run(commands: _Commands) -> None:
    """``run``."""
    run = commands.add_parser("run", help="evaluate a project and record the run")
    run.add_argument("project_dir", nargs="?", default=".", metavar="PROJECT_DIR")
    run.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="override a setting, e.g. --set system.rag.token_budget=120 (repeatable)")
    run.add_argument("--results", metavar="URL", help="results store URL (overrides the project's)")
    run.add_argument("--dataset", metavar="FILE", help="the rows to evaluate (overrides the project's dataset; "
                     "with no oloproof.yaml, the rows are recorded data)")
    run.add_argument("--repeats", type=int, metavar="N",
                     help="generate each case N times (a stochastic system's samples; overrides repeats:)")
    run.add_argument("--criteria", metavar="FILE", help="testing_criteria (JSON or YAML) to evaluate with")
    run.add_argument("--json", action="store_true", help="print the run as JSON")


def _add_reading(commands: _Commands) -> None:
    """``runs``, ``show``, ``results`` and ``query``."""
    runs = commands.add_parser(
        "runs", help="list your complete runs in a store (with --all, every run; with --incomplete, "
        "the folders of runs that never finished)",
    )
    runs.add_argument("--all", action="store_true",
                      help="list every complete run with its kind, a diagnosis's child runs included")
    runs.add_argument("--incomplete", action="store_true",
                      help="list run folders without run.json: runs being written, or killed during their write")
    runs.add_argument("--remove", action="store_true",
                      help="with --incomplete: remove those older than --older-than (their records are not a run)")
    runs.add_argument("--older-than", type=float, default=60.0, metavar="MINUTES",
                      help="with --remove: only folders untouched this long (a number >= 0; default 60); "
                      "a folder a live run still writes is kept whatever its age")
    _add_store_options(runs)

    show = commands.add_parser("show", help="print a recorded run's report")
    show.add_argument("run_id", metavar="RUN_ID")
    _add_store_options(show)

    results = commands.add_parser("results", help="a run's judgments in the catalogue's result shape (JSON lines)")
    results.add_argument("run_id", metavar="RUN_ID")
    _add_store_options(results)

    query = commands.add_parser(
        "query", help="run SQL over the store's DuckDB views",
        description="Views: runs (your runs), all_runs (every run with its kind, a diagnosis's child runs "
        "included), cases, retrievals, generations, judgments, metrics, diagnoses, diagnosis_labels, "
        "comparisons, decisions. The table views hold every run's rows: join runs to keep yours. "
        "Values go in with --param (bound as $1, $2, ...). Only one SELECT, reading only the store. "
        "Exit 0, or 2 on bad input, a failed statement or one stopped at --timeout; Ctrl-C exits 130, SIGTERM 143.",
    )
    query.add_argument("sql", metavar="SQL")
    query.add_argument("--param", dest="params", action="append", default=[], metavar="VALUE",
                       help="a bound parameter ($1, $2, ... in order; repeatable)")
    query.add_argument("--timeout", type=float, default=QUERY_TIMEOUT_S, metavar="SECONDS",
                       help=f"stop the statement after this long, exit 2 (default {QUERY_TIMEOUT_S:g}; 0: no limit)")
    _add_store_options(query)


def _add_diagnosis(commands: _Commands) -> None:
    """``diagnose`` and ``inspect``."""
    diagnose = commands.add_parser(
        "diagnose", help="re-execute a run's failures under an intervention beside a control",
        description="Labels each failure RETRIEVAL_MISS, RANKED_OUT, CONTEXT_ASSEMBLY_LOSS, "
        "CONTEXT_DISTRACTION or GENERATION_FAILURE (UNSTABLE when a plain re-execution passes). "
        "A run with repeats is re-executed as often: UNSTABLE when the control's pass rate differs from "
        "the run's (Fisher's exact test, two-sided, 5%), PARTIAL_RECOVERY when the intervention recovers "
        "some repeats only. Labels implicate factors; they do not establish causes.",
    )
    diagnose.add_argument("run_id", metavar="RUN_ID")
    diagnose.add_argument("--intervention", required=True, choices=["gold-context", "top-k", "reranker"])
    diagnose.add_argument("--criterion", required=True, metavar="NAME", help="the criterion whose failures to diagnose")
    diagnose.add_argument("--top-k", type=int, metavar="N", help="the cut-off to replay with (top-k)")
    diagnose.add_argument("--reranker", metavar="MODULE:FUNCTION", help="rerank(query, passages) -> passages (reranker)")
    diagnose.add_argument("--threshold", type=float, metavar="T", help="a score below T fails (score criteria)")
    diagnose.add_argument("--resample", type=int, default=0, metavar="N",
                          help="re-execute afresh instead of recalling the diagnosis of an identical request "
                               "(a new N draws new samples)")
    _add_store_options(diagnose)

    inspect = commands.add_parser("inspect", help="the cases behind a diagnosis, a comparison's decisions, or a run's cases")
    inspect.add_argument("id", metavar="ID", help="sha256:... (diagnosis or comparison) or run_...")
    _add_store_options(inspect)


def _add_comparison(commands: _Commands) -> None:
    """``compare`` and ``plan``."""
    compare = commands.add_parser(
        "compare", help="pair two runs case by case and gate a release with a policy",
        description="Differences are candidate minus baseline in percentage points, with a paired "
        "confidence interval: Tango's score interval for pass/fail metrics, Gaffke's bound on "
        "differences mapped to [0, 1] for scores; never zero-width because pairs agreed. "
        "Exit 0 on Gate: PASS (or without a policy), 3 on Gate: BLOCK, 2 on bad input.",
    )
    compare.add_argument("candidate", metavar="CANDIDATE_RUN")
    compare.add_argument("baseline", metavar="BASELINE_RUN")
    compare.add_argument("--policy", metavar="compare.yaml", help="rules deciding the gate")
    compare.add_argument("--allow-partial", action="store_true",
                         help="pair what matches when datasets or evaluator specs differ")
    _add_store_options(compare)

    plan = commands.add_parser(
        "plan", help="paired cases each policy rule needs for a stated power, with the gate's interval",
        description="The figure depends on how often the two systems disagree: measured on a pilot "
        "(--pilot), stated (--discordance), or else assumed to be 10% of cases; every line says which.",
    )
    plan.add_argument("--policy", required=True, metavar="compare.yaml")
    plan.add_argument("--baseline", required=True, metavar="RUN")
    plan.add_argument("--pilot", metavar="RUN",
                      help="a pilot run of the candidate, or a second run of the baseline, on the same cases: "
                      "its disagreements with the baseline set the discordance (pass/fail metrics) or the "
                      "spread of the differences (scores)")
    plan.add_argument("--discordance", type=float, metavar="FRACTION",
                      help="share of cases on which the systems disagree, e.g. 0.1 (overrides --pilot)")
    plan.add_argument("--power", type=float, default=0.8, metavar="P",
                      help="probability that a rule passes when the assumed difference is true (default 0.8)")
    plan.add_argument("--seed", type=int, default=0, help="seed of the simulation for score metrics (default 0)")
    _add_store_options(plan)


def _add_judge(commands: _Commands) -> None:
    """``judge`` and its commands."""
    from oloproof._cli._judge import add_judge_parser

    add_judge_parser(commands, _add_store_options)


def _add_serve(commands: _Commands) -> None:
    """``serve``."""
    serve = commands.add_parser("serve", help="serve prefect.yaml's deployments from this process")
    serve.add_argument("--project", metavar="DIR", help="the project every deployment evaluates")
    serve.add_argument("--prefect-yaml", default="prefect.yaml", metavar="FILE")


def _add_sweep(commands: _Commands) -> None:
    """``sweep``."""
    from oloproof._cli._sweep import add_sweep_parser

    add_sweep_parser(commands)


def _add_reports(commands: _Commands) -> None:
    """``report`` and ``trend``."""
    from oloproof._cli._report import add_report_parsers

    add_report_parsers(commands, _add_store_options)


def _add_server(commands: _Commands) -> None:
    """``server``."""
    from oloproof._cli._server import add_server_parser

    add_server_parser(commands)


def _add_index_updated(commands: _Commands) -> None:
    """``index-updated``."""
    index = commands.add_parser("index-updated", help="announce a rebuilt index (emits oloproof.index.updated)")
    index.add_argument("--index-version", required=True, metavar="V")
    index.add_argument("--project", metavar="DIR", default=".", help="the project to evaluate (default: .)")
    index.add_argument("--index", default="default", metavar="NAME", help="the index's name (default: default)")
    index.add_argument("--json", action="store_true", help="print the emitted event as JSON")


_ADDERS: tuple[tuple[frozenset[str], Callable[[_Commands], None]], ...] = (
    (frozenset({"run"}), _add_run),
    (frozenset({"runs", "show", "results", "query"}), _add_reading),
    (frozenset({"diagnose", "inspect"}), _add_diagnosis),
    (frozenset({"compare", "plan"}), _add_comparison),
    (frozenset({"judge"}), _add_judge),
    (frozenset({"serve"}), _add_serve),
    (frozenset({"sweep"}), _add_sweep),
    (frozenset({"report", "trend"}), _add_reports),
    (frozenset({"server"}), _add_server),
    (frozenset({"index-updated"}), _add_index_updated),
)
"""The commands, in the order ``--help`` lists them, each group with what adds its parsers."""

COMMANDS = frozenset().union(*(names for names, _ in _ADDERS))
"""Every command's name."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every command, or of ``command`` alone (the same parser for it).

    A command line naming its command needs no other command's parser: building only its
    own keeps the start of short commands (``oloproof query``) short.
    """
    parser = argparse.ArgumentParser(
        prog="oloproof",
        description="Staged RAG evaluation on Prefect: per-stage metrics with honest intervals, "
        "failure diagnosis by controlled re-execution, paired comparison and release gates.",
    )
    parser.add_argument("--version", action="version", version=f"oloproof {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for names, add in _ADDERS:
        if command is None or command in names:
            add(commands)
    return parser


def _version() -> str:
    from oloproof import __version__

    return __version__


def _handler(command: str) -> Callable[[argparse.Namespace], int]:
    if command == "run":
        from oloproof._cli._run import run_command

        return run_command
    if command in ("serve", "index-updated"):
        from oloproof._cli import _ops

        return {"serve": _ops.serve_command, "index-updated": _ops.index_updated_command}[command]
    if command in ("compare", "plan"):
        from oloproof._cli import _compare

        return {"compare": _compare.compare_command, "plan": _compare.plan_command}[command]
    if command == "judge":
        from oloproof._cli import _judge

        return lambda args: {"sample": _judge.sample_command, "validate": _judge.validate_command,
                             "validations": _judge.validations_command}[args.judge_command](args)
    if command == "sweep":
        from oloproof._cli._sweep import sweep_command

        return sweep_command
    if command == "server":
        from oloproof._cli._server import server_command

        return server_command
    if command in ("report", "trend"):
        from oloproof._cli import _report

        return {"report": _report.report_command, "trend": _report.trend_command}[command]
    if command in ("diagnose", "inspect"):
        from oloproof._cli import _diagnose

        return {"diagnose": _diagnose.diagnose_command, "inspect": _diagnose.inspect_command}[command]
    from oloproof._cli import _read

    return {"runs": _read.runs_command, "show": _read.show_command, "query": _read.query_command,
            "results": _read.results_command}[command]


def _raise(error: BaseException) -> None:
    raise error


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    if threading.current_thread() is not threading.main_thread():
        return _main(argv)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        return _main(argv)
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: _raise(interruption(signum)))
    try:
        return _main(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(argv: Sequence[str] | None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_INPUT
    try:
        return _handler(args.command)(args)
    except OloproofError as error:
        from oloproof._cli._common import terminal_safe

        print(f"oloproof: error: {terminal_safe(str(error))}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except Terminated:
        print(f"oloproof: terminated{_kept(args.command)}", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print(f"oloproof: interrupted{_kept(args.command)}", file=sys.stderr)
        return 130


def _kept(command: str) -> str:
    return "" if command in _WRITES_NOTHING else "; records already written are kept"


def entry() -> NoReturn:
    """The ``oloproof`` console script: :func:`main`, then the process ends.

    A statement stopped at ``--timeout`` or by a signal may still be inside DuckDB after
    its grace; the interpreter's finalization would abort on it (SIGABRT), so the
    process then ends at once, its output flushed, with the code ``main`` chose.
    """
    code = main()
    from oloproof.store import statements_running

    if statements_running():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
