"""What limits a target not met: a profile of its scenario's workload, for RESULTS.md.

``run_all.py`` calls :func:`profile` for each scenario with a target not met, after
every scenario was measured (so the profiler never shares the machine with a
measurement). Engine and recorded-row workloads run once more under
``py-spy record --gil`` (sampling only the thread holding the GIL: on few cores the
interpreter's one lock is what this engine's own work queues behind); the store
query's parts are timed by ``bench_store_query.py`` itself, in its measured run.
A profiled run is slower than an unprofiled one: its shares say where the time
goes, the table's figures say how much there is.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spy_summary import summarize

HERE = Path(__file__).resolve().parent
RATE = 50
"""py-spy samples per second."""
TOP = {"oloproof": 12, "prefect": 6, "leaves": 8, "threads": 5}
"""How many entries of each list a profile shows."""
_OURS, _PREFECT = "oloproof/", "prefect/"


@dataclass(frozen=True)
class Workload:
    """A scenario's workload run under py-spy."""

    what: str
    """The run profiled, in words."""
    command: Callable[[Path, bool], tuple[list[str], Path]]
    """(folder, quick) -> the command, and the raw profile it leaves in the folder."""
    baseline: tuple[str, Callable[[Path], Path]] | None = None
    """What the same command profiled alike for comparison, and where its raw profile is."""


def _engine(scenario: str, cases: int, label: str) -> Callable[[Path, bool], tuple[list[str], Path]]:
    def command(folder: Path, quick: bool) -> tuple[list[str], Path]:
        n = min(cases, 200) if quick else cases
        argv = [sys.executable, str(HERE / "bench_engine.py"), "--scenario", scenario, "--cases", str(n),
                "--start-server", "--workdir", str(folder / "work"), "--py-spy", str(folder / "spy.txt"),
                "--py-spy-gil", "--py-spy-rate", str(RATE)]  # fmt: skip
        return argv, folder / f"spy-{label.format(cases=n)}.txt"

    return command


def _recorded(folder: Path, quick: bool) -> tuple[list[str], Path]:
    raw = folder / "spy.txt"
    return [sys.executable, str(HERE / "bench_recorded.py"), "--rows", "500" if quick else "10000",
            "--py-spy", str(raw)], raw  # fmt: skip


def _example(folder: Path, quick: bool) -> tuple[list[str], Path]:
    prefix = folder / "spy"
    return [sys.executable, str(HERE / "bench_baselines.py"), "startup", "--modes", "server", "--repeat", "1",
            "--py-spy", str(prefix), "--json"], folder / "spy-server-example.txt"  # fmt: skip


WORKLOADS = {
    "latency": Workload("The `oloproof run` of the latency scenario (2,000 cases, 20 + 200 ms)",
                        _engine("latency", 2000, "latency-{cases}")),
    "rerun": Workload("The second, all-cached `oloproof run` of the rerun scenario (2,000 cases, nothing changed)",
                      _engine("rerun", 2000, "rerun-{cases}-warm")),
    "size": Workload("The `oloproof run` of 10,000 zero-latency cases", _engine("memory", 10000, "memory-{cases}")),
    "startup": Workload("The `oloproof run` of the 13-case example against a running server", _example,
                        ("a hello-world flow", lambda folder: folder / "spy-server-hello.txt")),
    "recorded": Workload("`oloproof run --criteria --dataset` of 10,000 recorded rows (a tenth of the scenario's)",
                         _recorded),
}  # fmt: skip


def _spy() -> str | None:
    found = shutil.which("py-spy")
    if found:
        return found
    sibling = Path(sys.executable).with_name("py-spy")
    return str(sibling) if sibling.exists() else None


def _head(scenario: dict[str, Any]) -> dict[str, Any] | None:
    not_met = [t["name"] for t in scenario.get("targets", []) if t["met"] is False]
    return {"scenario": scenario["name"], "targets": not_met} if not_met else None


def profile_skipped(scenario: dict[str, Any]) -> dict[str, Any] | None:
    """What RESULTS.md says of a scenario with a target not met when profiles were not taken."""
    head = _head(scenario)
    return None if head is None else {**head, "error": "profiles were not taken (--no-profiles)"}


def profile(scenario: dict[str, Any], quick: bool, timeout: float) -> dict[str, Any] | None:
    """The profile of a measured scenario with a target not met (None when all were met)."""
    head = _head(scenario)
    if head is None:
        return None
    if scenario["name"] == "store_query":
        figures = scenario["results"][0].get("figures", {})
        if "phases_ms" not in figures:
            return {**head, "error": figures.get("phases_error", "the parts were not timed")}
        return {**head, "what": "The parts of an in-process `oloproof query` and of plain DuckDB, timed apart "
                "(median of the scenario's calls)", "phases_ms": figures["phases_ms"]}  # fmt: skip
    workload = WORKLOADS.get(scenario["name"])
    if workload is None:
        return {**head, "error": "no profile is defined for this scenario"}
    if _spy() is None:
        return {**head, "error": "not profiled: py-spy is not installed (pip install py-spy)"}
    with tempfile.TemporaryDirectory(prefix=f"oloproof-profile-{scenario['name']}-") as tmp:
        argv, raw = workload.command(Path(tmp), quick)
        try:
            done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {**head, "error": f"the profiled run timed out after {timeout:.0f} s"}
        if done.returncode not in (0, 1) or not raw.exists():
            tail = " ".join(done.stderr.strip().splitlines()[-2:])
            return {**head, "error": f"the profiled run failed (exit {done.returncode}): {tail}"}
        out = {**head, "what": workload.what, **summary_of(raw), **_timeline(scenario)}
        if workload.baseline is not None:
            what, where = workload.baseline
            if where(Path(tmp)).exists():
                out["baseline"] = {"what": what, "samples": summarize(where(Path(tmp))).total}
        return out


def _timeline(scenario: dict[str, Any]) -> dict[str, Any]:
    """Where the measured flow call's time went (latency, rerun): from the scenario's own figures."""
    name, results = scenario["name"], scenario.get("results", [])
    if name == "latency" and results and "latency" in results[0]:
        figures, prefix = results[0]["latency"], ""
        reference = [("the bare asyncio loop, first call to last answer",
                      results[1].get("figures", {}).get("wall_s") if len(results) > 1 else None),
                     ("ideal N·L/C", figures.get("ideal_s"))]  # fmt: skip
    elif name == "rerun" and results and "rerun" in results[0]:
        figures, prefix = results[0]["rerun"], "warm_"
        reference = [("the cold run's flow call", figures.get("cold_flow_s"))]
    else:
        return {}
    parts = [
        ("Prefect's flow engine: the flow run's start and end", "flow_engine_overhead_s"),
        ("the flow body before the first stage call (labels, plans, lookups)", "body_before_first_call_s"),
        ("first stage call to last", "calls_window_s"),
        ("after the last stage call (the last batches' judging and encoding, tables, report)",
         "body_after_last_call_s"),
        ("**the flow call**", "flow_s"),
    ]  # fmt: skip
    rows = [(label, figures.get(prefix + key)) for label, key in parts]
    return {"timeline": [(label, value) for label, value in [*rows, *reference] if value is not None]}


def summary_of(raw: Path) -> dict[str, Any]:
    """The shares a profile shows: threads, the innermost oloproof and Prefect frames, leaves."""
    # Per sample the frame nearest the leaf that is oloproof's or Prefect's: whose work it is.
    every = summarize(raw, match=(_OURS, _PREFECT))
    total, ours = every.total or 1, every.innermost

    def shares(counter: Any, top: int) -> list[tuple[str, float]]:
        return [(name, count / total) for name, count in counter.most_common(top)]

    return {
        "samples": every.total,
        "rate": RATE,
        "threads": shares(every.groups, TOP["threads"]),
        "oloproof": shares(Counter({k: v for k, v in ours.items() if _OURS in k}), TOP["oloproof"]),
        "prefect": shares(Counter({k: v for k, v in ours.items() if _OURS not in k}), TOP["prefect"]),
        "neither": 1 - sum(ours.values()) / total,
        "leaves": shares(every.own, TOP["leaves"]),
    }


def render(profiles: list[dict[str, Any]]) -> list[str]:
    """The RESULTS.md section: one subsection per scenario with a target not met."""
    if not profiles:
        return []
    lines = [
        "## What limits the targets not met",
        "",
        ("Each scenario with a target not met, profiled in this run after every measurement. Engine and "
         f"recorded-row runs: `py-spy record --gil --rate {RATE}`, which samples only the thread holding the "
         "GIL (on 2 cores the interpreter's one lock is what the engine's own work queues behind). A share is "
         "of all samples. Each sample is given to the oloproof or Prefect frame nearest the leaf of its stack "
         "(that function's own work and the library code it called), so the two columns and the samples with "
         "neither add up to 100%; a leaf frame's share is the time spent in that very function. A "
         "profiled run is slower than a measured one: the shares say where the time goes, the table above "
         "how much there is."),
        "",
    ]
    for item in profiles:
        lines.append(f"### {item['scenario']}: {'; '.join(item['targets'])}")
        lines.append("")
        if "error" in item:
            lines += [f"Not profiled: {item['error']}", ""]
        elif "phases_ms" in item:
            lines += _render_phases(item)
        else:
            lines += _render_spy(item)
    return lines


def _render_spy(item: dict[str, Any]) -> list[str]:
    lines = []
    if item.get("timeline"):
        lines += ["The measured flow call, from the scenario's own figures:", "",
                  "| part | seconds |", "|---|---|"]  # fmt: skip
        lines += [f"| {label} | {value:.2f} |" for label, value in item["timeline"]]
        lines.append("")
    seconds = item["samples"] / item["rate"]
    line = f"{item['what']}, profiled: {item['samples']:,} samples ({seconds:,.1f} s holding the GIL)"
    if "baseline" in item:
        other = item["baseline"]
        line += f"; {other['what']}, profiled alike: {other['samples']:,} samples ({other['samples'] / item['rate']:,.1f} s)"
    lines += [line + ".", ""]
    threads = ", ".join(f"{name} {share:.0%}" for name, share in item["threads"])
    lines += [f"- threads: {threads}", ""]
    lines += ["| share | innermost oloproof frame | | share | innermost Prefect frame |", "|---|---|---|---|---|"]
    prefect = list(item["prefect"])
    for n, (name, share) in enumerate(item["oloproof"]):
        right = prefect[n] if n < len(prefect) else ("", None)
        lines.append(f"| {share:.1%} | `{name}` | | {'' if right[1] is None else f'{right[1]:.1%}'} "
                     f"| {f'`{right[0]}`' if right[0] else ''} |")  # fmt: skip
    lines.append(f"| {item['neither']:.1%} | *(no oloproof or Prefect frame on the stack)* | | | |")
    lines += ["", "| self | hottest leaf frame |", "|---|---|"]
    lines += [f"| {share:.1%} | `{name}` |" for name, share in item["leaves"]]
    return [*lines, ""]


def _render_phases(item: dict[str, Any]) -> list[str]:
    ours, plain = item["phases_ms"]["oloproof"], item["phases_ms"]["duckdb"]
    lines = [f"{item['what']}:", "", "| part | oloproof query (ms) | plain DuckDB (ms) |", "|---|---|---|"]
    for part in dict.fromkeys([*ours, *plain]):
        cells = [f"{way[part]:.2f}" if part in way else "—" for way in (ours, plain)]
        lines.append(f"| {part} | {cells[0]} | {cells[1]} |")
    lines.append(f"| **all** | **{sum(ours.values()):.2f}** | **{sum(plain.values()):.2f}** |")
    return [*lines, ""]
