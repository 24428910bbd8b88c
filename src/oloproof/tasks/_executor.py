"""One shared limiter for every call into user code.

All batch tasks of a run submit their calls here, so at most ``max_concurrency``
user calls (sync or ``async def``) are in flight across all stages at once.
Coroutines run on one background event loop, so an async client bound to that
loop keeps working across calls; sync callables run on daemon worker threads.

A run must never hang on user code, so:

- every call has its stage's timeout; an async call past it is cancelled, a
  blocking one is abandoned (its thread keeps running until the call returns,
  and a fresh worker takes its place, so the run's capacity is unchanged); the
  timeout is a `TimeBudget`, which a provider's pool does not charge for the
  waits for its slots and rate buckets;
- anything user code raises, ``BaseException`` included, is the call's error;
- `StageExecutor.close` cancels every pending call, so whoever waits on one
  wakes up, and the process can exit even while an abandoned call still runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from oloproof._exceptions import RunStoppedError
from oloproof.providers import TimeBudget

__all__ = ["CallResult", "CallTimeoutError", "StageExecutor"]

_CLOSE_GRACE = 5.0
"""Seconds `StageExecutor.close` waits for cancelled calls to unwind."""


class CallTimeoutError(Exception):
    """A user call ran past its stage's timeout."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timeout after {seconds:g}s")
        self.seconds = seconds


class CallResult:
    """The outcome of one user call: a value or an exception, and its duration."""

    __slots__ = ("error", "ms", "value")

    def __init__(self, value: Any = None, error: BaseException | None = None, ms: float = 0.0):
        self.value = value
        self.error = error
        self.ms = ms


class _Workers:
    """Daemon threads running blocking user calls for the event loop.

    Daemon threads, never a ``ThreadPoolExecutor``: the interpreter joins those
    at exit, so one call that never returns would keep the process alive.
    """

    def __init__(self, size: int) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._target = size
        self._live = 0
        for _ in range(size):
            self._spawn()

    def _spawn(self) -> None:
        with self._lock:
            self._live += 1
        threading.Thread(target=self._work, name="oloproof-call", daemon=True).start()

    def run(self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], args: tuple[Any, ...]) -> asyncio.Future[Any]:
        """Queue ``fn(*args)``; the returned loop future settles when it returns."""
        future = loop.create_future()
        self._queue.put((loop, future, fn, args))
        return future

    def abandon(self) -> None:
        """A worker is stuck in a timed-out call: another takes its place."""
        self._spawn()

    def shutdown(self) -> None:
        with self._lock:
            self._target = 0
            live = self._live
        for _ in range(live):
            self._queue.put(None)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                break
            loop, future, fn, args = item
            if not future.cancelled():
                _settle(loop, future, *_invoke(fn, args))
            with self._lock:
                if self._live > self._target:  # a replacement took this thread's place
                    break
        with self._lock:
            self._live -= 1


def _invoke(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, BaseException | None]:
    try:
        return fn(*args), None
    except BaseException as exc:  # noqa: BLE001 - SystemExit or KeyboardInterrupt from user code is the case's error
        return None, exc


def _settle(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    # The error travels inside the result: a future holding GeneratorExit would
    # not raise it cleanly through the coroutines awaiting it.
    def apply() -> None:
        if not future.done():
            future.set_result((value, error))

    try:
        loop.call_soon_threadsafe(apply)
    except RuntimeError:  # the loop is closed: the run was stopped and nobody waits
        pass


class StageExecutor:
    """Runs user callables with a global concurrency limit and per-stage timeouts.

    Args:
        max_concurrency: The most user calls in flight at once.
        timeouts: Seconds a call of each stage may take (``None``: no limit).
    """

    def __init__(self, max_concurrency: int, timeouts: Mapping[str, float | None] | None = None) -> None:
        self.max_concurrency = max_concurrency
        self.timeouts = dict(timeouts or {})
        self._workers = _Workers(max_concurrency)
        self._loop = asyncio.new_event_loop()
        self._semaphore = asyncio.Semaphore(max_concurrency)
        # Re-entrant: a signal handler may close the executor from a thread inside it.
        self._lock = threading.RLock()
        self._pending: set[concurrent.futures.Future[CallResult]] = set()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="oloproof-loop", daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        """Whether the executor was closed: no new call is accepted."""
        return self._closed

    def submit(
        self, fn: Callable[..., Any], *args: Any, stage: str = "", limited: bool = True
    ) -> concurrent.futures.Future[CallResult]:
        """Schedule ``fn(*args)`` under ``stage``'s timeout.

        The future never raises for a failing call (it carries the error); it is
        cancelled when the executor closes first. An unlimited call (an LLM judge,
        limited by its provider) does not take one of the ``max_concurrency`` slots
        of the system under test, so neither can starve the other.

        Raises:
            RunStoppedError: The executor is closed.
        """
        with self._lock:
            if self._closed:
                raise RunStoppedError("the run was stopped")
            call = self._call(fn, args, self.timeouts.get(stage), limited)
            future = asyncio.run_coroutine_threadsafe(call, self._loop)
            self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        return future

    def map(self, calls: list[tuple[Callable[..., Any], tuple[Any, ...]]], stage: str = "") -> list[CallResult]:
        """Run many calls and return their results in order.

        Raises:
            RunStoppedError: The executor closed before every call finished.
        """
        futures = [self.submit(fn, *args, stage=stage) for fn, args in calls]
        try:
            return [future.result() for future in futures]
        except concurrent.futures.CancelledError:
            raise RunStoppedError("the run was stopped") from None

    def close(self) -> None:
        """Cancel every pending call and stop; returns within a few seconds.

        Waiters of a cancelled call wake up; an abandoned blocking call keeps its
        daemon thread until it returns, without holding up the process's exit.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._thread.is_alive():
            try:
                asyncio.run_coroutine_threadsafe(self._cancel_all(), self._loop).result(_CLOSE_GRACE)
            except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError, RuntimeError):
                pass
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=_CLOSE_GRACE)
        for future in list(self._pending):  # whatever the loop could not settle
            future.cancel()
        self._workers.shutdown()

    def _serve(self) -> None:
        try:
            self._loop.run_forever()
        finally:
            with self._lock:
                self._closed = True
            for future in list(self._pending):
                future.cancel()

    async def _cancel_all(self) -> None:
        current = asyncio.current_task()
        tasks = [task for task in asyncio.all_tasks() if task is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def run_coroutine(self, coroutine: Any, timeout: float = _CLOSE_GRACE) -> None:
        """Run ``coroutine`` on the call loop and wait for it (up to ``timeout``);
        a closed executor just closes the coroutine."""
        if self._closed or not self._thread.is_alive():
            coroutine.close()
            return
        try:
            asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError, RuntimeError):
            pass

    async def _call(
        self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float | None, limited: bool
    ) -> CallResult:
        async with self._semaphore if limited else contextlib.nullcontext():
            started = time.perf_counter()
            blocking = not inspect.iscoroutinefunction(fn)
            # A budget, not a plain deadline: a provider's pool suspends it while
            # the call waits for the provider's slots and rate buckets.
            budget = TimeBudget(timeout).limit() if timeout is not None else contextlib.nullcontext()
            try:
                async with budget:
                    value, error = await self._guarded(fn, args, blocking)
            except TimeoutError:
                if blocking:
                    self._workers.abandon()
                value, error = None, CallTimeoutError(timeout or 0.0)
            return CallResult(value=value, error=error, ms=(time.perf_counter() - started) * 1000)

    async def _guarded(
        self, fn: Callable[..., Any], args: tuple[Any, ...], blocking: bool
    ) -> tuple[Any, BaseException | None]:
        # User code is awaited inside this coroutine, never as a task of its own:
        # asyncio re-raises KeyboardInterrupt and SystemExit out of a task into the
        # loop, which would kill it. Only a cancellation of ours passes through.
        try:
            if blocking:
                value, error = await self._workers.run(self._loop, fn, args)
                if error is not None:
                    return None, error
            else:
                value = await fn(*args)
            if inspect.isawaitable(value):
                value = await value
        except asyncio.CancelledError:
            if self._closed or _cancelling():
                raise
            return None, RuntimeError("the call was cancelled")
        except BaseException as exc:  # noqa: BLE001 - the case's error, whatever user code raised
            return None, exc
        return value, None


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
