"""``oloproof server start|status|stop``: the local Prefect server kept for later commands."""

from __future__ import annotations

import argparse
import sys
import time

from oloproof._cli._common import emit_json

__all__ = ["add_server_parser", "server_command"]


def add_server_parser(commands: argparse._SubParsersAction) -> None:
    """The ``server`` command."""
    server = commands.add_parser(
        "server", help="the local Prefect server kept for later commands: start, status, stop",
        description="Without PREFECT_API_URL, a command in a terminal (or with OLOPROOF_SERVER=reuse) starts one "
        "local Prefect server in the background and later commands reuse it; OLOPROOF_SERVER=temporary "
        "starts and stops one per command instead.",
    )
    server.add_argument("action", choices=["start", "status", "stop"])
    server.add_argument("--json", action="store_true", help="print JSON for machines")


def server_command(args: argparse.Namespace) -> int:
    """Start, show or stop the kept local server; ``status`` exits 1 when none runs."""
    from oloproof.flows._api import startup_timeout_s
    from oloproof.flows._local_server import LocalServer, find_local_server, start_local_server, stop_local_server

    server: LocalServer | None
    if args.action == "start":
        server = start_local_server(startup_timeout_s(), lambda line: print(line, file=sys.stderr, flush=True))
    elif args.action == "stop":
        server = stop_local_server()
    else:
        server = find_local_server()
    if args.json:
        emit_json(None if server is None else {"pid": server.pid, "api_url": server.api_url, "action": args.action})
    elif server is None:
        print("No local Prefect server is kept" + (" (nothing to stop)" if args.action == "stop" else ""))
    else:
        verb = {"start": "Running", "status": "Running", "stop": "Stopped"}[args.action]
        age = (time.time() - server.started_at) / 60
        print(f"{verb}: local Prefect server at {server.api_url} (pid {server.pid}, started {age:.0f} min ago)")
    return 1 if args.action == "status" and server is None else 0
