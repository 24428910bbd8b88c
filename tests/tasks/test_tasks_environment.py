"""The environments a worker process prepares for tasks are released when their flow run ends.

A Dask worker prepares a run's environment (its own executor, with a live event-loop thread and
call threads) the first time a task of the run arrives. A long-lived cluster runs many flows, so
each flow run ends by telling its workers to close and forget it. Here the workers are threads of
this process (a local cluster without processes), so the map and the threads can be counted.
"""

from __future__ import annotations

import json
import threading

import pytest
from _cli.inprocess import invoke_ok

from oloproof.tasks import _environment
from oloproof.tasks._environment import release_worker_environments, worker_environment_count

pytestmark = [pytest.mark.slow, pytest.mark.services]

FLOWS = 20

_APP = """\
from oloproof import system


@system(name="tiny", version="1")
def answer(input):
    return {"answer": input["question"].upper()}
"""

_CONFIG = """\
system:
  object: tiny_release_app:answer
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
max_concurrency: 2
"""


def _tiny_project(root):
    root.mkdir()
    (root / "tiny_release_app.py").write_text(_APP, encoding="utf-8")
    (root / "oloproof.yaml").write_text(_CONFIG, encoding="utf-8")
    cases = [{"id": f"c{i}", "input": {"question": f"q{i}"}, "expected": {"answer": f"Q{i}"}} for i in range(2)]
    (root / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    return root


def _executor_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name in ("oloproof-loop", "oloproof-call")]


def _settled_executor_threads() -> int:
    """The executor threads still alive once every closing one has had its chance to end.

    A closed executor's call threads end after it returns; a leaked one's never do. Joined, with
    a bound, so that a leak fails the test instead of hanging it.
    """
    for thread in _executor_threads():
        thread.join(timeout=10)
    return len(_executor_threads())


def test_flows_on_a_dask_cluster_leave_no_environment_and_no_thread_behind(prefect_api, tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("prefect_dask")
    project = _tiny_project(tmp_path / "tiny")
    released: list[int] = []

    def counted(run_id: str) -> int:
        released.append(release_worker_environments(run_id))
        return released[-1]

    # The workers find the function by name, so they call this one too.
    monkeypatch.setattr(_environment, "release_worker_environments", counted)
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster:  # fmt: skip
        argv = ("run", str(project), "--json", "--set", "task_runner.type=dask",
                "--set", f"task_runner.address={cluster.scheduler_address}")  # fmt: skip
        # One flow first: Prefect's, Dask's and the clients' own threads start once, on first use.
        first = json.loads(invoke_ok(*argv))
        assert first["cache"]["execution"] == {"hit": 0, "miss": 2}
        held, ours, threads = worker_environment_count(), _settled_executor_threads(), threading.active_count()
        assert (held, ours) == (0, 0)

        for _ in range(FLOWS):
            invoke_ok(*argv)

        assert sum(released) == FLOWS + 1  # the workers did prepare each run's environment, once
        assert worker_environment_count() == held
        assert _settled_executor_threads() == ours
        # Without the release, each flow left its worker environment's loop and call threads (3 here).
        assert threading.active_count() <= threads


def test_releasing_a_run_that_this_process_never_prepared_is_nothing():
    assert release_worker_environments("run_01M8PBYFKV2K95BDT0EVP6ZH0F") == 0
