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
    from prefect.events import emit_event

    payload = {"index_version": str(index_version), "project": str(Path(project or ".").resolve())}
    return emit_event(
        event=INDEX_UPDATED,
        resource={"prefect.resource.id": f"oloproof.index.{index}", "prefect.resource.name": index},
        payload=payload,
    )
