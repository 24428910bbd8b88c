"""Targets and the closing lines of a benchmark script's report, shared by the scripts
(each runs as ``python benchmarks/<script>.py``, so this folder is on ``sys.path``)."""

from __future__ import annotations

import json
import sys
from typing import Any


def target(name: str, text: str, measured: float, ratio: float | None, met: bool) -> dict[str, Any]:
    """One entry of a script's ``targets``, as ``run_all.py`` reads it."""
    return {"name": name, "target": text, "measured": measured, "ratio": ratio, "met": met}


def print_closing(scenario: str, figures: dict[str, Any], targets: list[dict[str, Any]], notes: list[str],
                  as_json: bool) -> None:  # fmt: skip
    """A line per target and per note, then, with ``as_json``, the one JSON line for machines."""
    for t in targets:
        ratio = "n/a" if t["ratio"] is None else f"{t['ratio']:.2f}x"
        print(f"target {t['name']}: {t['target']}; measured {t['measured']:.4f} ({ratio}): "
              f"{'met' if t['met'] else 'NOT met'}")
    for note in notes:
        print(f"note: {note}")
    sys.stdout.flush()
    if as_json:
        print(json.dumps({"scenario": scenario, "figures": figures, "targets": targets, "notes": notes}))
