"""The example's second `oloproof run` in a fresh shell with no server configured, with the
temporary server (one per command) and with the kept local server (`OLOPROOF_SERVER=reuse`).

Each mode gets its own new PREFECT_HOME and a copy of the example; the first run (which
creates the server's database) is not timed, the next ``--repeats`` are. The kept server is
stopped at the end.

    python benchmarks/second_run.py          # about 1 minute on 2 cores
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "support_rag"


def _olo(*argv: str, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "oloproof._cli.main", *argv], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)  # fmt: skip


def second_runs(mode: str, folder: Path, repeats: int) -> list[float]:
    """Seconds of each run after the first, in ``mode``."""
    project = folder / mode / "support_rag"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".oloproof", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(OLOPROOF_SERVER=mode, PREFECT_HOME=str(folder / mode / "prefect-home"))
    try:
        _olo("run", str(project), env=env)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            _olo("run", str(project), env=env)
            times.append(time.perf_counter() - started)
        return times
    finally:
        subprocess.run([sys.executable, "-m", "oloproof._cli.main", "server", "stop"], env=env, check=False,
                       capture_output=True, timeout=120)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        result = {mode: second_runs(mode, Path(folder), args.repeats) for mode in ("temporary", "reuse")}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for mode, times in result.items():
        print(f"{mode}: median {statistics.median(times):.1f} s ({', '.join(f'{t:.1f}' for t in times)})")


if __name__ == "__main__":
    main()
