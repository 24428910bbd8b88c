#!/usr/bin/env python
"""``oloproof run`` against ``inspect eval`` (inspect_ai, UK AISI) on the same workload.

Both sides evaluate N cases (default 2,000), each with one 200 ms generation, 32 at
a time, and score one "the expected text is in the answer" criterion:

* Oloproof: ``bench_engine.py``'s synthetic project (retrieve 0 ms, generate 200 ms,
  ``max_concurrency: 32``) with its evaluators cut to the one ``contains``
  criterion, run by ``bench_engine.py``'s child (the real CLI entry point with
  timers, as ``--scenario latency --start-server`` runs it) against one
  ``prefect server start`` that this script starts before timing and stops at the
  end, with a fresh ``PREFECT_HOME`` per project.
* inspect: a task file in a temporary folder with N ``Sample`` entries (the same
  questions and expected answers), a solver that awaits ``asyncio.sleep(0.2)`` and
  then calls ``generate()`` on inspect's built-in ``mockllm/model`` (given the same
  answer as custom output, with its token usage preset: without it mockllm counts
  tokens with tiktoken, which downloads its encoding), and the ``includes()``
  scorer, run as ``inspect eval task.py --model mockllm/model --max-samples 32
  --max-connections 32 --display none``. ``inspect eval`` exits 0 when the eval
  failed, so its log's status is checked after timing.

Each side is timed from spawn to exit of its command, best of ``--repeat``; the
target is ``oloproof run`` wall <= 1.0x ``inspect eval`` wall.

inspect_ai is never installed into oloproof's environment: it runs from a venv of
its own (``--inspect-python``; default ``$OLOPROOF_INSPECT_PYTHON``, else
``/tmp/inspect-venv/bin/python``). Without one, the script prints the target as
not measured (``met`` null) and exits 0.

Prints one ``inspect.name value`` line per figure; with ``--json`` the last line
of stdout is ``{"scenario": "inspect", "figures", "targets", "notes"}``, each
target ``{"name", "target", "measured", "ratio", "met"}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from _report import load_engine

DEFAULT_INSPECT_PYTHON = Path("/tmp/inspect-venv/bin/python")
INSPECT_PYTHON_ENV = "OLOPROOF_INSPECT_PYTHON"
INSTALL_HINT = "python3 -m venv /tmp/inspect-venv && /tmp/inspect-venv/bin/pip install inspect_ai"
GENERATE_MS = 200.0
RETRIEVE_MS = 0.0
CONCURRENCY = 32
LIMIT = 1.0  # oloproof run wall / inspect eval wall
TARGET_NAME = "oloproof_vs_inspect"
# The two evaluators of bench_engine's project that the inspect side has no counterpart for.
EXTRA_EVALUATORS = ("  - {type: hit_rate, k: 2}\n", "  - {type: citation_validity}\n")

TASK_TEMPLATE = '''\
"""Inspect task written by benchmarks/bench_inspect.py: {cases} samples, {generate_ms:g} ms, then one mock generation."""

import asyncio
import re

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, TaskState, solver

GENERATE_S = {generate_s!r}
NUMBER = re.compile(r"number (\\d+)")


@solver
def sleep_then_generate():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await asyncio.sleep(GENERATE_S)
        return await generate(state)

    return solve


def answer(messages, tools, tool_choice, config):
    # The same answer as bench_engine's system: "The answer is <n>." for question number n.
    text = " ".join(message.text for message in messages)
    output = ModelOutput.from_content(model="mockllm/model", content=f"The answer is {{NUMBER.search(text)[1]}}.")
    # A usage given here keeps mockllm from counting tokens with tiktoken, which would
    # download its o200k_base encoding (no network here; a real API reports usage itself).
    words = len(text.split())
    output.usage = ModelUsage(input_tokens=words, output_tokens=4, total_tokens=words + 4)
    return output


SAMPLES = [
{samples}
]


@task
def bench():
    return Task(
        dataset=SAMPLES,
        solver=sleep_then_generate(),
        scorer=includes(),
        model=get_model("mockllm/model", custom_outputs=answer),
    )
'''

LOG_CHECK = '''\
import json, sys
from datetime import datetime
from pathlib import Path
from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

path = str(next(Path(sys.argv[1]).glob("*.eval")))
log = read_eval_log(path, header_only=True)
summaries = read_eval_log_sample_summaries(path)
spans = [(datetime.fromisoformat(s.started_at), datetime.fromisoformat(s.completed_at))
         for s in summaries if s.started_at and s.completed_at]
edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans], key=lambda e: (e[0], e[1]))
running = peak = 0
for _, step in edges:
    running += step
    peak = max(peak, running)
metrics = {m.name: m.value for score in (log.results.scores if log.results else []) for m in score.metrics.values()}
stats = log.stats
print(json.dumps({
    "status": log.status, "error": str(log.error.message)[:500] if log.error else None,
    "samples": len(summaries), "completed": log.results.completed_samples if log.results else 0,
    "accuracy": metrics.get("accuracy"), "peak_concurrent_samples": peak,
    "eval_s": (datetime.fromisoformat(stats.completed_at) - datetime.fromisoformat(stats.started_at)).total_seconds()
    if stats.started_at and stats.completed_at else None,
    "samples_window_s": (max(b for _, b in spans) - min(a for a, _ in spans)).total_seconds() if spans else None,
    "log_bytes": Path(path).stat().st_size,
}))
'''


def _log(message: str) -> None:
    print(f"# {message}", file=sys.stderr, flush=True)


def target_text(cases: int) -> str:
    """The target's wording, with the case count of this run."""
    return (f"oloproof run wall <= {LIMIT} x inspect eval wall ({cases} cases, {GENERATE_MS:g} ms generation, "
            f"concurrency {CONCURRENCY})")


# ---------------------------------------------------------------------------
# inspect's own interpreter
# ---------------------------------------------------------------------------


def resolve_inspect_python(given: str | None) -> Path | None:
    """The interpreter of inspect_ai's venv: the option, the environment, or the default path.

    Args:
        given: ``--inspect-python`` as given, or None.

    Returns:
        The path to try, or None when nothing was given and the default is absent.
    """
    chosen = given or os.environ.get(INSPECT_PYTHON_ENV)
    if chosen:
        return Path(chosen)
    return DEFAULT_INSPECT_PYTHON if DEFAULT_INSPECT_PYTHON.exists() else None


def inspect_version(python: Path | None) -> dict[str, str] | None:
    """inspect_ai's version and its interpreter's, as ``python`` reports them; None when it cannot import it.

    Args:
        python: The interpreter to ask, or None.
    """
    if python is None or not python.exists():
        return None
    probe = "import json, platform, inspect_ai; print(json.dumps([inspect_ai.__version__, platform.python_version()]))"
    try:
        done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=300,
                              env=inspect_env(None), check=False)
        version, python_version = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    return {"inspect_ai": version, "python": python_version} if done.returncode == 0 else None


def inspect_env(data_home: Path | None) -> dict[str, str]:
    """The environment of inspect's processes: no INSPECT_* settings of the caller, no hooks.

    ``INSPECT_TELEMETRY`` and ``INSPECT_API_KEY_OVERRIDE`` name hook modules (telemetry is
    opt-in through them), and other INSPECT_* variables would change the run, so all go.

    Args:
        data_home: A fresh XDG data and cache home (inspect's sample buffer, traces),
            or None to keep the caller's.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("INSPECT_")}
    env.update({"DO_NOT_TRACK": "1", "NO_COLOR": "1"})
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    if data_home is not None:
        env["XDG_DATA_HOME"] = str(data_home / "data")
        env["XDG_CACHE_HOME"] = str(data_home / "cache")
    return env


def inspect_cli(python: Path) -> list[str]:
    """The ``inspect`` console script next to ``python`` (what users run), else ``python -m inspect_ai``."""
    script = python.with_name("inspect")
    return [str(script)] if script.exists() else [str(python), "-m", "inspect_ai"]


# ---------------------------------------------------------------------------
# The inspect side
# ---------------------------------------------------------------------------


def write_inspect_task(directory: Path, cases: int, topics: tuple[str, ...]) -> Path:
    """Write the task file: bench_engine's questions as samples, their answers as targets.

    Args:
        directory: Folder to write ``task.py`` into (created).
        cases: Number of samples.
        topics: bench_engine's topics, so the questions are the Oloproof project's.

    Returns:
        The task file.
    """
    directory.mkdir(parents=True, exist_ok=True)
    samples = "\n".join(_sample_line(n, topics[n % len(topics)]) for n in range(cases))
    path = directory / "task.py"
    path.write_text(TASK_TEMPLATE.format(cases=cases, generate_ms=GENERATE_MS, generate_s=GENERATE_MS / 1000.0,
                                         samples=samples), encoding="utf-8")
    return path


def _sample_line(n: int, topic: str) -> str:
    """One ``Sample`` of the task file: bench_engine's case n (id, question, expected answer)."""
    question = f"Synthetic question number {n} about {topic}?"
    return f"    Sample(id={f'case-{n:06d}'!r}, input={question!r}, target={f'answer is {n}.'!r}),"


def run_inspect(engine: ModuleType, python: Path, task: Path, run_dir: Path, timeout: float) -> dict[str, Any]:
    """Time one ``inspect eval`` from spawn to exit; check its log (not timed).

    Args:
        engine: bench_engine, for ``wait_child``.
        python: inspect's interpreter.
        task: The task file.
        run_dir: A fresh folder for this run's log, data home and output.
        timeout: Seconds before the command's process group is killed.

    Returns:
        ``wall_s``, ``cpu_s``, ``peak_rss_mb`` and the log's figures.
    """
    log_dir = run_dir / "logs"
    # The task by its name in the working folder: inspect globs task paths, and pathlib refuses absolute patterns.
    argv = [*inspect_cli(python), "eval", task.name, "--model", "mockllm/model", "--max-samples", str(CONCURRENCY),
            "--max-connections", str(CONCURRENCY), "--log-dir", str(log_dir), "--display", "none"]
    env = inspect_env(run_dir)
    with (run_dir / "inspect.out").open("wb") as out, (run_dir / "inspect.err").open("wb") as err:
        begin = time.perf_counter()
        # inspect also reads a .env from its working folder upwards: the task's temporary folder has none.
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=str(task.parent), start_new_session=True)
        code, usage = engine.wait_child(process, timeout)
        wall = time.perf_counter() - begin
    if code != 0:
        tail = (run_dir / "inspect.err").read_text(encoding="utf-8", errors="replace")[-4000:]
        raise SystemExit(f"`inspect eval` failed with exit code {code}:\n{tail}")
    checked = check_inspect_log(python, log_dir, env)
    _log(f"inspect eval: {wall:.2f} s, status {checked['status']}, accuracy {checked['accuracy']}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss * 1024 / 1e6,
            **checked}


def check_inspect_log(python: Path, log_dir: Path, env: dict[str, str]) -> dict[str, Any]:
    """Status, scores and sample timing of the run's ``.eval`` log, read by inspect itself.

    ``inspect eval`` exits 0 when the eval itself failed (the error is in the log), so
    the log decides whether the run counts.

    Args:
        python: inspect's interpreter.
        log_dir: The run's ``--log-dir``.
        env: The run's environment.

    Raises:
        SystemExit: The eval did not succeed on every sample.
    """
    done = subprocess.run([str(python), "-c", LOG_CHECK, str(log_dir)], capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"could not read inspect's log in {log_dir}:\n{done.stderr[-4000:]}")
    checked: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if checked["status"] != "success" or checked["error"]:
        raise SystemExit(f"inspect eval ended with status {checked['status']}: {checked['error']}")
    return checked


# ---------------------------------------------------------------------------
# The Oloproof side
# ---------------------------------------------------------------------------


def oloproof_bench(engine: ModuleType, workdir: Path, use_async: bool, timeout: float) -> Any:
    """bench_engine's ``Bench`` set up as ``--scenario latency --start-server`` with this workload."""
    argv = ["--start-server", "--retrieve-ms", str(RETRIEVE_MS), "--generate-ms", str(GENERATE_MS),
            "--concurrency", str(CONCURRENCY), "--timeout", str(timeout)]
    args = engine.build_parser().parse_args(argv + (["--async"] if use_async else []))
    return engine.Bench(args, workdir)


def oloproof_project(engine: ModuleType, bench: Any, cases: int, label: str) -> Path:
    """bench_engine's synthetic project (fresh folder and PREFECT_HOME) scoring ``contains`` only."""
    project = engine._project(bench, label, cases, RETRIEVE_MS, GENERATE_MS)
    config = project / "oloproof.yaml"
    text = config.read_text(encoding="utf-8")
    for line in EXTRA_EVALUATORS:
        if line not in text:
            raise SystemExit(f"bench_engine's oloproof.yaml changed: {line.strip()!r} not found in {config}")
        text = text.replace(line, "")
    config.write_text(text, encoding="utf-8")
    return project


def run_oloproof(engine: ModuleType, bench: Any, cases: int, label: str) -> dict[str, Any]:
    """Time one ``oloproof run`` from spawn to exit (bench_engine's child); count its passed judgments."""
    project = oloproof_project(engine, bench, cases, label)
    figures: dict[str, Any] = bench.run_cli(project, label)
    judgments = project / "results" / "runs" / figures["run_id"] / "judgments.parquet"
    rows = engine._table_rows(judgments, "criterion, passed")
    figures["answer_correct_passed"] = sum(1 for criterion, passed in rows if criterion == "answer_correct" and passed)
    figures["judgments"] = len(rows)
    figures["results_bytes"] = sum(p.stat().st_size for p in (project / "results").rglob("*") if p.is_file())
    return figures


# ---------------------------------------------------------------------------
# Measuring and reporting
# ---------------------------------------------------------------------------


def measure(args: argparse.Namespace, python: Path, engine: ModuleType, workdir: Path) -> dict[str, Any]:
    """Run both sides ``--repeat`` times (alternating which goes first); keep each side's best."""
    bench = oloproof_bench(engine, workdir, not args.sync, args.timeout)
    inspect_runs: list[dict[str, Any]] = []
    oloproof_runs: list[dict[str, Any]] = []
    try:
        bench.start_server()
        for k in range(args.repeat):
            # Alternating the order keeps a warmer page cache from always favouring the same side.
            for side in ("inspect", "oloproof") if k % 2 == 0 else ("oloproof", "inspect"):
                if side == "inspect":
                    run_dir = workdir / f"inspect-{k:02d}"
                    # A fresh task folder each time (no task.pyc from an earlier repeat), as oloproof's projects.
                    task = write_inspect_task(run_dir / "task", args.cases, engine.TOPICS)
                    inspect_runs.append(run_inspect(engine, python, task, run_dir, args.timeout))
                else:
                    oloproof_runs.append(run_oloproof(engine, bench, args.cases, f"inspect-{args.cases}-{k:02d}"))
    finally:
        bench.stop_server()
    return {"inspect": inspect_runs, "oloproof": oloproof_runs}


def figures_of(args: argparse.Namespace, runs: dict[str, Any], version: dict[str, str], python: Path) -> dict[str, Any]:
    """The figures of the best run of each side, with every run's wall time when repeated."""
    ins = min(runs["inspect"], key=lambda r: r["wall_s"])
    olo = min(runs["oloproof"], key=lambda r: r["command_s"])
    ideal = args.cases * GENERATE_MS / 1000.0 / CONCURRENCY
    figures: dict[str, Any] = {
        "cases": args.cases, "retrieve_ms": RETRIEVE_MS, "generate_ms": GENERATE_MS, "concurrency": CONCURRENCY,
        "repeats": args.repeat, "async": not args.sync, "ideal_s": ideal,
        "ideal_waves_s": -(-args.cases // CONCURRENCY) * GENERATE_MS / 1000.0,
        "inspect_wall_s": ins["wall_s"], "inspect_eval_s": ins["eval_s"],
        "inspect_samples_window_s": ins["samples_window_s"],
        "inspect_peak_concurrent_samples": ins["peak_concurrent_samples"], "inspect_samples": ins["samples"],
        "inspect_accuracy": ins["accuracy"], "inspect_cpu_s": ins["cpu_s"], "inspect_peak_rss_mb": ins["peak_rss_mb"],
        "inspect_log_bytes": ins["log_bytes"],
        "oloproof_command_s": olo["command_s"], "oloproof_flow_s": olo.get("flow_s"),
        "oloproof_pre_flow_s": olo.get("pre_flow_s"), "oloproof_calls_window_s": olo.get("calls_window_s"), "oloproof_answer_correct_passed": olo["answer_correct_passed"],
        "oloproof_judgments": olo["judgments"], "oloproof_cpu_s": olo.get("cpu_oloproof_s"),
        "oloproof_peak_rss_mb": olo.get("peak_rss_mb"), "oloproof_results_bytes": olo["results_bytes"],
        "oloproof_vs_inspect": olo["command_s"] / ins["wall_s"],
        "inspect_version": version["inspect_ai"], "inspect_python": str(python),
        "inspect_python_version": version["python"], "oloproof_python_version": platform.python_version(),
    }
    if figures["oloproof_flow_s"] and ins["eval_s"]:
        figures["oloproof_flow_vs_inspect_eval"] = figures["oloproof_flow_s"] / ins["eval_s"]
    if args.repeat > 1:
        figures["inspect_wall_s_each"] = [round(r["wall_s"], 4) for r in runs["inspect"]]
        figures["oloproof_command_s_each"] = [round(r["command_s"], 4) for r in runs["oloproof"]]
    return {key: value for key, value in figures.items() if value is not None}


def measured_target(cases: int, ratio: float) -> dict[str, Any]:
    """The one target, measured: ``ratio`` is the quotient it bounds by 1.0."""
    return {"name": TARGET_NAME, "target": target_text(cases), "measured": ratio, "ratio": ratio / LIMIT,
            "met": bool(ratio <= LIMIT)}


def notes_of(args: argparse.Namespace, figures: dict[str, Any], cpus: str) -> list[str]:
    """What each side does and does not do, and where it ran."""
    flavour = "async def + asyncio.sleep" if not args.sync else "def + time.sleep in worker threads"
    notes = [
        (f"{cpus}; oloproof on Python {figures['oloproof_python_version']}; inspect_ai "
         f"{figures['inspect_version']} on Python {figures['inspect_python_version']} ({figures['inspect_python']}, "
         f"a venv of its own); best of {args.repeat} per side, sides alternating"),
        (f"oloproof: `oloproof run` (bench_engine.py's child: oloproof._cli.main with timers) on bench_engine's "
         f"synthetic project, {flavour}: retrieve {RETRIEVE_MS:g} ms (4 candidates, top 2 in context), generate "
         f"{GENERATE_MS:g} ms, max_concurrency {CONCURRENCY}, one evaluator (contains 'answer is <n>.'); it loads "
         "cases.jsonl, writes the run's Parquet tables (cases, retrievals, judgments) and its stage and execution "
         "cache, and reports; against one `prefect server start` started before timing (not timed) with a "
         "fresh PREFECT_HOME per project; wall = spawn to exit"),
        (f"inspect: `inspect eval task.py --model mockllm/model --max-samples {CONCURRENCY} --max-connections "
         f"{CONCURRENCY} --display none`: {args.cases} Samples written in task.py, a solver that awaits "
         f"asyncio.sleep({GENERATE_MS / 1000:g}) then calls generate() on the task's mockllm/model (custom_outputs: "
         "'The answer is <n>.' with its usage preset, so mockllm does not tokenize with tiktoken, whose encoding it "
         "would download), the includes() scorer (target 'answer is <n>.'); it writes its .eval log (samples and "
         "events), its realtime sample buffer and trace (a fresh XDG data home); no retrieval stage, no cache, no "
         "Parquet tables, no server; the caller's INSPECT_* variables (telemetry and API-key hooks among them) "
         "removed; wall = spawn to exit"),
        (f"inspect's samples overlapped at most {figures['inspect_peak_concurrent_samples']} at a time "
         f"(admission to completion, from its log); ideal N x {GENERATE_MS:g} ms / {CONCURRENCY} = "
         f"{figures['ideal_s']:.2f} s, {figures['ideal_waves_s']:.2f} s in whole waves"),
        ("inspect_eval_s: the log's eval start to end (whole seconds); inspect_samples_window_s: first sample "
         "admitted to last completed, the counterpart of oloproof_calls_window_s (first to last stage call); "
         "oloproof_flow_s: the flow call, without process start and report"),
    ]
    if figures["oloproof_answer_correct_passed"] != args.cases or figures["inspect_accuracy"] != 1.0:
        notes.append(f"scores differ from the expected all-pass: oloproof {figures['oloproof_answer_correct_passed']}"
                     f"/{args.cases}, inspect accuracy {figures['inspect_accuracy']}")
    return notes


def emit(figures: dict[str, Any], targets: list[dict[str, Any]], notes: list[str], as_json: bool) -> None:
    """Print ``inspect.name value`` lines, the target, the notes, and the JSON line with ``--json``."""
    load_engine()._print_figures("inspect", figures)
    for entry in targets:
        measured = entry["measured"] if isinstance(entry["measured"], str | None) else f"{entry['measured']:.4g}"
        print(f"inspect.target.{entry['name']} {measured} ({entry['target']}; met: {entry['met']})")
    for note in notes:
        print(f"# {note}")
    if as_json:
        print(json.dumps({"scenario": "inspect", "figures": figures, "targets": targets, "notes": notes}))
    sys.stdout.flush()


def not_measured(args: argparse.Namespace, python: Path | None, cpus: str) -> int:
    """Report the target as not measured (no usable inspect_ai venv); exit status 0."""
    reason = f"not measured: inspect_ai not installed ({INSTALL_HINT})"
    figures = {"cases": args.cases, "inspect_python": str(python) if python else None}
    targets = [{"name": TARGET_NAME, "target": target_text(args.cases), "measured": reason, "ratio": None,
                "met": None}]
    notes = [f"{cpus}; Python {platform.python_version()}",
             (f"{python or DEFAULT_INSPECT_PYTHON} cannot import inspect_ai; it is never installed into oloproof's "
              f"environment; set --inspect-python or ${INSPECT_PYTHON_ENV}")]
    emit(figures, targets, notes, args.json)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="bench_inspect.py",
        description=textwrap.dedent(f"""\
            `oloproof run` vs `inspect eval` on N cases of one {GENERATE_MS:g} ms generation, concurrency
            {CONCURRENCY}, one contains criterion (target: oloproof <= {LIMIT}x inspect, spawn to exit)."""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cases", type=int, default=2000, metavar="N", help="cases on each side (default 2000)")
    parser.add_argument("--repeat", type=int, default=1, metavar="K", help="best of K runs per side (default 1)")
    parser.add_argument("--inspect-python", default=None, metavar="PATH",
                        help=f"python of a venv with inspect_ai (default: ${INSPECT_PYTHON_ENV}, else "
                             f"{DEFAULT_INSPECT_PYTHON} if it exists)")
    parser.add_argument("--sync", action="store_true",
                        help="oloproof's synthetic system with def + time.sleep (default: async def + asyncio.sleep, "
                             "like inspect's solver)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="kill a command after this many s (default 1800)")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (projects, logs, task file)")
    parser.add_argument("--json", action="store_true",
                        help='end with one line {"scenario", "figures", "targets", "notes"}')
    return parser


def main(argv: list[str] | None = None) -> int:
    """Measure both sides, or report the target as not measured without inspect_ai."""
    args = build_parser().parse_args(argv)
    if args.cases < 1 or args.repeat < 1:
        raise SystemExit("--cases and --repeat must be at least 1")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cpus = f"{os.cpu_count()} CPUs, load average {load:.2f} at the start"
    python = resolve_inspect_python(args.inspect_python)
    version = inspect_version(python)
    if python is None or version is None:
        return not_measured(args, python, cpus)
    engine = load_engine()
    workdir = Path(tempfile.mkdtemp(prefix="oloproof-bench-inspect-"))
    _log(f"work dir {workdir}; inspect_ai {version['inspect_ai']} from {python}")
    try:
        runs = measure(args, python, engine, workdir)
    finally:
        if args.keep:
            _log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    figures = figures_of(args, runs, version, python)
    emit(figures, [measured_target(args.cases, figures["oloproof_vs_inspect"])], notes_of(args, figures, cpus),
         args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
