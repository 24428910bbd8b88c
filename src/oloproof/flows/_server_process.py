"""A Prefect server process this package starts: its command, environment and log, and
the wait, on the clock, until it answers."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oloproof._exceptions import PrefectApiError

__all__ = ["STARTUP_TIMEOUT_VARIABLE", "answers", "server_command", "server_environment", "server_log",
           "wait_until_answers"]

STARTUP_TIMEOUT_VARIABLE = "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"

_NOTICE_AFTER_S = 10.0
"""A start slower than this says, once, what the wait is for."""

_POLL_S = 0.25


def server_log() -> Path:
    """Where the temporary server's own output goes: ``PREFECT_HOME/oloproof-temporary-server.log``."""
    from prefect.settings import get_current_settings

    return Path(get_current_settings().home) / "oloproof-temporary-server.log"


def server_environment() -> dict[str, str]:
    """The environment of a server this process starts: its settings, the UI off."""
    from prefect.settings import get_current_settings

    return {
        **os.environ,
        "PREFECT_UI_ENABLED": "0",
        "PREFECT__SERVER_EPHEMERAL": "1",
        "PREFECT__SERVER_FINAL": "1",
        **get_current_settings().to_environment_variables(exclude_unset=True),
    }


def server_command(port: int) -> list[str]:
    """Prefect's server on ``port`` of 127.0.0.1, as Prefect starts its temporary one."""
    import prefect

    return [
        sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent),
        "--factory", "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(port),
        "--log-level", "error", "--lifespan", "on",
    ]  # fmt: skip


def answers(url: str) -> bool:
    """Whether ``url`` answers 200 now."""
    import httpx

    with httpx.Client(timeout=10) as client:
        return _healthy(client, url)


def wait_until_answers(api_url: str | Callable[[], str], poll: Callable[[], int | None], timeout_s: float,
                       notify: Callable[[str], None]) -> None:  # fmt: skip
    """Wait on the clock until the server at ``api_url`` answers its health check.

    Args:
        api_url: Its API URL (or what tells it, when a restart moves it).
        poll: The server process's exit code, ``None`` while it runs.
        timeout_s: The wall-clock limit.
        notify: Told once, if the start is slow, what the wait is for.

    Raises:
        PrefectApiError: It exited, or did not answer within ``timeout_s``.
    """
    import httpx

    started = time.monotonic()
    noticed = False
    with httpx.Client(timeout=10) as client:
        while True:
            code = poll()
            url = api_url() if callable(api_url) else api_url
            if code is not None:
                raise PrefectApiError(
                    f"Prefect's temporary server exited with code {code} while starting (its log: {server_log()}): "
                    "start one with prefect server start and set PREFECT_API_URL"
                )
            if _healthy(client, f"{url}/health"):
                return
            waited = time.monotonic() - started
            if not noticed and waited > _NOTICE_AFTER_S:
                noticed = True
                notify(
                    "oloproof: starting Prefect's temporary server (a first start creates its database; "
                    f"up to {timeout_s:g} s, {STARTUP_TIMEOUT_VARIABLE}) ..."
                )
            if waited > timeout_s:
                raise PrefectApiError(
                    f"Prefect's temporary server did not answer within {timeout_s:g} s: raise "
                    f"{STARTUP_TIMEOUT_VARIABLE}, or start one (prefect server start) and set PREFECT_API_URL"
                )
            time.sleep(_POLL_S)


def _healthy(client: Any, url: str) -> bool:
    import httpx

    try:
        return bool(client.get(url).status_code == 200)
    except httpx.HTTPError:  # not listening yet, or too busy to answer this probe
        return False


