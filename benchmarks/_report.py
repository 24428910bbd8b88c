"""Targets and the closing lines of a benchmark script's report, shared by the scripts
(each runs as ``python benchmarks/<script>.py``, so this folder is on ``sys.path``)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ENGINE_FILE = Path(__file__).resolve().with_name("bench_engine.py")


def load_engine() -> ModuleType:
    """``bench_engine.py`` as a module (imported by path: benchmarks/ is no package)."""
    if "bench_engine" in sys.modules:
        return sys.modules["bench_engine"]
    spec = importlib.util.spec_from_file_location("bench_engine", ENGINE_FILE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {ENGINE_FILE}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_engine"] = module
    spec.loader.exec_module(module)
    return module


def target(name: str, text: str, measured: float, ratio: float | None, met: bool) -> dict[str, Any]:
    """One entry of a script's ``targets``, as ``run_all.py`` reads it."""
    return {"name": name, "target": text, "measured": measured, "ratio": ratio, "met": met}


def print_closing(scenario: str, figures: dict[str, Any], targets: list[dict[str, Any]], notes: list[str],
                  as_json: bool) -> None:  # fmt: skip
    """A line per target and per note, then, with ``as_json``, the one JSON line for machines."""
    for t in targets:
        ratio = "n/a" if t["ratio"] is None else f"{t['ratio']:.2f}x"
        measured = "nothing" if t["measured"] is None else f"{t['measured']:.4f}"
        verdict = "not measured" if t["met"] is None else "met" if t["met"] else "NOT met"
        print(f"target {t['name']}: {t['target']}; measured {measured} ({ratio}): {verdict}")
    for note in notes:
        print(f"note: {note}")
    sys.stdout.flush()
    if as_json:
        print(json.dumps({"scenario": scenario, "figures": figures, "targets": targets, "notes": notes}))


def spy_format(output: Path) -> str:
    """py-spy's output format for a file name: ``.svg`` a flamegraph, ``.json`` speedscope, else raw stacks."""
    return {".svg": "flamegraph", ".json": "speedscope"}.get(output.suffix, "raw")


def spy_prefix(output: Path, *, rate: int = 50, gil: bool = True) -> list[str]:
    """The command line that runs a child under ``py-spy record`` (every thread; with ``gil``,
    only the one holding the GIL), writing to ``output`` in the format its name asks for."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    return [spy, "record", "--rate", str(rate), "--format", spy_format(output), "--output", str(output),
            "--threads", "--nonblocking", *(["--gil"] if gil else []), "--"]  # fmt: skip
