"""Events Oloproof listens to: emit them from an index-build job.

``index_updated`` emits ``oloproof.index.updated``; the ``on-index-rebuild``
deployment (see ``prefect.yaml``) is triggered by it and evaluates the project
with exactly the new ``index_version``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oloproof._exceptions import ConfigError

__all__ = ["INDEX_UPDATED", "index_updated"]

INDEX_UPDATED = "oloproof.index.updated"


def index_updated(index_version: str, project: str | None = None, index: str = "default") -> Any:
    """Emit ``oloproof.index.updated`` to the Prefect API.

    Args:
        index_version: The version of the rebuilt index (required).
        project: The project folder to evaluate (absolute path recorded).
        index: A name for the index, part of the event's resource id.

    Returns:
        The emitted Prefect event.

    Raises:
        ConfigError: ``index_version`` is empty.
    """
    if not str(index_version or "").strip():
        raise ConfigError("an index event needs an index_version", field="index_version")
    from prefect.client.orchestration import get_client
    from prefect.events import emit_event
    from prefect.events.worker import EventsWorker
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    if not url:
        # A temporary local server would receive the event and vanish with this process.
        raise ConfigError(
            "an index event must reach the Prefect server your deployments are served from: "
            "set PREFECT_API_URL",
            field="PREFECT_API_URL",
        )
    with get_client(sync_client=True) as client:
        problem = client.api_healthcheck()
    if problem is not None:
        raise ConfigError(f"the Prefect server does not answer: {problem}", path=str(url))
    payload = {"index_version": str(index_version), "project": str(Path(project or ".").resolve())}
    event = emit_event(
        event=INDEX_UPDATED,
        resource={"prefect.resource.id": f"oloproof.index.{index}", "prefect.resource.name": index},
        payload=payload,
    )
    EventsWorker.drain_all(timeout=30)  # delivered before we say so
    return event
