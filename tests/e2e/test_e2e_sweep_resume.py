"""``oloproof sweep`` killed with SIGKILL, then run again: only its unfinished work runs.

The example project (with a log of its system's calls) is swept uninterrupted into one
store, then into a second store by a process whose whole group is SIGKILLed once a few
settings are complete. The same command then finishes the second sweep: the settings
complete before the kill keep their runs, no retrieval is made twice, and the result
equals the uninterrupted sweep's setting by setting.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from processes import clean_env, stop_process, tail

pytestmark = [pytest.mark.services, pytest.mark.slow]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"
GRID = ["--grid", "system.rag.top_k=1,3", "--grid", "system.rag.token_budget=40,120"]
COUNTER = '''

def _counted(name, method):
    def call(self, *args, **kwargs):
        with open(os.environ["SWEEP_CALLS"], "a", encoding="utf-8") as log:
            log.write(name + "\\n")
        return method(self, *args, **kwargs)

    return call


import os  # noqa: E402

SupportRag.retrieve = _counted("retrieve", SupportRag.retrieve)
SupportRag.generate = _counted("generate", SupportRag.generate)
'''


def _project(tmp_path: Path) -> Path:
    import shutil

    project = tmp_path / "support_rag"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".oloproof", "__pycache__"))
    app = project / "app.py"
    app.write_text(app.read_text(encoding="utf-8") + COUNTER, encoding="utf-8")
    return project


def _sweep(project: Path, store: Path, env: dict[str, str], out: Path) -> subprocess.Popen:
    with open(out.with_suffix(".out"), "wb") as stdout, open(out.with_suffix(".err"), "wb") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "oloproof._cli.main", "sweep", str(project), *GRID, "--objective",
             "answer_correct", "--results", str(store), "--json"],
            stdout=stdout, stderr=stderr, env=env, start_new_session=True,
        )  # fmt: skip


def _finish(process: subprocess.Popen, out: Path) -> dict[str, Any]:
    try:
        code = process.wait(timeout=300)
    finally:
        stop_process(process)
    assert code == 0, f"oloproof sweep exited {code}:\n{tail(out.with_suffix('.err'))}"
    return json.loads(out.with_suffix(".out").read_text(encoding="utf-8"))


def _calls(log: Path) -> dict[str, int]:
    lines = log.read_text(encoding="utf-8").split() if log.exists() else []
    return {name: lines.count(name) for name in ("retrieve", "generate")}


def _settled(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each setting's result, less what differs between two sweeps of the same grid (run ids, latency)."""
    return [{key: value for key, value in entry.items() if key not in ("run_id", "costs")}
            for entry in result["settings"]]  # fmt: skip


def test_a_killed_sweep_resumes_and_runs_only_its_unfinished_settings(prefect_server, tmp_path):
    project = _project(tmp_path)
    env = clean_env()
    env.update(PREFECT_HOME=str(tmp_path / "home"), PREFECT_API_URL=prefect_server, DO_NOT_TRACK="1",
               PREFECT_SERVER_ANALYTICS_ENABLED="false")  # fmt: skip

    reference_log = tmp_path / "reference.log"
    reference = _finish(_sweep(project, tmp_path / "reference", {**env, "SWEEP_CALLS": str(reference_log)},
                               tmp_path / "reference"), tmp_path / "reference")  # fmt: skip

    log, store = tmp_path / "killed.log", tmp_path / "store"
    env = {**env, "SWEEP_CALLS": str(log)}
    process = _sweep(project, store, env, tmp_path / "killed")
    deadline = time.monotonic() + 240
    settings = store / "sweeps"
    while len(list(settings.glob("*/settings/*.json"))) < 2:  # the baseline and a setting complete
        if process.poll() is not None:
            pytest.fail(f"the sweep ended before the kill point:\n{tail((tmp_path / 'killed').with_suffix('.err'))}")
        if time.monotonic() > deadline:
            pytest.fail("no setting completed in time")
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    kept = {json.loads(path.read_text())["setting"]: json.loads(path.read_text())["run_id"]
            for path in settings.glob("*/settings/*.json")}  # fmt: skip
    assert not list(settings.glob("*/sweep.json"))

    resumed = _finish(_sweep(project, store, env, tmp_path / "resumed"), tmp_path / "resumed")
    by_label = {entry["label"]: entry["run_id"] for entry in resumed["settings"]}
    assert all(by_label[label] == run_id for label, run_id in kept.items())  # finished settings are not run again
    assert _calls(log)["retrieve"] == _calls(reference_log)["retrieve"] == 13  # every retrieval made once
    assert _settled(resumed) == _settled(reference)
    assert resumed["winner"] == reference["winner"] and resumed["compared"] == reference["compared"] == 4
