"""The shared call limiter never hangs: timeouts, cancellation on close, any exception a result."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from oloproof._exceptions import RunStoppedError
from oloproof.tasks._executor import CallTimeoutError, StageExecutor

_WAIT = 30  # seconds a test waits for what must happen at once; only a hang reaches it


@pytest.fixture
def executor():
    made: list[StageExecutor] = []

    def make(max_concurrency: int = 2, **timeouts: float) -> StageExecutor:
        made.append(StageExecutor(max_concurrency, timeouts))
        return made[-1]

    yield make
    for executor in made:
        executor.close()


def test_sync_and_async_calls_return_their_values(executor):
    async def double(x):
        await asyncio.sleep(0)
        return 2 * x

    pool = executor()
    assert [r.value for r in pool.map([(lambda x: x + 1, (1,)), (double, (4,))])] == [2, 8]


@pytest.mark.parametrize("error", [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), ValueError("bad")])
def test_any_exception_from_sync_user_code_is_the_calls_error(executor, error):
    def fail():
        raise error

    pool = executor(max_concurrency=1)
    (failed,) = pool.map([(fail, ())])
    assert failed.error is error
    (after,) = pool.map([(lambda: "still serving", ())])
    assert after.value == "still serving"


@pytest.mark.parametrize("error", [SystemExit(3), KeyboardInterrupt(), GeneratorExit()])
def test_a_base_exception_from_async_user_code_leaves_the_loop_alive(executor, error):
    async def fail():
        raise error

    async def fine():
        return "alive"

    pool = executor()
    (failed,) = pool.map([(fail, ())])
    assert failed.error is error
    assert pool.map([(fine, ())])[0].value == "alive"


def test_a_blocking_call_past_its_timeout_is_abandoned_and_capacity_kept(executor):
    release = threading.Event()
    pool = executor(max_concurrency=1, generate=0.2)
    try:
        (late,) = pool.map([(release.wait, (_WAIT,))], stage="generate")
        assert isinstance(late.error, CallTimeoutError)
        assert str(late.error) == "timeout after 0.2s"
        # The stuck thread was replaced: the one slot serves the next call.
        assert pool.map([(lambda: "next", ())], stage="generate")[0].value == "next"
    finally:
        release.set()


def test_an_async_call_past_its_timeout_is_cancelled(executor):
    cancelled = threading.Event()

    async def forever():
        try:
            await asyncio.sleep(_WAIT)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    pool = executor(retrieve=0.1)
    (late,) = pool.map([(forever, ())], stage="retrieve")
    assert str(late.error) == "timeout after 0.1s"
    assert cancelled.wait(_WAIT)


def test_stages_have_their_own_timeouts(executor):
    release = threading.Event()
    pool = executor(judge=0.1)
    try:
        future = pool.submit(release.wait, 1.0, stage="generate")  # no generate timeout set
        (judged,) = pool.map([(release.wait, (_WAIT,))], stage="judge")
        assert isinstance(judged.error, CallTimeoutError)
        assert future.result(_WAIT).value is False
    finally:
        release.set()


def test_closing_cancels_every_pending_call_and_wakes_waiters(executor):
    release = threading.Event()

    async def forever():
        await asyncio.sleep(_WAIT)

    pool = executor(max_concurrency=2)
    try:
        futures = [pool.submit(release.wait, _WAIT) for _ in range(3)] + [pool.submit(forever)]
        woke = threading.Event()

        def wait_all():
            concurrent.futures.wait(futures)
            woke.set()

        threading.Thread(target=wait_all, daemon=True).start()
        pool.close()
        assert woke.wait(_WAIT)
        assert all(future.cancelled() for future in futures)
        with pytest.raises(RunStoppedError):
            pool.submit(lambda: None)
        with pytest.raises(RunStoppedError):
            pool.map([(lambda: None, ())])
    finally:
        release.set()


def test_close_is_idempotent(executor):
    pool = executor()
    pool.close()
    pool.close()
    assert pool.closed


def test_unlimited_calls_take_no_slot_of_the_system(executor):
    # An LLM judge waiting on its provider must not hold one of the system's
    # max_concurrency slots, nor wait for them.
    small = executor(1)
    release = threading.Event()
    try:
        slow_system = small.submit(release.wait, 10)
        judge = small.submit(asyncio.sleep, 0, "judged", limited=False)
        assert judge.result(timeout=5).value == "judged"
        assert not slow_system.done()
        blocked = small.submit(lambda: "system")
        with pytest.raises(concurrent.futures.TimeoutError):
            blocked.result(timeout=0.3)  # the one slot is still taken
        release.set()
        assert blocked.result(timeout=5).value == "system"
    finally:
        release.set()


def test_run_coroutine_runs_on_the_call_loop_and_is_a_no_op_once_closed(executor):
    executor = executor()
    seen = []

    async def note():
        seen.append(asyncio.get_running_loop())

    executor.run_coroutine(note())
    assert len(seen) == 1 and seen[0] is executor._loop
    executor.close()
    executor.run_coroutine(note())  # closed: the coroutine is closed, never awaited
    assert len(seen) == 1
