"""Flow runs left RUNNING by a process that died: found and marked crashed.

A run killed with SIGKILL (or a machine that lost power) never tells the Prefect
server it ended, so its flow run stays RUNNING for ever in the UI. Each run flow
records where it runs (``infrastructure_pid`` is ``<host>:<pid>``, the form
Prefect's own runner uses) and tags itself with its project; a run that starts
then looks for RUNNING runs of the same project on the same host whose process
no longer exists, and marks them crashed. Runs on other hosts are left alone:
nothing here can tell whether their process is alive.
"""

from __future__ import annotations

import hashlib
import os
import socket
from typing import Any
from uuid import UUID

__all__ = ["crash_orphaned_runs", "is_orphan", "process_alive", "project_tag", "where_running"]


def project_tag(directory: str) -> str:
    """``project:<12 hex>``: the tag that groups one project's runs (its folder's path, hashed)."""
    return "project:" + hashlib.sha256(os.path.abspath(directory).encode()).hexdigest()[:12]


def where_running() -> str:
    """``<host>:<pid>`` of this process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process (EPERM), or cannot tell: never guess it dead
        return True
    return True


def is_orphan(infrastructure_pid: str | None, host: str, alive: Any = process_alive) -> bool:
    """Whether a RUNNING flow run's recorded ``<host>:<pid>`` names a dead process here.

    Args:
        infrastructure_pid: The flow run's ``infrastructure_pid``.
        host: This host's name.
        alive: ``alive(pid) -> bool`` (the real check unless a test gives another).
    """
    if not infrastructure_pid:
        return False
    where, _, pid = infrastructure_pid.rpartition(":")
    if where != host or not pid.isdigit():
        return False
    return int(pid) != os.getpid() and not alive(int(pid))


def crash_orphaned_runs(client: Any, tag: str, current: UUID) -> list[UUID]:
    """Mark crashed every RUNNING flow run tagged ``tag`` whose process is gone.

    Args:
        client: A synchronous Prefect client.
        tag: The project's tag (:func:`project_tag`).
        current: This flow run, never touched.

    Returns:
        The ids of the flow runs marked crashed.
    """
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
        FlowRunFilterTags,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.states import Crashed

    running = client.read_flow_runs(
        flow_run_filter=FlowRunFilter(
            tags=FlowRunFilterTags(all_=[tag]),
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.RUNNING])),
        ),
        limit=200,
    )
    host = socket.gethostname()
    crashed = []
    for run in running:
        if run.id == current or not is_orphan(run.infrastructure_pid, host):
            continue
        message = (f"its process ({run.infrastructure_pid}) ended without reporting; "
                   f"marked crashed by flow run {current}")  # fmt: skip
        client.set_flow_run_state(run.id, state=Crashed(message=message), force=True)
        crashed.append(run.id)
    return crashed
