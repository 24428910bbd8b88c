"""One shared limiter for every call into user code.

All batch tasks of a run submit their calls here, so at most ``max_concurrency``
user calls (sync or ``async def``) are in flight across all stages at once.
Sync callables run on a thread pool; coroutines run on one background event
loop, so an async client bound to that loop keeps working across calls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["CallResult", "StageExecutor"]


class CallResult:
    """The outcome of one user call: a value or an exception, and its duration."""

    __slots__ = ("error", "ms", "value")

    def __init__(self, value: Any = None, error: BaseException | None = None, ms: float = 0.0):
        self.value = value
        self.error = error
        self.ms = ms


class StageExecutor:
    """Runs user callables with a global concurrency limit."""

    def __init__(self, max_concurrency: int) -> None:
        self.max_concurrency = max_concurrency
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max_concurrency, thread_name_prefix="oloproof-call"
        )
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="oloproof-loop", daemon=True
        )
        self._thread.start()
        self._semaphore = asyncio.Semaphore(max_concurrency)

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[CallResult]:
        """Schedule ``fn(*args)``; the future never raises, it carries the error."""
        return asyncio.run_coroutine_threadsafe(self._call(fn, args), self._loop)

    async def _call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> CallResult:
        async with self._semaphore:
            started = time.perf_counter()
            try:
                if inspect.iscoroutinefunction(fn):
                    value = await fn(*args)
                else:
                    value = await self._loop.run_in_executor(self._pool, fn, *args)
                    if inspect.isawaitable(value):
                        value = await value
            except Exception as exc:  # a failing case is recorded, never fatal
                return CallResult(error=exc, ms=(time.perf_counter() - started) * 1000)
            return CallResult(value=value, ms=(time.perf_counter() - started) * 1000)

    def map(self, calls: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> list[CallResult]:
        """Run many calls and return their results in order."""
        futures = [self.submit(fn, *args) for fn, args in calls]
        return [future.result() for future in futures]

    def close(self) -> None:
        """Stop the event loop and the thread pool."""
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._pool.shutdown(wait=False, cancel_futures=True)
