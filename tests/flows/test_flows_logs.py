"""Which of Prefect's task-run lines Oloproof keeps out of its runs' logs (the filter alone).

The run's logs as a real server holds them are in ``tests/e2e/test_e2e_run_logs.py``.
"""

from __future__ import annotations

import logging
import sys

import pytest

import oloproof.flows  # noqa: F401  (loading Oloproof's flows installs the filter)
from oloproof._exceptions import RunStoppedError, SystemContractError
from oloproof.flows._logs import _TaskRunNoise, keep_run_logs_readable


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def task_runs():
    """Prefect's task-run logger, with a handler that keeps what passes its filters."""
    logger = logging.getLogger("prefect.task_runs")
    kept = _Kept()
    logger.addHandler(kept)
    try:
        yield logger, kept.messages
    finally:
        logger.removeHandler(kept)


def _extra(flow: str | None = "oloproof-run") -> dict[str, object]:
    # What Prefect's task-run logger attaches; kept off the API (no flow run here).
    return {"send_to_api": False, **({"flow_name": flow} if flow else {})}


def _failure(logger: logging.Logger, error: BaseException, flow: str = "oloproof-run") -> None:
    try:
        raise error
    except type(error):
        logger.exception("Task run failed with exception: %r", error, extra=_extra(flow))


def test_the_filter_is_installed_once_however_often_it_is_asked_for():
    keep_run_logs_readable()
    keep_run_logs_readable()
    filters = logging.getLogger("prefect.task_runs").filters
    assert sum(isinstance(f, _TaskRunNoise) for f in filters) == 1


@pytest.mark.parametrize("state", [
    "Completed()", "Cached(type=COMPLETED)",
    "NotReady(\"Upstream task run '01a2' did not reach a 'COMPLETED' state.\", type=PENDING)",
    "Failed('Task run encountered an exception SystemContractError: ...')",
])  # fmt: skip
def test_task_run_state_lines_of_oloproofs_flows_are_dropped(task_runs, state):
    logger, kept = task_runs
    level = logging.INFO if state.startswith(("Completed", "Cached")) else logging.ERROR
    for flow in ("oloproof-run", "oloproof-compare", "oloproof-diagnose"):
        logger.log(level, f"Finished in state {state}", extra=_extra(flow))
    assert kept == []


def test_a_task_runs_failure_and_its_traceback_are_kept(task_runs):
    logger, kept = task_runs
    _failure(logger, SystemContractError("retrieve returned str; expected Retrieval"))
    assert kept == ["Task run failed with exception: SystemContractError('retrieve returned str; expected Retrieval')"]


def test_the_batches_another_batchs_error_stopped_are_not_reported_again(task_runs):
    logger, kept = task_runs
    _failure(logger, RunStoppedError("the run was stopped"))
    assert kept == []


def test_oloproofs_own_task_lines_are_kept(task_runs):
    logger, kept = task_runs
    logger.warning("generate %s: missing: %s", "money_back", "RuntimeError: timed out", extra=_extra())
    logger.info("Finished the stage", extra=_extra())
    assert kept == ["generate money_back: missing: RuntimeError: timed out", "Finished the stage"]


def test_other_flows_task_runs_keep_every_line(task_runs):
    logger, kept = task_runs
    logger.info("Finished in state Completed()", extra=_extra("nightly-etl"))
    logger.info("Finished in state Completed()", extra=_extra(None))  # no flow known
    _failure(logger, RunStoppedError("stopped"), flow="nightly-etl")
    assert kept == ["Finished in state Completed()", "Finished in state Completed()",
                    "Task run failed with exception: RunStoppedError('stopped')"]  # fmt: skip
    assert sys.exc_info() == (None, None, None)
