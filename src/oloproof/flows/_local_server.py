"""One local Prefect server kept for later commands: started on first use, reused, stoppable.

Without ``PREFECT_API_URL`` every command used to start Prefect's temporary server and
stop it at exit, paying its start (seconds) each time. In an interactive shell (or with
``OLOPROOF_SERVER=reuse``) the first command instead starts one server in the
background, says so on stderr, and records it in ``PREFECT_HOME/oloproof-server.json``;
later commands find it there and use it. ``oloproof server status`` shows it and
``oloproof server stop`` stops it. Scripts, CI and tests (no terminal, or
``OLOPROOF_SERVER=temporary``) keep the temporary server, so nothing outlives them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from oloproof._exceptions import PrefectApiError
from oloproof.flows._server_process import answers, server_command, server_environment, server_log, wait_until_answers

__all__ = ["SERVER_MODE_VARIABLE", "LocalServer", "find_local_server", "reuse_local_server", "start_local_server",
           "stop_local_server"]

SERVER_MODE_VARIABLE = "OLOPROOF_SERVER"
"""``reuse`` (a kept local server) or ``temporary`` (one per command); unset: reuse in a terminal."""

_STOP_WAIT_S = 30.0


@dataclass(frozen=True)
class LocalServer:
    """The kept local server, as its state file records it."""

    pid: int
    """Its process (the leader of its own session)."""
    port: int
    """The port it listens on, on 127.0.0.1."""
    started_at: float
    """When it started (seconds since the epoch)."""

    @property
    def api_url(self) -> str:
        """Its API's URL."""
        return f"http://127.0.0.1:{self.port}/api"


def reuse_local_server() -> bool:
    """Whether commands use (and start) the kept local server rather than a temporary one.

    Raises:
        PrefectApiError: ``OLOPROOF_SERVER`` is set to something else than ``reuse`` or ``temporary``.
    """
    mode = os.environ.get(SERVER_MODE_VARIABLE, "").strip().lower()
    if mode in ("reuse", "temporary"):
        return mode == "reuse"
    if mode:
        raise PrefectApiError(f"{SERVER_MODE_VARIABLE} must be reuse or temporary, got {mode!r}")
    return sys.stdin.isatty() and sys.stderr.isatty()


def _home() -> Path:
    from prefect.settings import get_current_settings

    return Path(get_current_settings().home)


def _state() -> Path:
    return _home() / "oloproof-server.json"


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Held while one command checks for the server and starts it: two never start two."""
    home = _home()
    home.mkdir(parents=True, exist_ok=True)
    with (home / "oloproof-server.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process now holds the number
        return False
    return True


def find_local_server() -> LocalServer | None:
    """The kept server, if its state file names a live process that answers."""
    try:
        recorded = LocalServer(**json.loads(_state().read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    if not _alive(recorded.pid) or not answers(f"{recorded.api_url}/health"):
        return None
    return recorded


def start_local_server(timeout_s: float, notify: Callable[[str], None]) -> LocalServer:
    """The kept server: found, or started in the background and announced on stderr
    (``notify`` hears of a slow start).

    Raises:
        PrefectApiError: It did not answer within ``timeout_s``.
    """
    with _locked():
        found = find_local_server()
        if found is not None:
            return found
        from prefect.server.api.server import SubprocessASGIServer

        port = SubprocessASGIServer().find_available_port()
        log = server_log()
        with log.open("ab") as out:
            # Its own session: it outlives this command, and stops only when asked.
            process = subprocess.Popen(server_command(port), env=server_environment(), stdout=out,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        server = LocalServer(pid=process.pid, port=port, started_at=time.time())
        try:
            wait_until_answers(server.api_url, lambda: process.poll(), timeout_s, notify)
        except BaseException:
            _terminate(process.pid)
            raise
        _state().write_text(json.dumps(asdict(server)), encoding="utf-8")
    # Always said, terminal or not: a process that outlives the command is never left silently.
    print(f"oloproof: started a local Prefect server at {server.api_url}, kept for later commands "
          "(oloproof server status; oloproof server stop)", file=sys.stderr, flush=True)  # fmt: skip
    return server


def stop_local_server() -> LocalServer | None:
    """Stop the kept server; returns what it was (``None``: there was none)."""
    with _locked():
        try:
            recorded = LocalServer(**json.loads(_state().read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None
        if _alive(recorded.pid):
            _terminate(recorded.pid)
        _state().unlink(missing_ok=True)
        return recorded


def _terminate(pid: int) -> None:
    """SIGTERM the server's session, then SIGKILL what is left after `_STOP_WAIT_S`."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + _STOP_WAIT_S
    while _alive(pid) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
