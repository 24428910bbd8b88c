"""Processes the end-to-end tests start: a clean environment, stopping, reading their logs.

A plain module (not a conftest), so test modules can import it by name.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

__all__ = ["clean_env", "free_port", "stop_process", "tail"]

_STRIPPED_ENV = ("PREFECT_", "AWS_", "OLOPROOF_", "INITIAL_NO_AUTH_ACTION_COUNT")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env() -> dict[str, str]:
    """This process's environment without any Prefect, AWS or Oloproof setting."""
    return {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_ENV)}


def stop_process(process: subprocess.Popen, grace: float = 15.0) -> None:
    """Terminate a process this suite started (and its own process group), then kill it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    try:  # children it left behind in the session it was started in
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no {path})"
