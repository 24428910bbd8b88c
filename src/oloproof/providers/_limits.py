"""How fast one provider is called: an adaptive concurrency limit and rate buckets.

Each request takes, in this order, a concurrency slot, one request from the
RPM bucket and its estimated tokens from the TPM bucket, and is sent at once:
taking the rate tokens last means sends follow the buckets' timing even when
slots free up in a burst. A slot is given back before any retry backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

from aiolimiter import AsyncLimiter

from oloproof.providers._config import ProviderConfig

__all__ = ["AdaptiveConcurrency", "ProviderLimits", "Slot", "estimate_tokens"]

Outcome = Literal["ok", "rate_limited", "failed"]


class AdaptiveConcurrency:
    """A concurrency limit that backs off on 429s and creeps back (AIMD-like).

    The limit starts at ``maximum``, halves (down to 1) on each rate-limited
    request and grows by one after ``recover_after`` successes in a row, never
    past ``maximum``. Other failures leave it alone. Waiters are served first in,
    first out. For use from one event loop.

    Args:
        maximum: The limit to start at and never exceed (at least 1).
        recover_after: Successes in a row that earn one more slot (at least 1).
    """

    def __init__(self, maximum: int, *, recover_after: int = 10) -> None:
        if isinstance(maximum, bool) or not isinstance(maximum, int) or maximum < 1:
            raise ValueError(f"maximum must be an integer >= 1, not {maximum!r}")
        if (
            isinstance(recover_after, bool)
            or not isinstance(recover_after, int)
            or recover_after < 1
        ):
            raise ValueError(f"recover_after must be an integer >= 1, not {recover_after!r}")
        self.maximum = maximum
        self.recover_after = recover_after
        self._limit = maximum
        self._in_flight = 0
        self._streak = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def limit(self) -> int:
        """How many requests may be in flight now."""
        return self._limit

    @property
    def in_flight(self) -> int:
        """How many slots are taken now."""
        return self._in_flight

    async def acquire(self) -> None:
        """Wait for a free slot and take it."""
        if self._in_flight < self._limit and not self._waiters:
            self._in_flight += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                # The slot was handed over just as the wait was cancelled.
                self._in_flight -= 1
                self._wake()
            else:
                # A cancelled waiter may already have been dropped by _wake.
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self, outcome: Outcome) -> None:
        """Give a slot back, saying how its request went."""
        if self._in_flight <= 0:
            raise RuntimeError("release() without a matching acquire()")
        self._in_flight -= 1
        if outcome == "rate_limited":
            self._limit = max(1, self._limit // 2)
            self._streak = 0
        elif outcome == "ok":
            self._streak += 1
            if self._streak >= self.recover_after:
                self._streak = 0
                self._limit = min(self.maximum, self._limit + 1)
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self._in_flight < self._limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._in_flight += 1
                waiter.set_result(None)


class Slot:
    """The request one slot was taken for; mark it rate-limited before it is released."""

    def __init__(self) -> None:
        self.rate_limited = False


def estimate_tokens(prompt_chars: int, max_tokens: int) -> int:
    """A request's tokens before sending: prompt characters / 4 plus the reply budget."""
    return math.ceil(prompt_chars / 4) + max_tokens


_BURST_SHARE = 60
"""A bucket holds this fraction of a window's allowance: a second's worth per minute."""


def _paced(per_window: int, window_s: float) -> AsyncLimiter:
    """A bucket refilling at ``per_window / window_s`` that holds a sixtieth of it."""
    burst = max(1.0, per_window / _BURST_SHARE)
    return AsyncLimiter(burst, time_period=window_s * burst / per_window)


class ProviderLimits:
    """The concurrency limit and the RPM / TPM buckets of one provider.

    Build it on the event loop that will use it; the buckets are
    ``aiolimiter.AsyncLimiter`` leaky buckets holding a sixtieth of the window's
    allowance (at least one request), so requests are paced at ``rpm`` per
    window from the start: a bucket holding the whole minute would let ``rpm``
    requests out at once, and providers enforce their per-minute limits over
    shorter intervals.

    Args:
        config: The provider's configuration.
        recover_after: Successes in a row that earn back one concurrency slot.
    """

    def __init__(self, config: ProviderConfig, *, recover_after: int = 10) -> None:
        self.concurrency = AdaptiveConcurrency(config.max_concurrency, recover_after=recover_after)
        self.rpm = _paced(config.rpm, config.rate_window_s) if config.rpm else None
        self.tpm = _paced(config.tpm, config.rate_window_s) if config.tpm else None
        self.tpm_per_window = config.tpm or 0

    @asynccontextmanager
    async def request(self, tokens: int) -> AsyncIterator[Slot]:
        """Hold a slot and the rate tokens for one request of about ``tokens`` tokens.

        The slot is released as ``ok`` when the block ends normally, as
        ``rate_limited`` when the block marked it so, else as ``failed``.
        """
        await self.concurrency.acquire()
        slot = Slot()
        outcome: Outcome = "failed"
        try:
            if self.rpm is not None:
                await self.rpm.acquire()
            if self.tpm is not None:
                # A request may need more than the bucket holds: it takes its
                # tokens a bucketful at a time, so the rate still holds. One
                # larger than a whole window's allowance is capped at it (it could
                # never fit; the provider will say so), waiting one window at most.
                remaining = float(min(tokens, self.tpm_per_window))
                while remaining > 0:
                    part = min(remaining, self.tpm.max_rate)
                    await self.tpm.acquire(part)
                    remaining -= part
            yield slot
            outcome = "ok"
        finally:
            if slot.rate_limited:
                outcome = "rate_limited"
            self.concurrency.release(outcome)
