"""The Prefect API a command reports to: its start-up limit, and one line when it does not answer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, temporary_settings

from oloproof._exceptions import PrefectApiError
from oloproof.flows import _api, _server_process
from oloproof.flows._api import STARTUP_TIMEOUT_S, STARTUP_TIMEOUT_VARIABLE, startup_timeout_s

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "support_rag"
CLI = [sys.executable, "-m", "oloproof._cli.main"]


def test_the_default_limit_is_generous_and_the_users_setting_wins(monkeypatch):
    monkeypatch.delenv(STARTUP_TIMEOUT_VARIABLE, raising=False)
    assert startup_timeout_s() == STARTUP_TIMEOUT_S >= 300  # nothing set: not Prefect's 20
    with temporary_settings(updates={PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS: 20}):
        assert startup_timeout_s() == 20  # even Prefect's own default, once the user set it
    with temporary_settings(updates={PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS: 900}):
        assert startup_timeout_s() == 900


class _Process:
    def __init__(self, codes: list[int | None]) -> None:
        self.codes = codes

    def poll(self) -> int | None:
        return self.codes.pop(0) if len(self.codes) > 1 else self.codes[0]


class _Server:
    """The part of Prefect's SubprocessASGIServer the wait uses, with a scripted process."""

    def __init__(self, *processes: _Process) -> None:
        self.processes = list(processes)
        self.server_process = self.processes.pop(0)
        self.port = 1
        self.api_url = "http://127.0.0.1:1/api"  # nothing listens on port 1

    def find_available_port(self) -> int:
        return self.port + 1


def test_a_server_that_exits_while_starting_is_one_line_naming_its_log():
    with pytest.raises(PrefectApiError) as raised:
        _api._wait_until_healthy(_Server(_Process([None, 1])), 60, notify=lambda line: None)
    message = str(raised.value)
    assert "exited with code 1" in message and "PREFECT_API_URL" in message and "\n" not in message
    assert str(_api.server_log()) in message


def test_a_taken_port_starts_the_server_again_on_another(monkeypatch):
    server = _Server(_Process([3]), _Process([None, 7]))
    monkeypatch.setattr(_api, "_spawn", lambda port: server.processes.pop(0))
    with pytest.raises(PrefectApiError, match="exited with code 7"):
        _api._wait_until_healthy(server, 60, notify=lambda line: None)
    assert server.port == 2


def test_a_slow_start_says_once_what_it_waits_for_then_names_the_setting(monkeypatch):
    monkeypatch.setattr(_server_process, "_NOTICE_AFTER_S", 0.0)
    monkeypatch.setattr(_server_process, "_POLL_S", 0.01)
    said: list[str] = []
    with pytest.raises(PrefectApiError) as raised:
        _api._wait_until_healthy(_Server(_Process([None])), 0.3, notify=said.append)
    assert len(said) == 1 and STARTUP_TIMEOUT_VARIABLE in said[0]
    message = str(raised.value)
    assert f"within 0.3 s: raise {STARTUP_TIMEOUT_VARIABLE}" in message and "PREFECT_API_URL" in message


def _fresh_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "OLOPROOF_"))}
    (tmp_path / "home").mkdir(exist_ok=True)
    env.update(HOME=str(tmp_path / "home"), **extra)
    return env


def _assert_one_line_nothing_written(ran: subprocess.CompletedProcess, project: Path, *needles: str) -> None:
    assert ran.returncode == 2, ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("oloproof: error: "), ran.stderr
    assert all(needle in lines[0] for needle in needles), lines[0]
    assert ran.stdout == ""
    assert not (project / ".oloproof").exists()


@pytest.mark.slow
def test_a_prefect_api_url_that_does_not_answer_is_one_line_and_writes_nothing(tmp_path):
    from projects import copy_project

    project = copy_project(EXAMPLE, tmp_path / "support_rag")
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/api"
    ran = subprocess.run([*CLI, "run", str(project)], env=_fresh_env(tmp_path, PREFECT_API_URL=dead),
                         check=False, capture_output=True, text=True, timeout=600)  # fmt: skip
    _assert_one_line_nothing_written(ran, project, dead, "does not answer", "prefect server start")


@pytest.mark.slow
def test_the_users_own_start_up_limit_wins_and_ends_in_one_line(tmp_path):
    from projects import copy_project

    project = copy_project(EXAMPLE, tmp_path / "support_rag")
    # No Prefect server starts within a second: importing it alone takes longer.
    env = _fresh_env(tmp_path, **{STARTUP_TIMEOUT_VARIABLE: "1"})
    ran = subprocess.run([*CLI, "run", str(project)], env=env, check=False, capture_output=True, text=True, timeout=600)
    _assert_one_line_nothing_written(ran, project, "within 1 s", STARTUP_TIMEOUT_VARIABLE, "PREFECT_API_URL")


@pytest.mark.slow
def test_the_temporary_servers_output_goes_to_its_log_not_the_terminal(tmp_path):
    from projects import copy_project

    project = copy_project(EXAMPLE, tmp_path / "support_rag")
    env = _fresh_env(tmp_path)
    ran = subprocess.run([*CLI, "run", str(project)], env=env, capture_output=True, text=True, timeout=1500,
                         check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stderr == "", ran.stderr[-3000:]  # its shutdown, a cancelled database session, is logged
    assert (tmp_path / "home" / ".prefect" / "oloproof-temporary-server.log").is_file()


def _children(pid: int) -> dict[int, bytes]:
    """The live children of ``pid`` with their command lines; one that exits while read is none."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found[int(entry.name)] = (entry / "cmdline").read_bytes()
            except OSError:
                continue
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tether is Linux's parent-death signal")
def test_a_killed_run_takes_its_temporary_server_with_it(tmp_path):
    import signal
    import time

    from projects import copy_project

    project = copy_project(EXAMPLE, tmp_path / "support_rag")
    run = subprocess.Popen([*CLI, "run", str(project)], env=_fresh_env(tmp_path),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 600  # a liveness limit, not a measure: the run waits on its server
        servers: list[int] = []
        while not servers:
            assert run.poll() is None, "the run ended before its server started"
            assert time.monotonic() < deadline, "no temporary server was started"
            servers = [pid for pid, cmdline in _children(run.pid).items() if b"prefect.server.api.server" in cmdline]
            time.sleep(0.2)
        run.send_signal(signal.SIGKILL)  # as a CI timeout or the OOM killer would
        run.wait()
        (server,) = servers
        while _alive(server):
            assert time.monotonic() < deadline, f"the temporary server {server} outlived its killed run"
            time.sleep(0.2)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
