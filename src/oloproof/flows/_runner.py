"""Where a run's batch tasks execute: threads (default) or a Dask cluster."""

from __future__ import annotations

from typing import Any

from prefect.task_runners import ThreadPoolTaskRunner

from oloproof._exceptions import ConfigError
from oloproof.config import TaskRunnerSettings

__all__ = ["THREAD_WORKERS", "task_runner_for"]

THREAD_WORKERS = 48
"""Batch tasks mostly wait on the shared call limiter, so threads are cheap."""


def task_runner_for(settings: TaskRunnerSettings) -> Any:
    """The Prefect task runner ``task_runner:`` asks for.

    Raises:
        ConfigError: Dask is asked for but ``prefect-dask`` is not installed.
    """
    if settings.type == "threads":
        return ThreadPoolTaskRunner(max_workers=THREAD_WORKERS)
    try:
        from prefect_dask import DaskTaskRunner
    except ImportError:
        raise ConfigError(
            "task_runner type dask needs prefect-dask: pip install 'oloproof[dask]'",
            field="task_runner.type",
        ) from None
    from prefect.settings import PREFECT_API_URL

    if not PREFECT_API_URL.value():
        raise ConfigError(
            "task_runner type dask needs a Prefect server that Dask worker processes can reach: "
            "start one (prefect server start) and set PREFECT_API_URL",
            field="task_runner.type",
        )
    if settings.address:
        return DaskTaskRunner(address=settings.address)
    kwargs: dict[str, Any] = {"processes": True, "threads_per_worker": 4}
    if settings.n_workers:
        kwargs["n_workers"] = settings.n_workers
    return DaskTaskRunner(cluster_kwargs=kwargs)
