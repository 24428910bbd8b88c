"""Helpers shared by the commands: store selection, JSON output, Prefect quieting."""

from __future__ import annotations

import json
import os
import sys
from typing import Any


__all__ = ["emit_json", "open_store", "quiet_prefect"]


def quiet_prefect() -> None:
    """Keep Prefect's console logging to warnings; logs still reach the Prefect API.

    Must run before Prefect is imported. Users override it with the usual
    ``PREFECT_LOGGING_*`` variables.
    """
    os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")
    # A failed flow or task is reported by the CLI as one line; its traceback stays
    # in the run's logs in the Prefect API and UI.
    for name in (
        "PREFECT_LOGGING_HANDLERS_CONSOLE_FLOW_RUNS_LEVEL",
        "PREFECT_LOGGING_HANDLERS_CONSOLE_TASK_RUNS_LEVEL",
    ):
        os.environ.setdefault(name, "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")


def open_store(results: str | None, project: str | None) -> Any:
    """The store named by ``--results``, ``$OLOPROOF_RESULTS`` or a project's ``results``."""
    from oloproof._locate import locate_store

    return locate_store(results, project)


def emit_json(value: Any) -> None:
    """Print ``value`` as JSON on stdout."""
    json.dump(value, sys.stdout, indent=2, sort_keys=True, default=str, ensure_ascii=False)
    sys.stdout.write("\n")
