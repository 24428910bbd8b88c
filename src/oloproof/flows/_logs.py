"""Keep Oloproof's flow runs' logs to the lines a person reads.

Prefect logs ``Finished in state Completed()`` for every task run, and a run of the
13-case example has over 80 task runs: in the UI and the API those lines bury the
run's own (its stages, counts and failing cases). When a batch breaks the run, each
task run downstream of it adds ``Finished in state NotReady(...)``, and each batch
it stopped the traceback of ``RunStoppedError: the run was stopped``.

`keep_run_logs_readable` drops exactly those, for the task runs of Oloproof's flows
only. A task run that fails still logs ``Task run failed with exception`` with its
traceback (its state line only repeated it), and every line of the flow run itself
is kept: its name, Oloproof's lines, a failed run's traceback and its final state.
"""

from __future__ import annotations

import logging

from oloproof._exceptions import RunStoppedError

__all__ = ["OLOPROOF_FLOW_PREFIX", "keep_run_logs_readable"]

OLOPROOF_FLOW_PREFIX = "oloproof-"
"""Every Oloproof flow's name starts with this (``oloproof-run``, ``oloproof-compare`` …)."""

_TASK_RUNS = "prefect.task_runs"
_STATE_LINE = "Finished in state "


class _TaskRunNoise(logging.Filter):
    """Drops a task run's state line, and its failure when another batch's error stopped it,
    in Oloproof's flows."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(getattr(record, "flow_name", "")).startswith(OLOPROOF_FLOW_PREFIX):
            return True
        if isinstance(record.msg, str) and record.msg.startswith(_STATE_LINE):
            return False
        return not (record.exc_info and isinstance(record.exc_info[1], RunStoppedError))


def keep_run_logs_readable() -> None:
    """Filter Prefect's per-task-run lines out of Oloproof's run logs; idempotent.

    The filter sits on Prefect's task-run logger, so it holds for the API, the UI
    and the console alike, whatever handlers Prefect's logging settings configure.
    """
    logger = logging.getLogger(_TASK_RUNS)
    if not any(isinstance(f, _TaskRunNoise) for f in logger.filters):
        logger.addFilter(_TaskRunNoise())
