"""Helpers shared by the commands: store selection, JSON output, Prefect quieting."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["emit", "emit_json", "print_lines", "quiet_prefect", "terminal_safe"]

# Control characters (C0, DEL, C1) but tab: an ANSI escape or a CR/LF inside a case id or an
# answer could recolour the terminal or forge a line of the report.
_CONTROL = {code: f"\\x{code:02x}" for code in [*range(0x09), *range(0x0a, 0x20), *range(0x7f, 0xa0)]}
_CONTROL.update({0x0a: "\\n", 0x0d: "\\r"})


def quiet_prefect() -> None:
    """Keep Prefect's console logging to warnings and run logs off the console.

    Logs still reach the Prefect API. Users override the levels with the usual
    ``PREFECT_LOGGING_*`` variables.
    """
    os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    import prefect.main  # noqa: F401  (configures Prefect's logging handlers)

    for handler in _console_handlers():
        if not any(isinstance(f, _RunLogsToApiOnly) for f in handler.filters):
            handler.addFilter(_RunLogsToApiOnly())


class _RunLogsToApiOnly(logging.Filter):
    """Keep flow- and task-run logs off the console: a failed run is reported by the
    CLI as one line, and its traceback stays in the run's logs in the Prefect API and UI."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(("prefect.flow_runs", "prefect.task_runs"))


def _console_handlers() -> list[logging.Handler]:
    from prefect.logging.handlers import PrefectConsoleHandler

    loggers = [logging.getLogger()] + [
        logger for logger in logging.Logger.manager.loggerDict.values() if isinstance(logger, logging.Logger)
    ]
    return [h for logger in loggers for h in logger.handlers if isinstance(h, PrefectConsoleHandler)]


def terminal_safe(text: str, *, tabs: bool = True) -> str:
    """``text`` with control characters written as escapes (``\\x1b``, ``\\r``, ``\\n``).

    The stored values stay exact; only what reaches a terminal is escaped. With
    ``tabs=False`` a tab is escaped too (inside a tab-separated cell).
    """
    table = _CONTROL if tabs else {**_CONTROL, 0x09: "\\t"}
    return text.translate(table)


def print_lines(lines: list[str], file: Any = None) -> None:
    """Print report lines, each made terminal-safe: a value never starts a line of its own."""
    print("\n".join(terminal_safe(line) for line in lines), file=file)


def emit_json(value: Any) -> None:
    """Print ``value`` as JSON on stdout."""
    json.dump(value, sys.stdout, indent=2, sort_keys=True, default=str, ensure_ascii=False)
    sys.stdout.write("\n")


def emit(value: Any, as_json: bool, render: Callable[[Any], list[str]]) -> None:
    """Print ``value`` as JSON, or as the lines ``render`` makes of it."""
    if as_json:
        emit_json(value)
    else:
        print_lines(render(value))
