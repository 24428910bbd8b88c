"""Prefect flows: run, diagnose, compare, sweep.

Each flow's module is imported when first asked for (a plain run never loads the
comparison, diagnosis and sweep machinery).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from oloproof.flows._logs import keep_run_logs_readable

if TYPE_CHECKING:
    from oloproof.flows._compare import compare
    from oloproof.flows._diagnose import INTERVENTIONS, diagnose
    from oloproof.flows._run import PreparedRun, evaluate
    from oloproof.flows._sweep import sweep

# Wherever Oloproof's flows are loaded (the CLI, `oloproof serve`, a worker's flow-run
# process), their runs' logs hold Oloproof's lines, not one state line per task run.
keep_run_logs_readable()

__all__ = ["INTERVENTIONS", "PreparedRun", "compare", "diagnose", "evaluate", "sweep"]

_WHERE = {
    "INTERVENTIONS": "_diagnose", "PreparedRun": "_run", "compare": "_compare",
    "diagnose": "_diagnose", "evaluate": "_run", "sweep": "_sweep",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
