"""The local Prefect server kept for later commands: started once, reused, stopped on request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from projects import copy_project

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"


def _olo(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "oloproof._cli.main", *argv], env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip


def test_a_kept_server_is_started_once_reused_and_stopped(tmp_path):
    project = copy_project(EXAMPLE, tmp_path / "support_rag")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(OLOPROOF_SERVER="reuse", PREFECT_HOME=str(tmp_path / "prefect-home"),
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")  # fmt: skip
    try:
        first = _olo("run", str(project), "--json", env=env)
        assert first.returncode == 0, first.stderr
        assert "started a local Prefect server at http://127.0.0.1:" in first.stderr
        status = _olo("server", "status", "--json", env=env)
        assert status.returncode == 0, status.stderr
        kept = json.loads(status.stdout)
        # The second command finds it: nothing started, the same server answers.
        second = _olo("run", str(project), "--json", env=env)
        assert second.returncode == 0, second.stderr
        assert "started a local Prefect server" not in second.stderr
        assert json.loads(_olo("server", "status", "--json", env=env).stdout)["pid"] == kept["pid"]
    finally:
        stopped = _olo("server", "stop", env=env)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.startswith("Stopped: local Prefect server at")
    assert not Path(f"/proc/{kept['pid']}").exists() or "Z" in Path(f"/proc/{kept['pid']}/stat").read_text()
    after = _olo("server", "status", env=env)
    assert after.returncode == 1 and after.stdout.startswith("No local Prefect server is kept")


def test_an_unknown_server_mode_is_one_line(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}, "OLOPROOF_SERVER": "forever",
           "PREFECT_HOME": str(tmp_path / "home")}  # fmt: skip
    ran = _olo("run", str(EXAMPLE), "--results", str(tmp_path / "results"), env=env)
    assert ran.returncode == 2 and ran.stderr.strip().count("\n") == 0
    assert "OLOPROOF_SERVER must be reuse or temporary, got 'forever'" in ran.stderr
