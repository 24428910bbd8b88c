"""A run's groups of batches: collected as encoded, a bounded number in flight."""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from oloproof.flows import _batches
from oloproof.stages._batch import Batch


class FakeFuture:
    """What `_Parts` uses of a Prefect future: callbacks, wait, state and result."""

    def __init__(self, value: Any = None, error: Exception | None = None) -> None:
        self.value, self.error, self.callbacks = value, error, []
        self.state = SimpleNamespace(is_failed=lambda: error is not None, is_crashed=lambda: False)

    def add_done_callback(self, callback: Any) -> None:
        self.callbacks.append(callback)

    def finish(self) -> None:
        for callback in self.callbacks:
            callback(self)

    def wait(self) -> None:
        pass

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


def parts_of(closed: list[bool]) -> _batches._Parts:
    env = SimpleNamespace(executor=SimpleNamespace(close=lambda: closed.append(True)))
    return _batches._Parts(env)  # type: ignore[arg-type]


def test_groups_are_collected_as_their_parts_arrive_and_returned_in_order() -> None:
    parts = parts_of([])
    stage_a, part_a, part_b = FakeFuture(), FakeFuture(SimpleNamespace(index=0)), FakeFuture(SimpleNamespace(index=5))
    parts.add(Batch(0, ("a", "b")), [stage_a], part_a)
    parts.add(Batch(5, ("c",)), [], part_b)
    assert parts.cases_in_flight == 3
    stage_a.finish()
    part_b.finish()
    parts.collect_one()  # a stage future finishing is not a group done: waits for b's part
    assert parts.cases_in_flight == 2
    part_a.finish()
    assert [part.index for part in parts.collect_all()] == [0, 5]
    assert parts.cases_in_flight == 0


def test_the_first_failure_closes_the_executor_and_is_raised() -> None:
    closed: list[bool] = []
    parts = parts_of(closed)
    failing = FakeFuture(error=RuntimeError("judge broke"))
    parts.add(Batch(0, ("a",)), [failing], FakeFuture(SimpleNamespace(index=0)))
    threading.Timer(0.01, failing.finish).start()
    with pytest.raises(RuntimeError, match="judge broke"):
        parts.collect_one()
    assert closed == [True]


@pytest.mark.slow
@pytest.mark.services
def test_a_run_keeps_at_most_the_bound_of_cases_in_flight(prefect_api: None, example_project: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from _cli.inprocess import invoke_ok

    monkeypatch.setattr(_batches, "IN_FLIGHT_CASES", 3)
    # One-case groups, so that the bound decides how many run at once.
    monkeypatch.setattr(_batches, "group_batches", functools.partial(_batches.group_batches, min_cases=1))
    seen: list[int] = []
    add = _batches._Parts.add

    def watched(self: _batches._Parts, *args: Any) -> None:
        add(self, *args)
        seen.append(self.cases_in_flight)

    monkeypatch.setattr(_batches._Parts, "add", watched)
    report = json.loads(invoke_ok("run", str(example_project), "--set", "batch_size=1", "--json"))
    assert len(seen) == report["case_count"] == 13
    assert max(seen) == 3  # three at once, never more
    assert report["cache"]["execution"]["miss"] == 13
    assert all(metric["missing"] == 0 for metric in report["metrics"])
