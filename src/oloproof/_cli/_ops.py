"""``oloproof serve`` and ``oloproof index-updated``."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

from oloproof._cli._common import quiet_prefect

__all__ = ["index_updated_command", "serve_command"]


def serve_command(args: argparse.Namespace) -> int:
    """Serve prefect.yaml's deployments until interrupted."""
    quiet_prefect()
    from oloproof._serve import serve_deployments
    from oloproof.flows._api import connect_prefect_api

    overrides = {}
    if args.project:
        overrides["project"] = str(Path(args.project).resolve())

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    connect_prefect_api()
    signal.signal(signal.SIGTERM, stop)  # so the triggers are disabled on a plain kill too
    try:
        serve_deployments(args.prefect_yaml, overrides)
    except KeyboardInterrupt:
        pass
    return 0


def index_updated_command(args: argparse.Namespace) -> int:
    """Emit oloproof.index.updated."""
    quiet_prefect()
    from oloproof.events import index_updated

    event = index_updated(args.index_version, project=args.project, index=args.index)
    if args.json:
        from oloproof._cli._common import emit_json

        emit_json({"event": event.event, "id": str(event.id), "payload": event.payload,
                   "resource": dict(event.resource)})  # fmt: skip
        return 0
    print(f"Emitted oloproof.index.updated {event.id} · index_version {args.index_version}")
    return 0
