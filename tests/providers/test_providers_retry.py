"""The retry policy: what is retried, how long it waits, and how it shows on the wire."""

from __future__ import annotations

import email.utils
import math
import random
import time
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from providers_wire import (
    GOOD,
    Answer,
    Script,
    anthropic_config,
    anthropic_error,
    chat_json,
    closed_port,
    fast_retry,
    judge,
    message,
    openai_config,
    openai_error,
    request,
    run,
    serve,
)

from oloproof.providers import RetryPolicy
from oloproof.providers._retry import Failure, GaveUp, failure_from

CHAT = "/v1/chat/completions"


def status_error(
    status: int, body: Any = None, headers: dict[str, str] | None = None
) -> openai.APIStatusError:
    wire = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    response = httpx2.Response(status, request=wire, headers=headers or {}, json=body)
    error = body.get("error", body) if isinstance(body, dict) else body
    return openai.APIStatusError(f"Error code: {status}", response=response, body=error)


# --- the policy on its own ---------------------------------------------------------------


def test_backoff_is_full_jitter_under_a_growing_capped_ceiling() -> None:
    policy = RetryPolicy(rng=random.Random(1))
    for retry in range(12):
        ceiling = min(30.0, 0.5 * 2**retry)
        waits = [policy.backoff(retry) for _ in range(200)]
        assert all(0.0 <= wait <= ceiling for wait in waits)
        # Full jitter spreads over the whole range, not just near the ceiling.
        assert min(waits) < ceiling * 0.1 and max(waits) > ceiling * 0.9


def test_backoff_is_reproducible_with_a_seed() -> None:
    first = [RetryPolicy(rng=random.Random(7)).backoff(n) for n in range(5)]
    again = [RetryPolicy(rng=random.Random(7)).backoff(n) for n in range(5)]
    other = [RetryPolicy(rng=random.Random(8)).backoff(n) for n in range(5)]
    assert first == again != other


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_transient_statuses_are_retried(status: int) -> None:
    wait = RetryPolicy(rng=random.Random(0)).wait(failure_from(status_error(status)), 0)
    assert isinstance(wait, float) and 0 <= wait <= 0.5


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    assert RetryPolicy().wait(failure_from(status_error(status)), 0) == "not retried"


def test_insufficient_quota_and_content_filter_are_not_retried() -> None:
    quota = status_error(
        429,
        {"error": {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}},
    )
    failure = failure_from(quota)
    assert not failure.rate_limited
    assert RetryPolicy().wait(failure, 0) == "insufficient_quota, not retried"
    filtered = status_error(500, {"error": {"message": "filtered", "code": "content_filter"}})
    assert RetryPolicy().wait(failure_from(filtered), 0) == "content_filter, not retried"


def test_timeouts_and_connection_errors_are_retried() -> None:
    wire = httpx2.Request("POST", "http://127.0.0.1:1/")
    for exc in (openai.APITimeoutError(wire), anthropic.APIConnectionError(request=wire)):
        assert isinstance(RetryPolicy().wait(failure_from(exc), 0), float)
    assert failure_from(openai.APITimeoutError(wire)).kind == "timeout"


def test_retry_after_headers() -> None:
    def after(headers: dict[str, str]) -> float | None:
        return failure_from(status_error(429, headers=headers)).retry_after_s

    assert after({"retry-after-ms": "250"}) == pytest.approx(0.25)
    assert after({"retry-after": "3"}) == 3.0
    assert after({"retry-after": "0.5", "retry-after-ms": "20"}) == pytest.approx(0.02)  # ms wins
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 < after({"retry-after": date}) <= 30  # type: ignore[operator]
    assert after({"retry-after": email.utils.formatdate(time.time() - 30, usegmt=True)}) == 0.0
    assert after({"retry-after": "soon"}) is None
    assert after({}) is None


def test_a_retry_after_is_honoured_up_to_the_cap() -> None:
    policy = RetryPolicy(max_retry_after_s=60)
    assert policy.wait(failure_from(status_error(429, headers={"retry-after": "7"})), 0) == 7.0
    over = policy.wait(failure_from(status_error(503, headers={"retry-after": "120"})), 0)
    assert over == "the provider asks to wait 120 s, over the 60 s cap; not retried"


def test_invalid_policies_are_refused() -> None:
    for options in (
        {"base_s": -1},
        {"factor": 0.5},
        {"cap_s": math.inf},
        {"max_retry_after_s": True},
    ):
        with pytest.raises(ValueError, match="RetryPolicy"):
            RetryPolicy(**options)


def test_run_counts_retries_and_gives_up_after_max_retries() -> None:
    waits: list[float] = []
    retries: list[int] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def always_503() -> None:
        raise status_error(503, {"error": {"message": "busy", "type": "server_error"}})

    policy = RetryPolicy(rng=random.Random(3))
    with pytest.raises(GaveUp) as gave:
        run(policy.run(always_503, max_retries=3, on_retry=lambda: retries.append(1), sleep=sleep))
    assert len(waits) == 3 and len(retries) == 3
    assert [wait <= 0.5 * 2**n for n, wait in enumerate(waits)] == [True] * 3
    assert gave.value.reason == "HTTP 503 server_error: busy (after 3 retries)"
    assert isinstance(gave.value.failure, Failure) and gave.value.failure.status == 503


def test_run_lets_other_errors_through() -> None:
    async def broken() -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        run(RetryPolicy().run(broken, max_retries=3))


# --- on the wire --------------------------------------------------------------------------


def test_429_then_200_waits_retry_after_ms(server: Any) -> None:
    script = serve(
        server,
        CHAT,
        Script(openai_error(429, "slow down", headers={"retry-after-ms": "80"}), chat_json(GOOD)),
    )
    # No backoff of its own: a wait can only come from the header.
    [call] = judge({"p": openai_config(server)}, request(), retry=fast_retry(base_s=0.0))
    assert call.ok and call.data == GOOD
    assert call.retries == 1
    assert len(script.seen) == 2
    assert script.seen[1].at - script.seen[0].at >= 0.075
    assert script.seen[1].headers["x-stainless-retry-count"] == "0"  # the SDK did not retry itself


def test_429_then_200_waits_retry_after_seconds(server: Any) -> None:
    script = serve(
        server,
        CHAT,
        Script(openai_error(429, "slow down", headers={"retry-after": "0.05"}), chat_json(GOOD)),
    )
    [call] = judge({"p": openai_config(server)}, request(), retry=fast_retry(base_s=0.0))
    assert call.ok and call.retries == 1
    assert script.seen[1].at - script.seen[0].at >= 0.045


def test_retry_after_as_an_http_date(server: Any) -> None:
    waits: list[float] = []

    def rate_limited(seen: Any) -> Answer:
        moment = math.floor(time.time()) + 1  # HTTP dates have whole seconds
        waits.append(moment - time.time())
        return openai_error(
            429, "slow down", headers={"retry-after": email.utils.formatdate(moment, usegmt=True)}
        )

    script = serve(server, CHAT, Script(rate_limited, chat_json(GOOD)))
    [call] = judge({"p": openai_config(server)}, request(), retry=fast_retry(base_s=0.0))
    assert call.ok and call.retries == 1
    assert script.seen[1].at - script.seen[0].at >= waits[0] - 0.05


def test_500_then_200_is_retried(server: Any) -> None:
    script = serve(
        server, CHAT, Script(openai_error(500, "oops", code="server_error"), chat_json(GOOD))
    )
    [call] = judge({"p": openai_config(server)}, request())
    assert call.ok and call.retries == 1 and len(script.seen) == 2


def test_anthropic_529_overloaded_then_200_is_retried(server: Any) -> None:
    script = serve(
        server,
        "/v1/messages",
        Script(anthropic_error(529, "overloaded_error", "Overloaded"), message(tool_input=GOOD)),
    )
    [call] = judge({"a": anthropic_config(server)}, request())
    assert call.ok and call.data == GOOD
    assert call.retries == 1 and len(script.seen) == 2


def test_a_hang_past_the_timeout_is_an_error_after_retries(server: Any) -> None:
    script = serve(server, CHAT, Script(Answer(body={}, delay_s=1.0)))
    [call] = judge({"p": openai_config(server, timeout_s=0.3, max_retries=1)}, request())
    assert not call.ok
    assert call.error == "request timed out (after 1 retries)"
    assert call.retries == 1 and len(script.seen) == 2
    assert call.raw is None and call.finish_reason is None
    assert call.latency_ms >= 2 * 300


def test_insufficient_quota_is_sent_once(server: Any) -> None:
    quota = openai_error(429, "You exceeded your current quota.", code="insufficient_quota")
    script = serve(server, CHAT, Script(quota, chat_json(GOOD)))
    [call] = judge({"p": openai_config(server)}, request())
    assert len(script.seen) == 1
    assert call.retries == 0
    assert call.error == (
        "HTTP 429 insufficient_quota: You exceeded your current quota. (insufficient_quota, not retried)"
    )


def test_a_400_is_sent_once(server: Any) -> None:
    script = serve(
        server, CHAT, Script(openai_error(400, "Invalid value for 'temperature'."), chat_json(GOOD))
    )
    [call] = judge({"p": openai_config(server)}, request())
    assert len(script.seen) == 1 and call.retries == 0
    assert (
        call.error
        == "HTTP 400 invalid_request_error: Invalid value for 'temperature'. (not retried)"
    )


def test_a_retry_after_over_the_cap_is_not_waited_for(server: Any) -> None:
    script = serve(
        server,
        CHAT,
        Script(openai_error(429, "later", headers={"retry-after": "120"}), chat_json(GOOD)),
    )
    [call] = judge({"p": openai_config(server)}, request())
    assert len(script.seen) == 1
    assert call.error is not None and "over the 60 s cap; not retried" in call.error


def test_retries_stop_at_max_retries(server: Any) -> None:
    script = serve(server, CHAT, Script(openai_error(503, "busy", code="server_error")))
    [call] = judge({"p": openai_config(server, max_retries=2)}, request())
    assert len(script.seen) == 3 and call.retries == 2
    assert call.error == "HTTP 503 server_error: busy (after 2 retries)"


def test_a_refused_connection_is_retried_then_an_error(server: Any) -> None:
    port = closed_port()
    config = openai_config(server, base_url=f"http://127.0.0.1:{port}/v1", max_retries=2)
    [call] = judge({"p": config}, request())
    assert call.retries == 2
    assert call.error == f"connection refused at http://127.0.0.1:{port}/v1/chat/completions (after 2 retries)"
