"""A call's time limit that does not run while the call waits for a provider.

A stage's timeout (``timeouts.judge``) bounds one judgment. An LLM judgment spends
most of a rate-limited run queued for its provider's concurrency slot and rate
buckets, and that wait is not the judgment being late: it is charged nothing.
What is charged is the time its requests are out at the provider.

The executor gives each call a `TimeBudget` (`TimeBudget.limit`), which runs its
deadline like ``asyncio.timeout``. The provider pool suspends that deadline for
the whole of a judged call (`TimeBudget.outside`) and charges the budget itself
for each request in flight (`TimeBudget.charged`), so a request still out when
the budget is spent is cut off and the call comes back as an error with its
accounting, like any other failed call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["BudgetSpent", "TimeBudget", "current_budget"]

T = TypeVar("T")

_CURRENT: ContextVar[TimeBudget | None] = ContextVar("oloproof_time_budget", default=None)


class BudgetSpent(Exception):
    """A call's time budget ran out while one of its requests was out."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timeout after {seconds:g}s")
        self.seconds = seconds


def current_budget() -> TimeBudget | None:
    """The budget of the call running in this task, if it has one."""
    return _CURRENT.get()


class TimeBudget:
    """``seconds`` of a call's time, charged while it runs and not while it waits.

    For use from one event loop (the call's). Concurrent requests of one call
    are each charged their own time.

    Args:
        seconds: The time the call may be charged.
        clock: Seconds of a monotonic clock (injected by tests).
    """

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.used = 0.0
        """Seconds charged so far."""
        self._clock = clock
        self._timer: asyncio.Timeout | None = None
        self._since: float | None = None  # when the deadline last resumed
        self._suspended = 0

    def remaining(self) -> float:
        """Seconds left to charge (never negative)."""
        running = self._clock() - self._since if self._since is not None else 0.0
        return max(0.0, self.seconds - self.used - running)

    @asynccontextmanager
    async def limit(self) -> AsyncIterator[TimeBudget]:
        """Run the block under this budget: past it, the block is cancelled and
        ``TimeoutError`` raised (as ``asyncio.timeout`` does); the budget is the
        current one of the block's task."""
        token = _CURRENT.set(self)
        try:
            async with asyncio.timeout(None) as timer:
                self._timer = timer
                self._resume()
                try:
                    yield self
                finally:
                    self._timer = None
                    self._pause()
        finally:
            _CURRENT.reset(token)

    @contextmanager
    def outside(self) -> Iterator[None]:
        """Suspend the deadline for the block (a wait for a provider, or a call whose
        requests are charged with `charged`)."""
        if self._suspended == 0:
            self._pause()
        self._suspended += 1
        try:
            yield
        finally:
            self._suspended -= 1
            if self._suspended == 0:
                self._resume()

    async def charged(self, sending: Awaitable[T]) -> T:
        """Await ``sending`` (one request), charging the budget for its time.

        Raises:
            BudgetSpent: The budget was spent before or while the request was out;
                a request still out is cancelled.
        """
        remaining = self.remaining()
        if remaining <= 0:
            if asyncio.iscoroutine(sending):
                sending.close()
            raise BudgetSpent(self.seconds)
        started = self._clock()
        try:
            async with asyncio.timeout(remaining) as timer:
                return await sending
        except TimeoutError:
            if timer.expired():
                raise BudgetSpent(self.seconds) from None
            raise
        finally:
            self.used += self._clock() - started

    def _pause(self) -> None:
        if self._since is not None:
            self.used += self._clock() - self._since
            self._since = None
        if self._timer is not None:
            self._timer.reschedule(None)

    def _resume(self) -> None:
        if self._timer is None:
            return
        self._since = self._clock()
        loop = asyncio.get_running_loop()
        self._timer.reschedule(loop.time() + max(0.0, self.seconds - self.used))
