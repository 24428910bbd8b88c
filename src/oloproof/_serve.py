"""``oloproof serve``: serve the deployments a ``prefect.yaml`` declares, from this process.

For users without a work pool. When serving stops, the event triggers it
registered are disabled: Prefect otherwise keeps the automations enabled and
piles up late runs with nothing to execute them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import JsonValue

from oloproof._exceptions import ConfigError

__all__ = ["build_deployments", "disable_triggers", "serve_deployments"]


def _flow(entrypoint: str, root: Path) -> Any:
    from prefect.flows import load_flow_from_entrypoint

    path, sep, name = entrypoint.partition(":")
    if not sep:
        raise ConfigError(f"entrypoint {entrypoint!r} must be path.py:flow", field="entrypoint")
    return load_flow_from_entrypoint(f"{(root / path).resolve()}:{name}")


def build_deployments(prefect_yaml: str | Path, overrides: Mapping[str, JsonValue] | None = None) -> list[Any]:
    """Runner deployments for every entry of ``prefect.yaml``'s ``deployments``.

    Args:
        prefect_yaml: The file declaring the deployments.
        overrides: Default parameters merged into every deployment (e.g. ``project``).
    """
    from prefect.events import DeploymentEventTrigger
    from prefect.schedules import Cron

    path = Path(prefect_yaml)
    if not path.is_file():
        raise ConfigError("no prefect.yaml to serve deployments from", path=str(path))
    spec = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    deployments = []
    for entry in spec.get("deployments") or []:
        flow = _flow(entry["entrypoint"], path.parent)
        parameters = {**(entry.get("parameters") or {}), **(overrides or {})}
        schedules = [
            Cron(item["cron"], timezone=item.get("timezone", "UTC"))
            for item in entry.get("schedules") or []
            if "cron" in item
        ]
        triggers = [DeploymentEventTrigger(**trigger) for trigger in entry.get("triggers") or []]
        deployments.append(
            flow.to_deployment(
                name=entry["name"], parameters=parameters, schedules=schedules or None,
                triggers=triggers or None, tags=entry.get("tags"), description=entry.get("description"),
            )
        )
    return deployments


def disable_triggers(deployment_names: list[str]) -> int:
    """Pause the automations behind the named deployments' triggers; returns how many."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    paused = 0
    with get_client(sync_client=True) as client:
        for full_name in deployment_names:
            try:
                deployment = client.read_deployment_by_name(full_name)
            except ObjectNotFound:  # deleted meanwhile: nothing left to pause
                continue
            for automation in client.read_resource_related_automations(f"prefect.deployment.{deployment.id}"):
                if automation.enabled:
                    client.pause_automation(automation.id)
                    paused += 1
    return paused


def serve_deployments(prefect_yaml: str | Path, overrides: Mapping[str, JsonValue] | None = None) -> None:
    """Serve until interrupted, then disable the triggers this process registered."""
    from prefect import serve

    deployments = build_deployments(prefect_yaml, overrides)
    names = [f"{d.flow_name}/{d.name}" for d in deployments]
    try:
        serve(*deployments, print_starting_message=True)
    finally:
        disable_triggers(names)
