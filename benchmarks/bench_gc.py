#!/usr/bin/env python
"""How much of a recorded run Python's cyclic garbage collector takes.

Writes N seeded recorded rows (those of ``bench_recorded.py``: 10 ground-truth
labels and 10 retrieved documents a row, scored by ``document_retrieval``) and runs
``oloproof run --criteria --dataset`` on them twice against one running Prefect
server, each in a fresh process with a fresh store: once with the interpreter's
collector as it is, once with the thresholds given by ``--thresholds``. A
``gc.callbacks`` hook times every collection by generation; the process's peak RSS
comes from ``wait4``. The two runs' wall times, collector seconds and peak RSS are
reported side by side, so the trade is read from one run of this script. A
diagnostic: not part of ``run_all.py``, no target.

    python benchmarks/bench_gc.py --rows 100000 --thresholds 100000,50,1000 --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from _report import load_engine, print_closing
from bench_recorded import server_env, timed, write_rows

CHILD = """\
import gc, json, os, sys, time
stats = {"collections": [0, 0, 0], "seconds": [0.0, 0.0, 0.0]}
began = [0.0]
def timed(phase, info):
    if phase == "start":
        began[0] = time.perf_counter()
    else:
        stats["collections"][info["generation"]] += 1
        stats["seconds"][info["generation"]] += time.perf_counter() - began[0]
gc.callbacks.append(timed)
if sys.argv[2]:
    gc.set_threshold(*map(int, sys.argv[2].split(",")))
from oloproof._cli.main import main
code = main(["run", "--criteria", "criteria.json", "--dataset", "rows.jsonl", "--results", sys.argv[3], "--json"])
with open(sys.argv[1], "w") as out:
    json.dump({**stats, "code": code}, out)
sys.stdout.flush()
os._exit(code)
"""


def run_once(folder: Path, engine: Any, env: dict[str, str], thresholds: str, label: str,
             timeout: float) -> dict[str, Any]:  # fmt: skip
    """One `oloproof run` of the rows in a fresh process; its wall, peak RSS and collector time."""
    stats = folder / f"gc-{label}.json"
    argv = [sys.executable, "-c", CHILD, str(stats), thresholds, str(folder / f"store-{label}")]
    figures = timed(argv, env, folder, timeout, engine, name=f"-{label}")
    figures["thresholds"] = thresholds or "interpreter default"
    if stats.exists():
        collected = json.loads(stats.read_text(encoding="utf-8"))
        figures.update(collections=collected["collections"], gc_s=collected["seconds"],
                       gc_total_s=sum(collected["seconds"]), gc_share=sum(collected["seconds"]) / figures["wall_s"])
        figures.pop("stderr_tail")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--thresholds", default="100000,50,1000", help="gc.set_threshold for the second run")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    engine = load_engine()
    with tempfile.TemporaryDirectory(prefix="oloproof-gc-") as tmp:
        folder = Path(tmp)
        write_rows(folder, args.rows, args.seed)
        with server_env(folder, engine) as env:
            default = run_once(folder, engine, env, "", "default", args.timeout)
            tuned = run_once(folder, engine, env, args.thresholds, "tuned", args.timeout)
    notes = [f"{os.cpu_count()} CPUs", "both runs against one running Prefect server, fresh stores",
             "gc_s: seconds inside collections of generations 0, 1 and 2 (gc.callbacks)"]  # fmt: skip
    for label, figures in (("default", default), ("tuned", tuned)):
        for key, value in figures.items():
            print(f"gc.{label}.{key} {value}")
    if default.get("code") == 0 and tuned.get("code") == 0:
        print(f"gc.tuned_vs_default_wall {tuned['wall_s'] / default['wall_s']:.3f}")
        print(f"gc.tuned_vs_default_peak_rss {tuned['peak_rss_mb'] / default['peak_rss_mb']:.3f}")
    print_closing("gc", {"rows": args.rows, "default": default, "tuned": tuned}, [], notes, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
