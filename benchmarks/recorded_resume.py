#!/usr/bin/env python
"""Recorded rows killed with SIGKILL mid-run, then the same command: the same tables.

Runs ``tests/e2e/test_e2e_recorded_resume.py`` (a local folder and a moto bucket) at
``--rows`` rows (default 100,000) and reports, per store, how many of the rows'
judgment records were durable at the kill, what the resumed run replayed, and
whether its tables equal the uninterrupted run's.

    python benchmarks/recorded_resume.py --rows 100000 --json

With ``--json`` the last line of stdout is ``{"scenario", "figures", "targets", "notes"}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _report import print_closing, target

REPO = Path(__file__).resolve().parents[1]
TEST = "tests/e2e/test_e2e_recorded_resume.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="oloproof-resume-") as tmp:
        report = Path(tmp) / "report.jsonl"
        env = {**os.environ, "OLOPROOF_RESUME_ROWS": str(args.rows), "OLOPROOF_RESUME_REPORT": str(report)}
        begin = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", TEST],
                              cwd=REPO, env=env, capture_output=True, text=True, check=False)  # fmt: skip
        wall = time.perf_counter() - begin
        stores = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()] if report.exists() else []
    passed = done.returncode == 0
    by_store = {entry["store"]: entry for entry in stores}
    targets = [
        target(f"{where}: resumed tables equal the uninterrupted run's ({args.rows:,} rows)", "equal",
               by_store.get(where, {}).get("durable_at_kill"), None, passed and where in by_store)
        for where in ("local", "s3")
    ]  # fmt: skip
    notes = [
        f"`pytest {TEST}` with OLOPROOF_RESUME_ROWS={args.rows}: exit {done.returncode} in {wall:.0f} s",
        "measured: the judgment records durable when the run was killed (one a row); the resumed run replays them",
        *[f"{e['store']}: killed with {e['durable_at_kill']:,} of {e['rows']:,} rows' records durable; resumed "
          f"judgments {e['resumed_cache']}" for e in stores],
        *([] if passed else [" ".join(done.stdout.strip().splitlines()[-3:])]),
    ]  # fmt: skip
    print_closing("recorded_resume", {"rows": args.rows, "stores": stores, "exit": done.returncode, "wall_s": wall},
                  targets, notes, args.json)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
