"""``task_runner_for``: the Prefect task runner a project's ``task_runner:`` asks for.

Covers the default thread runner, the refusals when Dask is asked for without
``prefect-dask`` or without a Prefect server its workers can reach, and the Dask
runner's settings (an existing scheduler, or a local cluster of processes).
Building a Dask runner starts nothing: a cluster starts only when a flow runs.
"""

from __future__ import annotations

import sys

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import ThreadPoolTaskRunner

from oloproof._exceptions import ConfigError
from oloproof.config import TaskRunnerSettings
from oloproof.flows._runner import THREAD_WORKERS, task_runner_for

API = "http://127.0.0.1:4200/api"


def test_threads_are_the_default():
    runner = task_runner_for(TaskRunnerSettings())
    assert isinstance(runner, ThreadPoolTaskRunner)
    assert runner._max_workers == THREAD_WORKERS == 48


def test_each_call_gets_a_fresh_thread_runner():
    settings = TaskRunnerSettings(type="threads")
    assert task_runner_for(settings) is not task_runner_for(settings)


def test_dask_without_prefect_dask_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "prefect_dask", None)  # makes the import fail
    with pytest.raises(ConfigError) as caught:
        task_runner_for(TaskRunnerSettings(type="dask"))
    assert caught.value.message == "task_runner type dask needs prefect-dask: pip install 'oloproof[dask]'"
    assert caught.value.field == "task_runner.type"


def test_dask_without_a_prefect_server_is_refused():
    pytest.importorskip("prefect_dask")
    with temporary_settings(restore_defaults={PREFECT_API_URL}), pytest.raises(ConfigError) as caught:
        task_runner_for(TaskRunnerSettings(type="dask", address="tcp://10.0.0.5:8786"))
    assert caught.value.message.startswith("task_runner type dask needs a Prefect server")
    assert "set PREFECT_API_URL" in caught.value.message
    assert caught.value.field == "task_runner.type"


def test_dask_with_an_address_joins_that_scheduler():
    pytest.importorskip("prefect_dask")
    from prefect_dask import DaskTaskRunner

    with temporary_settings(updates={PREFECT_API_URL: API}):
        runner = task_runner_for(TaskRunnerSettings(type="dask", address="tcp://10.0.0.5:8786", n_workers=3))
    assert isinstance(runner, DaskTaskRunner)
    assert runner.address == "tcp://10.0.0.5:8786"
    assert runner.cluster_kwargs == {}


def test_dask_without_an_address_describes_a_local_process_cluster():
    pytest.importorskip("prefect_dask")
    with temporary_settings(updates={PREFECT_API_URL: API}):
        runner = task_runner_for(TaskRunnerSettings(type="dask"))
    assert runner.address is None
    assert runner.cluster_kwargs == {"processes": True, "threads_per_worker": 4}


def test_a_local_cluster_takes_the_worker_count():
    pytest.importorskip("prefect_dask")
    with temporary_settings(updates={PREFECT_API_URL: API}):
        runner = task_runner_for(TaskRunnerSettings(type="dask", n_workers=3))
    assert runner.cluster_kwargs == {"processes": True, "threads_per_worker": 4, "n_workers": 3}
