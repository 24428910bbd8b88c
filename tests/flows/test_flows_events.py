"""A command's Prefect events are delivered before it returns, so Prefect's exit hook has none left.

Prefect's exit hook stops the events worker and, while it sends what is still queued,
prints ``EventsWorker - Still processing items: N items remaining...`` on the console.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from types import SimpleNamespace

import pytest
from prefect._internal.concurrency.services import _QueueServiceBase
from prefect.events import Event
from prefect.events.clients import AssertingEventsClient
from prefect.events.worker import EventsWorker
from prefect.settings import PREFECT_API_URL, temporary_settings

from oloproof._exceptions import RunStoppedError
from oloproof.flows import _events
from oloproof.flows._events import deliver_events, delivering_events


class _SlowClient(AssertingEventsClient):
    """Sends each event a moment later, as a busy server's websocket does."""

    async def _emit(self, event: Event) -> None:
        await asyncio.sleep(0.05)
        await super()._emit(event)


@pytest.fixture
def slow_events(monkeypatch):
    # A registry of this test's own: services other tests left behind are not waited for.
    monkeypatch.setattr(_QueueServiceBase, "_instances", {})
    AssertingEventsClient.reset()
    EventsWorker.set_client_override(_SlowClient)
    # The worker's orchestration client is made, never called: nothing listens here.
    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        try:
            yield EventsWorker.instance()
        finally:
            EventsWorker.drain_all(timeout=30, at_exit=False)
            EventsWorker.set_client_override(None)
            AssertingEventsClient.reset()


def _event(i: int) -> Event:
    return Event(event="oloproof.test", resource={"prefect.resource.id": f"oloproof.test.{i}"})


def test_every_queued_event_is_sent_and_the_exit_drain_prints_nothing(slow_events, caplog):
    for i in range(8):
        slow_events.send(_event(i))
    assert deliver_events() is True
    assert [e.resource.id for e in AssertingEventsClient.last.events] == [f"oloproof.test.{i}" for i in range(8)]
    with caplog.at_level(logging.WARNING, logger="EventsWorker"):
        slow_events.drain(at_exit=True)  # what Prefect's exit hook does
    assert "Still processing items" not in caplog.text


def test_without_events_there_is_nothing_to_wait_for(monkeypatch):
    monkeypatch.setattr(_QueueServiceBase, "_instances", {})
    assert deliver_events(timeout_s=0) is True


def test_only_events_workers_are_waited_for_and_at_most_the_timeout(monkeypatch):
    released = threading.Event()

    class Stuck(EventsWorker):
        def __init__(self) -> None:  # never started: its queue does not empty
            pass

        def wait_until_empty(self) -> None:
            released.wait()

    other = SimpleNamespace(wait_until_empty=lambda: pytest.fail("a log worker is not an events worker"))
    monkeypatch.setattr(_QueueServiceBase, "_instances", {1: other})
    assert deliver_events(timeout_s=0) is True
    monkeypatch.setattr(_QueueServiceBase, "_instances", {1: other, 2: Stuck()})
    try:
        assert deliver_events(timeout_s=0) is False
    finally:
        released.set()


@pytest.fixture
def delivered(monkeypatch) -> list[str]:
    calls: list[str] = []
    monkeypatch.setattr(_events, "deliver_events", lambda: calls.append("delivered"))
    return calls


def test_a_top_level_flow_call_returns_once_its_events_are_delivered(delivered):
    assert delivering_events(lambda: {"run_id": "run_1"}) == {"run_id": "run_1"}
    assert delivered == ["delivered"]


def test_a_failed_flow_calls_events_are_delivered_too(delivered):
    def fail() -> None:
        raise ValueError("the run failed")

    with pytest.raises(ValueError):
        delivering_events(fail)
    assert delivered == ["delivered"]


def test_a_stopped_run_does_not_wait(delivered):
    def stop() -> None:
        raise RunStoppedError("the run was stopped")

    with pytest.raises(RunStoppedError):
        delivering_events(stop)
    with pytest.raises(KeyboardInterrupt):
        delivering_events(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert delivered == []


def test_a_flow_called_inside_a_flow_run_leaves_its_events_to_the_outer_call(delivered, monkeypatch):
    monkeypatch.setattr(_events.FlowRunContext, "get", classmethod(lambda cls: object()))
    assert delivering_events(lambda: 1) == 1
    assert delivered == []
