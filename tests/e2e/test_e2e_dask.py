"""``task_runner.type=dask`` end to end: real Dask worker processes reporting to a REAL Prefect server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof.store import ResultsStore

pytestmark = [pytest.mark.services, pytest.mark.slow]

DASK = ("--set", "task_runner.type=dask", "--set", "task_runner.n_workers=2")


STAGES = ("retrieve", "assemble", "generate", "judge", "execute")


def _metrics(report: dict) -> list[str]:
    rows = [{k: v for k, v in row.items() if k != "run_id"} for row in report["metrics"]]
    return sorted(json.dumps(row, sort_keys=True, default=str) for row in rows)


def _cache_names(project: Path) -> set[str]:
    store = ResultsStore(str(project / ".oloproof" / "results"))
    return {f"{stage}/{key}" for stage in STAGES for key in store.record_keys(stage)}


def test_dask_gives_the_thread_runners_metrics_and_cache(project_copy, machine, olo):
    env = machine()

    threads = project_copy("threads")
    ran = olo("run", threads, "--json", env=env)
    assert ran.returncode == 0, ran.stderr
    by_threads = json.loads(ran.stdout)

    dask = project_copy("dask")
    ran = olo("run", dask, *DASK, "--json", env=env)
    assert ran.returncode == 0, ran.stderr
    by_dask = json.loads(ran.stdout)
    assert by_dask["cache"]["execution"] == {"hit": 0, "miss": 13}
    assert _metrics(by_dask) == _metrics(by_threads)
    answer = next(m for m in by_dask["metrics"] if m["criterion"] == "answer_correct" and m["slice"] is None)
    assert (answer["successes"], answer["observed"]) == (9, 13)
    # The same per-case records, under the same identities, whichever runner wrote them.
    assert _cache_names(dask) == _cache_names(threads) != set()

    again = olo("run", dask, *DASK, env=env)
    assert again.returncode == 0, again.stderr
    assert "Cache: execution 13 hit/0 miss; judgment 65 hit/0 miss" in again.stdout, again.stdout[-800:]
    listed = olo("runs", "--project", dask, "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == 2


def test_dask_without_a_server_is_one_clear_error(project_copy, machine, olo, err_lines):
    project = project_copy()
    env = machine(server=False)
    assert "PREFECT_API_URL" not in env
    ran = olo("run", project, *DASK, env=env, timeout=120)
    assert ran.returncode == 2, (ran.returncode, ran.stderr[-2000:])
    lines = err_lines(ran)
    assert len(lines) == 1, ran.stderr[-3000:]
    assert lines[0].startswith("oloproof: error:")
    assert "task_runner.type" in lines[0] and "PREFECT_API_URL" in lines[0]
    assert ran.stdout.strip() == ""
    assert not (project / ".oloproof" / "results" / "runs").exists()
