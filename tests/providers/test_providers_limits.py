"""Concurrency and rate limits: the adaptive limit on its own, then as the server sees it."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from providers_wire import (
    ENV,
    GOOD,
    Answer,
    Script,
    chat_json,
    fast_retry,
    judge,
    max_in_window,
    openai_config,
    openai_error,
    request,
    run,
    serve,
)

from oloproof.providers import ProviderConfig, ProviderPool
from oloproof.providers._limits import AdaptiveConcurrency, ProviderLimits, estimate_tokens

CHAT = "/v1/chat/completions"


# --- AdaptiveConcurrency on its own -------------------------------------------------------


async def take(limit: AdaptiveConcurrency, n: int) -> None:
    for _ in range(n):
        await limit.acquire()


async def blocked(limit: AdaptiveConcurrency) -> bool:
    """Whether one more acquire has to wait (it is withdrawn either way)."""
    try:
        await asyncio.wait_for(limit.acquire(), 0.05)
    except TimeoutError:
        return True
    limit.release("failed")
    return False


def test_starts_at_the_maximum_and_blocks_past_it() -> None:
    async def go() -> None:
        limit = AdaptiveConcurrency(3)
        assert limit.limit == 3
        await take(limit, 3)
        assert limit.in_flight == 3
        assert await blocked(limit)
        limit.release("ok")
        assert not await blocked(limit)

    run(go())


def test_halves_on_each_429_down_to_one() -> None:
    async def go() -> None:
        limit = AdaptiveConcurrency(8)
        seen = []
        for _ in range(5):
            await limit.acquire()
            limit.release("rate_limited")
            seen.append(limit.limit)
        assert seen == [4, 2, 1, 1, 1]

    run(go())


def test_other_failures_leave_the_limit_alone() -> None:
    async def go() -> None:
        limit = AdaptiveConcurrency(4, recover_after=2)
        await limit.acquire()
        limit.release("rate_limited")
        for _ in range(3):
            await limit.acquire()
            limit.release("failed")
        assert limit.limit == 2

    run(go())


def test_recovers_one_slot_per_run_of_successes_never_past_the_maximum() -> None:
    async def go() -> None:
        limit = AdaptiveConcurrency(3, recover_after=4)
        for _ in range(2):
            await limit.acquire()
            limit.release("rate_limited")
        assert limit.limit == 1
        seen = []
        for _ in range(16):
            await limit.acquire()
            limit.release("ok")
            seen.append(limit.limit)
        assert seen == [1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3]

    run(go())


def test_a_429_resets_the_run_of_successes() -> None:
    async def go() -> None:
        limit = AdaptiveConcurrency(4, recover_after=3)
        for outcome in ("rate_limited", "ok", "ok", "rate_limited", "ok", "ok"):
            await limit.acquire()
            limit.release(outcome)  # type: ignore[arg-type]
        assert limit.limit == 1

    run(go())


def test_a_lowered_limit_holds_waiters_until_enough_slots_are_back() -> None:
    async def go() -> None:
        limit = AdaptiveConcurrency(4)
        await take(limit, 4)
        limit.release("rate_limited")  # limit 2, 3 in flight
        assert await blocked(limit)
        limit.release("ok")  # 2 in flight: still full
        assert await blocked(limit)
        limit.release("ok")  # 1 in flight
        assert not await blocked(limit)

    run(go())


def test_waiters_are_served_in_order_and_a_cancelled_one_leaks_nothing() -> None:
    async def go() -> None:
        limit = AdaptiveConcurrency(1)
        await limit.acquire()
        order: list[str] = []

        async def waiter(name: str) -> None:
            await limit.acquire()
            order.append(name)
            limit.release("ok")

        first = asyncio.create_task(waiter("first"))
        doomed = asyncio.create_task(waiter("doomed"))
        last = asyncio.create_task(waiter("last"))
        await asyncio.sleep(0.01)
        doomed.cancel()
        limit.release("ok")
        await asyncio.gather(first, last)
        assert doomed.cancelled()
        assert order == ["first", "last"]
        assert limit.in_flight == 0
        assert not await blocked(limit)

    run(go())


def test_bad_arguments() -> None:
    for maximum in (0, True, 1.5):
        with pytest.raises(ValueError, match="maximum"):
            AdaptiveConcurrency(maximum)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="recover_after"):
        AdaptiveConcurrency(2, recover_after=0)
    with pytest.raises(RuntimeError):
        AdaptiveConcurrency(2).release("ok")


def test_token_estimate_and_an_oversized_request_waits_one_window_at_most() -> None:
    assert estimate_tokens(400, 512) == 612
    assert estimate_tokens(401, 0) == 101

    taken: list[float] = []
    bucketful: list[float] = []

    async def go() -> float:
        limits = ProviderLimits(
            ProviderConfig(type="openai", base_url="http://127.0.0.1:1/v1", tpm=100, rate_window_s=0.3)
        )
        bucket = limits.tpm
        assert bucket is not None
        bucketful.append(bucket.max_rate)
        acquire = bucket.acquire

        async def counted(amount: float = 1) -> None:
            taken.append(amount)
            await acquire(amount)

        bucket.acquire = counted  # type: ignore[method-assign]
        started = time.monotonic()
        async with limits.request(10_000):  # 100 times the window's allowance: capped at it
            pass
        return time.monotonic() - started

    waited = run(go())
    # One window's allowance taken a bucketful at a time, never the 10,000 asked: one window
    # of waiting at most, whatever the machine's load; and it did wait (a lower bound holds).
    assert sum(taken) == pytest.approx(100) and max(taken) <= bucketful[0]
    assert waited > 0.2


# --- on the wire --------------------------------------------------------------------------


class InFlight:
    """A handler that counts the requests it is answering at once."""

    def __init__(self, reply: Answer, *, hold_s: float, rate_limit_first: int = 0) -> None:
        self.reply = reply
        self.hold_s = hold_s
        self.rate_limit_first = rate_limit_first
        self.lock = threading.Lock()
        self.arrivals = 0
        self.now = 0
        self.peak = 0

    def __call__(self, seen: Any) -> Answer:
        with self.lock:
            self.arrivals += 1
            if self.arrivals <= self.rate_limit_first:
                return openai_error(429, "slow down", headers={"retry-after-ms": "30"})
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.hold_s)
        finally:
            with self.lock:
                self.now -= 1
        return self.reply


def test_the_server_never_sees_more_than_max_concurrency(server: Any) -> None:
    counter = InFlight(chat_json(GOOD), hold_s=0.1)
    serve(server, CHAT, Script(counter))
    calls = judge({"p": openai_config(server, max_concurrency=3)}, *[request() for _ in range(9)])
    assert all(call.ok for call in calls)
    assert counter.peak == 3  # never more, and the three really ran at once


def test_429s_cut_the_concurrency_the_server_sees(server: Any) -> None:
    # The first four requests (sent together) are rate-limited: 4 -> 2 -> 1 -> 1 -> 1.
    # With no recovery in sight, everything after runs one at a time.
    counter = InFlight(chat_json(GOOD), hold_s=0.03, rate_limit_first=4)
    serve(server, CHAT, Script(counter))
    calls = judge(
        {"p": openai_config(server, max_concurrency=4)},
        *[request() for _ in range(8)],
        recover_after=1000,
    )
    assert all(call.ok for call in calls)
    assert sum(call.retries for call in calls) == 4
    assert counter.peak == 1


def paced_run(
    server: Any, config: ProviderConfig, calls: list[Any]
) -> tuple[list[float], float, float]:
    """Judge ``calls`` at once on a warmed pool, as the server sees them arrive.

    One call first warms the client (platform probe, first connection), then
    its token is left to leak out. A heartbeat task measures how long the event
    loop stalled once the first burst is sent (building a burst of requests
    stalls it by itself): on a starved machine arrivals bunch up at the server
    for reasons that are not the bucket's.

    Returns:
        The sorted arrival times, the moment the calls began, the longest stall.
    """
    script = serve(server, CHAT, Script(chat_json(GOOD)))
    pool = ProviderPool({"p": config}, ENV, retry=fast_retry())
    stall = 0.0

    async def heartbeat() -> None:
        nonlocal stall
        loop = asyncio.get_running_loop()
        await asyncio.sleep(0.15)
        while True:
            before = loop.time()
            await asyncio.sleep(0.005)
            stall = max(stall, loop.time() - before - 0.005)

    async def go() -> float:
        try:
            await pool.judge("p", request())
            await asyncio.sleep(0.3)
            beat = asyncio.create_task(heartbeat())
            began = time.monotonic()
            done = await asyncio.gather(*(pool.judge("p", call) for call in calls))
            beat.cancel()
            assert all(call.ok for call in done)
            return began
        finally:
            await pool.aclose()

    began = run(go())
    times = sorted(seen.at for seen in script.seen[1:])
    assert len(times) == len(calls)
    return times, began, stall


def early_arrivals(times: list[float], began: float, burst: int, every_s: float) -> list[int]:
    """The arrivals that came sooner than a full bucket of ``burst`` leaking one per ``every_s`` allows.

    The k-th release (from 0) is never before ``began + (k - burst + 1) * every_s``,
    and a request reaches the server after it leaves the bucket, so this holds
    however loaded the machine is (1 ms is left for timer granularity).
    """
    return [
        k
        for k, at in enumerate(times)
        if k >= burst and at - began < (k - burst + 1) * every_s - 0.001
    ]


def test_rpm_bucket_never_lets_out_more_than_its_burst_and_refill(server: Any) -> None:
    """40 calls at ``rpm=10`` over a 0.5 s window.

    The bucket holds a sixtieth of the window's allowance (at least one request)
    and leaks one every 0.5 / 10 = 0.05 s, so by ``t`` seconds after the start at
    most ``1 + 20 t`` requests may have arrived; this asserts the looser
    ``10 + 20 t`` (a whole window's burst) and the total time the pacing implies.
    Without the bucket all 40 arrive within a few tens of milliseconds.
    """
    config = openai_config(server, rpm=10, rate_window_s=0.5, max_concurrency=40)
    times, began, _ = paced_run(server, config, [request() for _ in range(40)])
    assert early_arrivals(times, began, burst=10, every_s=0.05) == []
    assert times[-1] - began >= 39 * 0.05 - 0.001


def test_rpm_sliding_windows_at_the_server(server: Any) -> None:
    """The same run, judged by every 0.5 s window the server saw.

    After the first burst no window holds more than 12 arrivals: 10, +1 because
    arrivals exactly 0.5 s apart share a window once jitter shaves a microsecond,
    +1 for jitter between leaving the bucket and reaching the server. No window
    at all holds more than a leaky bucket's burst + refill = 20 (+2 likewise).
    These windows also count the server's own delays, so on a machine so loaded
    that the event loop stalls (> 20 ms) they are not judged: the test skips.
    """
    config = openai_config(server, rpm=10, rate_window_s=0.5, max_concurrency=40)
    times, _, stall = paced_run(server, config, [request() for _ in range(40)])
    if stall > 0.02:
        pytest.skip(
            f"the event loop stalled {stall * 1000:.0f} ms: windows would measure the machine"
        )
    assert max_in_window(times, 0.5, start=10) <= 12
    assert max_in_window(times, 0.5) <= 22


def test_tpm_bucket_paces_by_estimated_tokens(server: Any) -> None:
    # Each request is estimated at ceil(200 / 4) + 50 = 100 tokens and the bucket
    # leaks 200 per 0.4 s: one request every 0.2 s (the bucket holds a sixtieth of
    # the window's 200, so a request takes its tokens a bucketful at a time).
    one = request(system="", user="x" * 200, max_tokens=50)
    config = openai_config(server, tpm=200, rate_window_s=0.4, max_concurrency=10)
    times, began, _ = paced_run(server, config, [one for _ in range(6)])
    assert early_arrivals(times, began, burst=2, every_s=0.2) == []
    assert times[-1] - began >= 5 * 0.2 - 0.01
