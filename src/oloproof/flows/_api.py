"""The Prefect API a command's flows report to: the user's server, or a temporary one.

Without ``PREFECT_API_URL``, Prefect starts a temporary server in a subprocess and
waits ``PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS`` (20) for it, counting its
own 0.1 s sleeps rather than the clock. A first start creates and migrates the
database, and where bytecode is not written every process compiles Prefect from
source: on a busy machine that takes minutes, and the wait ends in a traceback.
So Oloproof starts that server itself, before anything is written, and waits on the
clock: `STARTUP_TIMEOUT_S` by default, the user's own setting of that variable
(environment or profile) whenever there is one. Prefect's flow engine then finds the
server running and uses it. The server's own output goes to a log file in
``PREFECT_HOME``, never to the command's terminal.

In an interactive shell (or with ``OLOPROOF_SERVER=reuse``) a command uses one local
server kept for later commands instead (see `oloproof.flows._local_server`), and later
commands skip the start.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oloproof._exceptions import PrefectApiError
from oloproof.flows._server_process import (
    STARTUP_TIMEOUT_VARIABLE,
    answers,
    server_command,
    server_environment,
    server_log,
    wait_until_answers,
)

__all__ = ["STARTUP_TIMEOUT_S", "STARTUP_TIMEOUT_VARIABLE", "PrefectApi", "answers", "connect_prefect_api",
           "server_command", "server_environment", "server_log", "startup_timeout_s", "wait_until_answers"]

STARTUP_TIMEOUT_S = 600
"""Wall-clock seconds to wait for the temporary server when the user set no limit."""

_PORT_IN_USE = 3
"""uvicorn's exit code when its port was taken between choosing and binding it."""


@dataclass(frozen=True)
class PrefectApi:
    """The API a command's flows report to."""

    url: str
    """The API's URL, ``http://127.0.0.1:<port>/api`` for a temporary server."""

    temporary: bool
    """Whether it is a temporary server this process started (and stops at exit)."""

    kept: bool = False
    """Whether it is the local server kept for later commands."""


def connect_prefect_api(notify: Callable[[str], None] | None = None) -> PrefectApi:
    """The Prefect API, answering: the configured one, checked, or a temporary server, started.

    Args:
        notify: Receives one line if the temporary server is slow to start
            (default: printed to stderr when it is a terminal, so that a script
            reading stderr sees only errors).

    Raises:
        PrefectApiError: The configured API does not answer, or the temporary server
            did not answer within its start-up limit: one line saying what to do.
    """
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    if url:
        _check_answers(str(url))
        return PrefectApi(url=str(url), temporary=False)
    from oloproof.flows._local_server import reuse_local_server, start_local_server

    if reuse_local_server():
        kept = start_local_server(startup_timeout_s(), notify or _to_stderr)
        _use_for_this_process(kept.api_url)
        return PrefectApi(url=kept.api_url, temporary=False, kept=True)
    return _start_temporary_server(startup_timeout_s(), notify or _to_stderr)


def _use_for_this_process(url: str) -> None:
    """Point this process's Prefect client at ``url`` until it exits."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    settings = temporary_settings(updates={PREFECT_API_URL: url})
    settings.__enter__()  # for the rest of the command; left at exit
    atexit.register(settings.__exit__, None, None, None)


def startup_timeout_s() -> float:
    """The user's ``PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS``, else `STARTUP_TIMEOUT_S`."""
    from prefect.settings import get_current_settings

    ephemeral = get_current_settings().server.ephemeral
    # Set in the environment or the profile, it is the user's: it wins, read as wall seconds.
    if "startup_timeout_seconds" in ephemeral.model_fields_set:
        return float(ephemeral.startup_timeout_seconds)
    return float(STARTUP_TIMEOUT_S)


def _check_answers(url: str) -> None:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        problem = client.api_healthcheck()
    if problem is not None:
        raise PrefectApiError(
            f"the Prefect API at {url} (PREFECT_API_URL) does not answer ({_describe(problem)}): "
            "start it (prefect server start), or unset PREFECT_API_URL to run on a temporary local server"
        )


def _start_temporary_server(timeout_s: float, notify: Callable[[str], None]) -> PrefectApi:
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()
    if server.running and server.server_process is not None and server.server_process.poll() is None:
        return PrefectApi(url=server.api_url, temporary=True)
    server.port = server.find_available_port()
    server.server_process = _spawn(server.port)
    server.running = True
    atexit.register(server.stop)
    try:
        _wait_until_healthy(server, timeout_s, notify)
    except BaseException:
        server.stop()
        raise
    return PrefectApi(url=server.api_url, temporary=True)


# Run first in the server's process, then replaced by the server itself (exec): on Linux the
# kernel sends it SIGTERM when the thread that started it dies, however it dies (SIGKILL,
# the OOM killer, a CI timeout), so a killed command never leaves its server running.
_TETHER = """\
import os, signal, sys
if sys.platform.startswith("linux"):
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != int(sys.argv[1]):  # the parent died before the tether held
        sys.exit(0)
os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
"""


def _spawn(port: int) -> subprocess.Popen[bytes]:
    """Prefect's temporary server on ``port``, as Prefect starts it, its output in `server_log`.

    Its output is not the command's: inherited, its shutdown noise (a cancelled database
    session's traceback) would follow the report on the user's terminal. It is tethered
    to the calling thread (`_TETHER`): call this from the thread that lives as long as
    the server is needed (the main thread, for a command).
    """
    log = server_log()
    log.parent.mkdir(parents=True, exist_ok=True)
    command = server_command(port)
    command = [command[0], "-c", _TETHER, str(os.getpid()), *command[1:]]
    with log.open("ab") as out:
        return subprocess.Popen(command, env=server_environment(), stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)  # fmt: skip


def _wait_until_healthy(server: Any, timeout_s: float, notify: Callable[[str], None]) -> None:
    def poll() -> int | None:
        code = server.server_process.poll()
        if code == _PORT_IN_USE:  # taken between choosing and binding it: another port
            server.port = server.find_available_port()
            server.server_process = _spawn(server.port)
            return None
        return code

    wait_until_answers(lambda: server.api_url, poll, timeout_s, notify)


def _describe(problem: BaseException) -> str:
    text = str(problem).strip().splitlines()
    return f"{type(problem).__name__}: {text[0]}" if text else type(problem).__name__


def _to_stderr(line: str) -> None:
    if sys.stderr.isatty():
        print(line, file=sys.stderr, flush=True)
