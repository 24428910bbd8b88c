#!/usr/bin/env python
"""Every benchmark scenario side by side, in one process tree: ``benchmarks/RESULTS.md``.

Runs each scenario's script in a child process (one after another, so they do not
compete for the cores), reads the figures each prints as JSON, checks every target
of the scale issue against them and writes ``benchmarks/RESULTS.md`` (the table, the
machine, the commit) and ``benchmarks/results.json``. A target not met is printed
as not met, with the measured ratio; nothing here asserts a timing.

    python benchmarks/run_all.py                         # everything (about an hour on 2 cores)
    python benchmarks/run_all.py --only metrics,store_query
    python benchmarks/run_all.py --quick --out /tmp/R.md --json-out /tmp/r.json   # tiny sizes: the harness works

Scenarios: latency, rerun, size, s3, metrics, store_query, judges, startup, second_run, recorded,
recorded_resume, inspect.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# This folder is on sys.path: the scripts run as files.
from _profiles import profile, profile_skipped
from _profiles import render as render_profiles

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


@dataclass
class Scenario:
    """One row group of RESULTS.md: the commands it runs and how their figures are judged."""

    name: str
    title: str
    commands: Callable[[bool], list[list[str]]]
    """The child commands (full size, or ``quick``), each printing JSON last."""
    judge: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    """Targets from the children's figures: name, target, measured, ratio, met."""
    results: list[dict[str, Any]] = field(default_factory=list)


def _python(script: str, *args: str) -> list[str]:
    return [sys.executable, str(HERE / script), *args]


def _target(name: str, target: str, measured: Any, ratio: float | None, met: bool | None) -> dict[str, Any]:
    return {"name": name, "target": target, "measured": measured, "ratio": ratio, "met": met}


def _child_targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Scripts that judge their own targets (the ``{"targets": [...]}`` shape)."""
    return [t for r in results for t in r.get("targets", [])]


# -- engine scenarios (bench_engine.py prints its own JSON shape) ----------------------


LATENCY_REPEATS = 3
"""Side-by-side repeats of the latency scenario: the flow and the bare loop, in turn."""


def _latency_commands(quick: bool) -> list[list[str]]:
    cases = "100" if quick else "2000"
    pair = [_python("bench_engine.py", "--scenario", "latency", "--cases", cases, "--start-server"),
            _python("bench_baselines.py", "asyncio", "--cases", cases, "--json")]
    return pair * (1 if quick else LATENCY_REPEATS)


def _spread(values: list[float]) -> str:
    import statistics

    return f"min/median/max {min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def _latency_targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import statistics

    engines = [r["latency"] for r in results[0::2]]
    bare = [r["figures"]["wall_s"] for r in results[1::2]]
    ideal = [e["flow_ratio"] for e in engines]
    vs_bare = [e["flow_s"] / b for e, b in zip(engines, bare, strict=True)]
    each = f"in each of {len(engines)} repeats, Python {platform.python_version()}"
    return [
        _target("flow call / ideal N·L/C", f"≤ 1.20 {each} ({_spread(ideal)})", statistics.median(e["flow_s"] for e in engines),
                statistics.median(ideal), max(ideal) <= 1.20),
        _target("flow call / bare asyncio loop", f"≤ 1.10 {each} ({_spread(vs_bare)})",
                statistics.median(e["flow_s"] for e in engines), statistics.median(vs_bare), max(vs_bare) <= 1.10),
        _target("whole command (running server) / ideal", f"reported ({_spread([e['command_ratio'] for e in engines])})",
                statistics.median(e["command_s"] for e in engines),
                statistics.median(e["command_ratio"] for e in engines), None),
    ]  # fmt: skip


def _rerun_commands(quick: bool) -> list[list[str]]:
    cases = "100" if quick else "2000"
    return [_python("bench_engine.py", "--scenario", "rerun", "--cases", cases, "--start-server"),
            _python("bench_engine.py", "--scenario", "rerun10", "--cases", cases, "--start-server", "--json")]


def _rerun_targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rerun = results[0]["rerun"]
    ratio = rerun.get("warm_cold_flow_ratio")
    return [
        _target("nothing changed: warm / cold, from flow start", "≤ 0.08", rerun.get("warm_flow_s"), ratio,
                ratio is not None and ratio <= 0.08),
        _target("nothing changed: warm / cold, whole command", "reported", rerun.get("warm_command_s"),
                rerun.get("warm_cold_command_ratio"), None),
        *_child_targets(results[1:]),
    ]  # fmt: skip


def _size_commands(quick: bool) -> list[list[str]]:
    sizes = "200,1000" if quick else "1000,10000,100000"
    return [_python("bench_engine.py", "--scenario", "memory", "--cases", sizes, "--start-server"),
            _python("bench_baselines.py", "loop", "--cases", "1000" if quick else "10000", "--json")]


def _size_targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    memory = results[0]["memory"]
    runs = memory.get("runs", [memory])
    largest = max(runs, key=lambda r: r["cases"])
    at_10k = min(runs, key=lambda r: abs(r["cases"] - 10_000))
    ours_ms = at_10k["flow_s"] / at_10k["cases"] * 1000
    out = [_target(f"peak RSS at {largest['cases']:,} cases (MB)", "≤ 1,500", largest["peak_rss_mb"],
                   largest["peak_rss_mb"] / 1500, largest["peak_rss_mb"] <= 1500)]  # fmt: skip
    if "figures" in results[1]:
        loop_ms = results[1]["figures"]["ms_per_case"]
        out.append(_target(f"per-case cost at {at_10k['cases']:,} (flow, ms) / bare Python loop with pyarrow", "≤ 5",
                           ours_ms, ours_ms / loop_ms, ours_ms / loop_ms <= 5))  # fmt: skip
    else:
        out.append(_target("per-case cost / bare Python loop with pyarrow", "≤ 5 (baseline not measured: "
                           f"{results[1].get('error')})", ours_ms, None, None))  # fmt: skip
    if "slope_peak_rss_mb_per_1k_cases" in memory:
        out.append(_target("peak RSS slope (MB per 1,000 cases, least squares)", "reported (linear)",
                           memory["slope_peak_rss_mb_per_1k_cases"], None, None))  # fmt: skip
    return out


def _s3_commands(quick: bool) -> list[list[str]]:
    # The 10,000 cases take 35-55 minutes on moto over 2 cores (it scans every key of
    # the bucket on each listing): the constancy of requests per case shows at 250 and 1,000.
    return [_python("bench_s3.py", "--cases", "100,200" if quick else "250,1000", "--json")]


def _metrics_commands(quick: bool) -> list[list[str]]:
    return [_python("bench_metrics.py", "--queries", "2000" if quick else "100000", "--json")]


def _metrics_targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    figures = results[0]
    batch = figures["batch_s"]
    out = [_target("batch kernels values identical to the per-query loop", "identical", figures["batch_identical"],
                   None, figures["batch_identical"])]  # fmt: skip
    if "pytrec_eval" in figures:
        ref = figures["pytrec_eval"]
        out.append(_target("batch / pytrec_eval", "< 1 (faster), values within 1e-9", batch, ref["batch_ratio"],
                           ref["batch_ratio"] < 1 and ref["agree"]))  # fmt: skip
    else:
        out.append(_target("batch / pytrec_eval", "< 1", batch, None, None))
    if "ranx" in figures:
        ref = figures["ranx"]
        out.append(_target("batch / ranx", "≤ 1.5, values within 1e-9", batch, ref["batch_ratio"],
                           ref["batch_ratio"] <= 1.5 and ref["agree"]))  # fmt: skip
    else:
        out.append(_target("batch / ranx", "≤ 1.5 (ranx not installed: pip install ranx)", batch, None, None))
    return out


def _store_query_commands(quick: bool) -> list[list[str]]:
    args = ["--runs", "5", "--rows", "2000"] if quick else []
    return [_python("bench_store_query.py", *args, "--json")]


def _judges_commands(quick: bool) -> list[list[str]]:
    return [_python("bench_judges.py", "--calls", "200" if quick else "2000", "--json")]


def _judges_targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    figures = results[0]
    share = figures["fraction_of_permitted"]
    unhandled = figures["failed_calls"]
    return [
        _target("achieved rate / permitted (6,000 a minute, 100 ms answers)", "≥ 0.90", figures["achieved_per_s"],
                share, share >= 0.90),
        _target("unhandled 429s (failed calls)", "0", unhandled, None, unhandled == 0),
    ]  # fmt: skip


def _startup_commands(quick: bool) -> list[list[str]]:
    return [_python("bench_baselines.py", "startup", "--repeat", "1" if quick else "3", "--json")]


RECORDED_ROWS = (100_000, 1_000_000)
"""The recorded rows scored by ``document_retrieval``; an LLM judge's run has the first."""

RECORDED_REPEATS = 3
"""Repeats of the 100,000-row pair (oloproof, then azure ``evaluate()``); the million rows run once
(about 15 minutes a side, and azure is given 30)."""


def _recorded_commands(quick: bool) -> list[list[str]]:
    small, large = (500, 5000) if quick else RECORDED_ROWS
    repeats = 1 if quick else RECORDED_REPEATS
    # evaluate() on a million rows is given 30 minutes; past that the row says it did not finish.
    return [*[_python("bench_recorded.py", "--rows", str(small), "--json")] * repeats,
            _python("bench_recorded.py", "--rows", str(large), "--azure-timeout", "1800", "--json"),
            _python("bench_recorded.py", "--rows", str(small), "--judge", "groundedness", "--json")]


def _repeated(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One target per name over repeated runs: the median, the spread, met only if met in each."""
    import statistics

    if len(runs) == 1:
        return runs[0]
    out = []
    for same in zip(*runs, strict=True):
        measured = [t["measured"] for t in same]
        ratios = [t["ratio"] for t in same]
        mets = [t["met"] for t in same]
        if any(m is None for m in measured):
            out.append(same[0])
            continue
        out.append(_target(same[0]["name"], f"{same[0]['target']}, in each of {len(runs)} repeats ({_spread(measured)})",
                           statistics.median(measured),
                           None if any(r is None for r in ratios) else statistics.median(ratios),
                           None if any(m is None for m in mets) else all(mets)))  # fmt: skip
    return out


def _recorded_targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import statistics

    repeats, (large_run, judged_run) = results[:-2], results[-2:]
    smalls = [r["figures"] for r in repeats]
    large, judged = large_run["figures"], judged_run["figures"]
    out = [*_repeated([r.get("targets", []) for r in repeats]), *_child_targets([large_run, judged_run])]
    small = smalls[0]
    ours_s = {key: statistics.median(s["oloproof"][key] for s in smalls) for key in ("wall_s", "peak_rss_mb")}
    ours_l = large["oloproof"]
    rows = large["rows"] - small["rows"]
    slope = (ours_l["peak_rss_mb"] - ours_s["peak_rss_mb"]) / rows * 100_000
    out.append(_target(f"peak RSS slope, {small['rows']:,} (median) to {large['rows']:,} rows (MB per 100,000 rows)",
                       "reported (flat in rows: about 0)", slope, None, None))  # fmt: skip
    per_row = (ours_l["wall_s"] / large["rows"]) / (ours_s["wall_s"] / small["rows"])
    out.append(_target(f"wall per row at {large['rows']:,} / at {small['rows']:,} (median)", "≤ 1.10 (wall linear in rows)",
                       per_row, per_row, ours_l.get("code") == 0 and per_row <= 1.10))  # fmt: skip
    judge = judged["oloproof"]["wall_s"] / ours_s["wall_s"]
    out.append(_target(f"{small['rows']:,} rows, groundedness over a stub judge / document_retrieval (median)",
                       "≤ 2", judge, judge / 2, judged["oloproof"].get("code") == 0 and judge <= 2))  # fmt: skip
    return out


def _recorded_resume_commands(quick: bool) -> list[list[str]]:
    return [_python("recorded_resume.py", "--rows", "2000" if quick else "100000", "--json")]


def _inspect_commands(quick: bool) -> list[list[str]]:
    return [_python("bench_inspect.py", "--cases", "40" if quick else "2000", "--json")]


def _second_run_commands(quick: bool) -> list[list[str]]:
    return [_python("second_run.py", "--repeats", "1" if quick else "3", "--json")]


def _second_run_targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import statistics

    kept, temporary = statistics.median(results[0]["reuse"]), statistics.median(results[0]["temporary"])
    return [
        _target("second run, kept local server (s, median)", "≤ 6", kept, kept / 6, kept <= 6),
        _target("second run, temporary server per command (s, median)", "reported", temporary, None, None),
    ]


SCENARIOS = [
    Scenario("latency", "latency-bound: 2,000 cases, retrieve 20 ms, generate 200 ms, max_concurrency 32",
             _latency_commands, _latency_targets),
    Scenario("rerun", "cached re-run: nothing changed / generation invalidated for 10% of cases",
             _rerun_commands, _rerun_targets),
    Scenario("size", "size scaling: zero-latency system, 1k / 10k / 100k cases", _size_commands, _size_targets),
    Scenario("s3", "S3 (local moto server): cold and cached", _s3_commands, _child_targets),
    Scenario("metrics", "metric kernels: 100,000 queries × 100 candidates", _metrics_commands, _metrics_targets),
    Scenario("store_query", "store queries: an aggregate over 1,000,000 judgment rows in 100 runs",
             _store_query_commands, _child_targets),
    Scenario("judges", "judges: 2,000 calls, 100 ms answers, 6,000 requests/minute", _judges_commands,
             _judges_targets),
    Scenario("startup", "start-up: the 13-case example end to end against a hello-world flow",
             _startup_commands, _child_targets),
    Scenario("second_run", "the example's second `oloproof run` in a fresh shell, no server configured",
             _second_run_commands, _second_run_targets),
    Scenario("recorded", "recorded rows: 100,000 and 1,000,000 scored by document_retrieval (10 labels, 10 documents "
             "a row), 100,000 by groundedness over a stub judge", _recorded_commands, _recorded_targets),
    Scenario("recorded_resume", "recorded rows killed with SIGKILL mid-run, then the same command: local and S3 (moto)",
             _recorded_resume_commands, _child_targets),
    Scenario("inspect", "2,000 cases, 200 ms generation, concurrency 32: `oloproof run` against `inspect eval`",
             _inspect_commands, _child_targets),
]  # fmt: skip


def _last_json(stdout: str) -> dict[str, Any]:
    """The JSON object a child printed last (one line, or the whole output)."""
    text = stdout.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON object in the output")


def run_scenario(scenario: Scenario, quick: bool, timeout: float) -> dict[str, Any]:
    """Run a scenario's children; return its figures and targets (or the error)."""
    started = time.monotonic()
    results, errors = [], []
    for command in scenario.commands(quick):
        name = " ".join(Path(c).name if c.endswith(".py") else c for c in command[1:])
        print(f"[{scenario.name}] {name}", file=sys.stderr, flush=True)
        results.append(_run_child(command, timeout))
        if "error" in results[-1]:
            errors.append(f"{name}: {results[-1]['error']}")
    try:
        targets = scenario.judge(results)
    except (KeyError, TypeError, ZeroDivisionError, IndexError) as error:
        # A child that failed leaves the figures its targets need missing: say which.
        return {"name": scenario.name, "title": scenario.title, "results": results,
                "error": "; ".join(errors) or f"figures incomplete: {error!r}"}  # fmt: skip
    return {"name": scenario.name, "title": scenario.title, "seconds": time.monotonic() - started,
            "targets": targets, "results": results, "child_errors": errors}  # fmt: skip


def _run_child(command: list[str], timeout: float) -> dict[str, Any]:
    """One child's JSON, or ``{"error": ...}``."""
    try:
        done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=timeout, cwd=REPO)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if done.returncode not in (0, 1):
        return {"error": f"exited {done.returncode}: {' '.join(done.stderr.strip().splitlines()[-1:])}"}
    try:
        return _last_json(done.stdout)
    except ValueError as error:
        return {"error": str(error)}


def profiles_for(scenarios: list[dict[str, Any]], quick: bool, timeout: float, *, skip: bool) -> list[dict[str, Any]]:
    """A profile of each scenario with a target not met, taken after every measurement."""
    out = []
    for scenario in scenarios:
        if skip:
            item = profile_skipped(scenario)
        else:
            print(f"[profile] {scenario['name']}", file=sys.stderr, flush=True)
            item = profile(scenario, quick, timeout)
        if item is not None:
            out.append(item)
    return out


def _machine() -> dict[str, Any]:
    memory = None
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            memory = int(handle.readline().split()[1]) // 1024
    except OSError:
        pass
    model = None
    try:  # which processor: the same code's ratios differ between machines of one kind
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), None)
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "processor": model or platform.processor() or platform.machine(), "memory_mb": memory}  # fmt: skip


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], check=False, capture_output=True, text=True, cwd=REPO).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else "")


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"
    return "—" if value is None else str(value)


def render(report: dict[str, Any]) -> str:
    """RESULTS.md."""
    machine = report["machine"]
    lines = [
        "# Benchmark results",
        "",
        (f"Generated by `python benchmarks/run_all.py{' --quick' if report['quick'] else ''}` on "
         f"{report['date']}; do not edit by hand."),
        "",
        f"- **Commit:** {report['commit']}",
        (f"- **Machine:** {machine['cpus']} CPUs ({machine['processor']}), "
         f"{_cell(machine['memory_mb'])} MB memory, {machine['platform']}, Python {machine['python']}"),
        "",
        ("Every target is checked on figures measured in this one run; a target not met says **NOT MET**. "
         "`measured` is the figure itself (seconds, MB, requests, or the quotient a ratio target bounds); "
         "`quotient` is the ratio the target bounds where `measured` is an absolute figure."),
        "",
        "| scenario | measure | target | measured | quotient | met |",
        "|---|---|---|---|---|---|",
    ]
    for scenario in report["scenarios"]:
        if "error" in scenario:
            lines.append(f"| {scenario['name']} | — | — | not measured: {scenario['error']} | — | **NOT MEASURED** |")
            continue
        for target in scenario["targets"]:
            met = {True: "yes", False: "**NOT MET**", None: "reported"}[target["met"]]
            lines.append(f"| {scenario['name']} | {target['name']} | {target['target']} | {_cell(target['measured'])} "
                         f"| {_cell(target['ratio'])} | {met} |")
    lines += ["", "## Scenarios", ""]
    for scenario in report["scenarios"]:
        title = scenario.get("title", scenario["name"])
        took = f" ({scenario['seconds']:.0f} s)" if "seconds" in scenario else ""
        lines.append(f"- **{scenario['name']}**{took}: {title}")
        notes = [note for result in scenario.get("results", []) for note in result.get("notes", [])]
        lines += [f"  - {note}" for note in dict.fromkeys(notes)]  # repeats print the same notes
        for error in scenario.get("child_errors", []):
            lines.append(f"  - not measured: {error}")
    lines += ["", *render_profiles(report.get("profiles", []))]
    lines += [("The figures behind every row are in `benchmarks/results.json`; the scripts and what each "
               "figure means are in `benchmarks/README.md`."), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, metavar="NAMES", help="comma-separated scenarios (default: all)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: proves the harness, measures nothing")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"), metavar="FILE")
    parser.add_argument("--json-out", default=str(HERE / "results.json"), metavar="FILE")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds one child may take")
    parser.add_argument("--no-profiles", action="store_true",
                        help="do not profile the scenarios with a target not met (RESULTS.md then says why not)")
    args = parser.parse_args(argv)
    chosen = [s for s in SCENARIOS if args.only is None or s.name in args.only.split(",")]
    unknown = set(args.only.split(",")) - {s.name for s in SCENARIOS} if args.only else set()
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    report = {"quick": args.quick, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "commit": _commit(), "machine": _machine(),
              "scenarios": [run_scenario(s, args.quick, args.timeout) for s in chosen]}  # fmt: skip
    report["profiles"] = profiles_for(report["scenarios"], args.quick, args.timeout, skip=args.no_profiles)
    Path(args.json_out).write_text(json.dumps(report, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    Path(args.out).write_text(render(report), encoding="utf-8")
    print(render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
