"""Equal calls of runs in flight at once are made once (the runs of a sweep share their flights)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from fake_env import fake_env

from oloproof._exceptions import RunStoppedError
from oloproof.dataset import Case
from oloproof.records import GenerationRecord
from oloproof.store import ResultsStore
from oloproof.tasks import Flights
from oloproof.tasks._cached import WorkItem, run_cached
from oloproof.tasks._executor import StageExecutor

CASES = {"c1": Case(id="c1", input={"q": "alpha"}, expected={})}


class Watched(Flights):
    """Flights that count the claims made: a call can wait until both runs claimed its key."""

    def __init__(self) -> None:
        super().__init__()
        self.claimed = threading.Semaphore(0)

    def claim(self, keys):
        claims = super().claim(keys)
        self.claimed.release()
        return claims


@pytest.fixture
def shared(tmp_path):
    executor = StageExecutor(4)
    yield ResultsStore(str(tmp_path / "results")), executor
    executor.close()


def _env(store, executor, flights, run_id):
    env = fake_env(store, CASES)
    env.run_id, env.executor, env.flights = run_id, executor, flights
    return env


def _item(call) -> WorkItem:
    return WorkItem(case_id="c1", key="k1", call=call, args=(), finish=lambda value: GenerationRecord(output=value))


def _both(store, executor, flights, call):
    """Run the same key in two runs at once; returns their outcomes."""
    first, second = (_env(store, executor, flights, run) for run in ("run_a", "run_b"))
    with ThreadPoolExecutor(2) as pool:
        a = pool.submit(run_cached, first, "generate", [_item(call)])
        b = pool.submit(run_cached, second, "generate", [_item(call)])
        return a.result()["c1"], b.result()["c1"]


def test_a_key_two_runs_compute_at_once_is_called_once_and_shared(shared):
    store, executor = shared
    flights = Watched()
    calls: list[int] = []

    def generate() -> str:
        flights.claimed.acquire(timeout=60)  # both runs claimed the key before this call returns
        flights.claimed.acquire(timeout=60)
        calls.append(1)
        return "answer"

    a, b = _both(store, executor, flights, generate)
    assert calls == [1]
    assert sorted([a.hit, b.hit]) == [False, True]  # one made the call, the other shared it
    assert a.record == b.record == GenerationRecord(output="answer")
    assert store.get_records("generate", ["k1"]) == {"k1": {"output": "answer"}}  # written once, by the leader
    assert len(flights) == 0


def test_a_failed_call_is_the_error_of_both_and_cached_by_neither(shared):
    store, executor = shared
    flights = Watched()

    def generate() -> str:
        flights.claimed.acquire(timeout=60)
        flights.claimed.acquire(timeout=60)
        raise RuntimeError("endpoint down")

    a, b = _both(store, executor, flights, generate)
    assert a.error == b.error and a.error is not None and a.error.startswith("RuntimeError: endpoint down")
    assert store.get_records("generate", ["k1"]) == {}


def test_a_follower_whose_leader_made_no_call_makes_it_itself(shared):
    store, executor = shared
    flights = Flights()
    held = flights.claim(["generate:k1"])  # another run leads the key ...
    env = _env(store, executor, flights, "run_b")
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(run_cached, env, "generate", [_item(lambda: "own answer")])
        flights.release(held)  # ... and ends without a result (its run was stopped, say)
        done = pending.result()["c1"]
    assert (done.hit, done.record) == (False, GenerationRecord(output="own answer"))
    assert store.get_records("generate", ["k1"]) == {"k1": {"output": "own answer"}}


def test_runs_that_bypass_the_cache_share_nothing(shared):
    store, executor = shared
    flights = Flights()
    held = flights.claim(["generate:k1"])
    env = _env(store, executor, flights, "run_b")
    done = run_cached(env, "generate", [_item(lambda: "fresh")], use_cache=False)["c1"]
    assert (done.hit, done.record) == (False, GenerationRecord(output="fresh"))
    flights.release(held)


def test_a_stopped_run_wakes_every_batch_waiting_on_its_calls(tmp_path):
    executor = StageExecutor(1)
    started = threading.Event()

    def generate() -> str:
        started.set()
        threading.Event().wait(60)  # a call that would outlive the run
        return "late"

    env = _env(ResultsStore(str(tmp_path / "results")), executor, Flights(), "run_a")
    items = [WorkItem(case_id=f"c{n}", key=f"k{n}", call=generate, args=(), finish=GenerationRecord) for n in range(3)]
    env.cases = {f"c{n}": Case(id=f"c{n}", input={"n": n}, expected={}) for n in range(3)}
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(run_cached, env, "generate", items)
        assert started.wait(60)
        executor.close()  # as a signal does: pending calls are cancelled ...
        with pytest.raises(RunStoppedError):  # ... and the batch waiting on them stops
            pending.result(timeout=60)
