"""The circuit breaker, on the wire: a provider whose server stops is not called again.

Each test runs its own local server (the session's shared one must stay up), up for
the first calls and then stopped, so that every later connection is refused. What is
bounded is counted, never timed: requests the pool sent (its `ProviderHealth`),
requests the server saw, and the calls' retries.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from providers_wire import (
    ENV,
    GOOD,
    Script,
    chat_json,
    closed_port,
    fast_retry,
    openai_config,
    openai_error,
    request,
    run,
    serve,
)
from pytest_httpserver import HTTPServer

from oloproof.providers import UNREACHABLE_AFTER, JudgeCall, ProviderPool

CHAT = "/v1/chat/completions"
CONCURRENCY = 2
RETRIES = 2


@pytest.fixture
def own_server() -> Iterator[HTTPServer]:
    """A server of the test's own, which the test may stop (and start again)."""
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    yield server
    if server.is_running():
        server.stop()
    server.check_assertions()


def _pool(server: HTTPServer, **options: Any) -> ProviderPool:
    config = openai_config(server, max_concurrency=CONCURRENCY, max_retries=RETRIES, **options)
    return ProviderPool({"p": config}, ENV, retry=fast_retry())


async def _judge_all(pool: ProviderPool, count: int) -> list[JudgeCall]:
    return list(await asyncio.gather(*(pool.judge("p", request()) for _ in range(count))))


def test_a_provider_gone_mid_run_is_not_called_again(own_server: HTTPServer) -> None:
    script = serve(own_server, CHAT, Script(chat_json(GOOD)))
    pool = _pool(own_server)
    refused_at = f"connection refused at {own_server.url_for(CHAT)}"

    async def go() -> tuple[list[JudgeCall], list[JudgeCall], Any, Any]:
        try:
            first = await _judge_all(pool, 4)
            before = pool.health("p")
            await asyncio.to_thread(own_server.stop)
            rest = await _judge_all(pool, 30)
            return first, rest, before, pool.health("p")
        finally:
            await pool.aclose()

    first, rest, before, after = run(go())

    assert all(call.ok for call in first) and len(script.seen) == 4
    assert before.unreachable is None and before.failures == 0
    # Without the breaker each of the 30 calls would send 1 + RETRIES requests. With it,
    # the threshold's failures are sent, and at most the other requests in flight then.
    sent_after_stop = after.sent - before.sent
    assert UNREACHABLE_AFTER <= sent_after_stop <= UNREACHABLE_AFTER + CONCURRENCY - 1
    assert sum(call.retries for call in rest) <= sent_after_stop - 1  # each call's first request is no retry
    assert after.unreachable == (
        f"provider unreachable: {UNREACHABLE_AFTER} consecutive connection failures (last: {refused_at})"
    )
    # The calls stopped by the breaker fail with its reason; the few that ran out of
    # retries first say what their last attempt met.
    stopped = [call for call in rest if call.error == after.unreachable]
    assert len(stopped) >= len(rest) - sent_after_stop
    assert all(call.error.startswith(refused_at) for call in rest if call not in stopped)
    assert all(not call.ok and call.data is None and call.raw is None for call in rest)

    # A later call is answered at once, sending nothing.
    async def later() -> JudgeCall:
        return await pool.judge("p", request())

    call = run(later())
    assert call.error == after.unreachable and call.retries == 0
    assert pool.health("p").sent == after.sent


def test_calls_in_flight_when_the_server_stops_end_soon(own_server: HTTPServer) -> None:
    lock = threading.Lock()
    answered: list[int] = []
    stopping: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def answer(seen: Any) -> Any:
        # The third request has the server stopped (from the test's loop: a handler
        # cannot stop its own server) while other calls are in flight or waiting.
        with lock:
            answered.append(1)
            if len(answered) == 3:
                loop, future = stopping[0]
                loop.call_soon_threadsafe(future.set_result, None)
        return chat_json(GOOD)

    script = serve(own_server, CHAT, Script(answer))
    pool = _pool(own_server)

    async def go() -> tuple[list[JudgeCall], Any]:
        loop = asyncio.get_running_loop()
        stopping.append((loop, loop.create_future()))

        async def stop() -> None:
            await stopping[0][1]
            await asyncio.to_thread(own_server.stop)

        try:
            calls, _ = await asyncio.gather(_judge_all(pool, 40), stop())
            return calls, pool.health("p")
        finally:
            await pool.aclose()

    calls, health = run(go())

    assert health.unreachable is not None
    assert health.unreachable.startswith(f"provider unreachable: {UNREACHABLE_AFTER} consecutive connection failures")
    seen = len(script.seen)
    # Requests sent past those the server saw: the threshold's refusals, the others in
    # flight when the breaker opened, and those cut off (connected, never answered)
    # while the server stopped.
    bound = UNREACHABLE_AFTER + 2 * CONCURRENCY - 1
    assert health.sent - seen <= bound
    assert sum(call.ok for call in calls) <= seen
    assert sum(call.error == health.unreachable for call in calls) >= len(calls) - health.sent
    assert sum(call.retries for call in calls) <= bound


def test_a_provider_that_recovers_before_the_threshold_keeps_being_called(own_server: HTTPServer) -> None:
    # Each call that meets a stopped server makes 1 + RETRIES refused attempts: fewer
    # than the threshold, but two such calls in a row would reach it.
    assert 1 + RETRIES < UNREACHABLE_AFTER <= 2 * (1 + RETRIES)
    script = serve(own_server, CHAT, Script(chat_json(GOOD)))
    pool = _pool(own_server)

    async def go() -> list[tuple[JudgeCall, Any]]:
        seen = []
        try:
            for step in ("up", "down", "up", "down", "down"):
                if step == "down" and own_server.is_running():
                    await asyncio.to_thread(own_server.stop)
                elif step == "up" and not own_server.is_running():
                    await asyncio.to_thread(own_server.start)  # on the same port again
                seen.append((await pool.judge("p", request()), pool.health("p")))
        finally:
            await pool.aclose()
        return seen

    (up, _), (down, failed), (again, healed), (down_again, _), (last, closed) = run(go())

    assert up.ok and again.ok and len(script.seen) == 2
    assert down.error is not None and down.error.startswith("connection refused at")
    assert failed.failures == 1 + RETRIES and failed.unreachable is None
    assert healed.failures == 0 and healed.unreachable is None  # the success reset the count
    # Three more refusals: six in all, but not in a row, so the provider is still called.
    assert down_again.error is not None and down_again.error.startswith("connection refused at")
    # The next call is sent again, and its refusals reach the threshold.
    assert last.retries >= 1
    assert closed.unreachable is not None and closed.unreachable.startswith(
        f"provider unreachable: {UNREACHABLE_AFTER} consecutive connection failures"
    )
    assert last.error == closed.unreachable
    assert closed.sent == 1 + (1 + RETRIES) + 1 + (1 + RETRIES) + (UNREACHABLE_AFTER - (1 + RETRIES))


def test_a_reply_of_any_kind_resets_the_count(own_server: HTTPServer) -> None:
    # An HTTP error is a provider reached: it is the retry policy's business, not the breaker's.
    script = serve(own_server, CHAT, Script(openai_error(503, "busy", code="server_error")))
    pool = _pool(own_server)

    async def go() -> tuple[list[JudgeCall], Any]:
        try:
            return await _judge_all(pool, 10), pool.health("p")
        finally:
            await pool.aclose()

    calls, health = run(go())
    assert len(script.seen) == 10 * (1 + RETRIES) == health.sent
    assert health.unreachable is None and health.failures == 0
    assert {call.error for call in calls} == {"HTTP 503 server_error: busy (after 2 retries)"}


def test_each_provider_has_its_own_breaker(own_server: HTTPServer) -> None:
    serve(own_server, CHAT, Script(chat_json(GOOD)))
    gone = openai_config(own_server, base_url=f"http://127.0.0.1:{closed_port()}/v1", max_retries=UNREACHABLE_AFTER)
    pool = ProviderPool({"gone": gone, "up": openai_config(own_server)}, ENV, retry=fast_retry())

    async def go() -> tuple[JudgeCall, JudgeCall, JudgeCall]:
        try:
            first = await pool.judge("gone", request())
            return first, await pool.judge("gone", request()), await pool.judge("up", request())
        finally:
            await pool.aclose()

    first, second, other = run(go())
    # One call's own retries count: it stops at the threshold, short of its max_retries.
    assert first.error == pool.health("gone").unreachable and first.retries == UNREACHABLE_AFTER - 1
    assert second.error == first.error and second.retries == 0
    assert other.ok
    assert pool.health("gone").sent == UNREACHABLE_AFTER
    assert pool.health("up").unreachable is None and pool.health("up").sent == 1
