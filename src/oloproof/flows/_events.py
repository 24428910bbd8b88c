"""Deliver a command's Prefect events before it returns.

A flow's task runs report their states as events, which Prefect's events worker
sends to the API from a queue, one at a time. A command that returns while events
are still queued leaves them to Prefect's exit hook, which stops the worker and then
prints ``EventsWorker - Still processing items: 4 items remaining...`` on the
console while it sends them. Waiting for the queue to empty before returning
delivers every event with nothing printed, and the exit hook finds nothing to do.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from prefect.context import FlowRunContext

from oloproof._exceptions import RunStoppedError

__all__ = ["EVENTS_TIMEOUT_S", "deliver_events", "delivering_events"]

EVENTS_TIMEOUT_S = 30.0
"""The longest a command waits for its events; past it, Prefect's exit hook sends the rest."""

R = TypeVar("R")


def deliver_events(timeout_s: float = EVENTS_TIMEOUT_S) -> bool:
    """Wait until every event this process queued has been sent to the Prefect API.

    Args:
        timeout_s: The longest wait, in seconds, over all events workers.

    Returns:
        Whether every queue emptied within ``timeout_s``.
    """
    from prefect.events.worker import EventsWorker

    # Prefect's own task runners flush a process's events the same way. The registry
    # is shared by every kind of Prefect queue service: only the events workers count.
    with EventsWorker._instance_lock:
        services = list(EventsWorker._instances.values())  # type: ignore[misc]  # a class-level registry
    workers = [service for service in services if isinstance(service, EventsWorker)]
    deadline = time.monotonic() + timeout_s
    delivered = True
    for worker in workers:
        # The queue's join has no timeout: wait for it on a daemon thread instead,
        # so an API that stopped answering cannot hold the command up for ever.
        waiter = threading.Thread(target=worker.wait_until_empty, name="oloproof-events", daemon=True)
        waiter.start()
        waiter.join(max(0.0, deadline - time.monotonic()))
        delivered = delivered and not waiter.is_alive()
    return delivered


def delivering_events(run: Callable[[], R]) -> R:
    """``run()``, then its events delivered (`deliver_events`) when it is a top-level flow call.

    A flow called inside another flow run leaves its events to the outer call. A
    stopped run (Ctrl-C, SIGTERM) does not wait: it must stop within seconds.
    """
    if FlowRunContext.get() is not None:
        return run()
    try:
        result = run()
    except RunStoppedError:
        raise
    except Exception:
        deliver_events()  # a failed run's events too: its failure is in them
        raise
    deliver_events()
    return result
