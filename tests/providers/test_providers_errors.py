"""Kinds of failure: a connection never made, told apart from one made and then lost,
and the kind of a judge error named from its one-line message."""

from __future__ import annotations

import socket

import anthropic
import httpx2
import openai
import pytest

from oloproof.providers import error_kind
from oloproof.providers._breaker import Breaker
from oloproof.providers._errors import connect_failure, request_url
from oloproof.providers._retry import failure_from

URL = "http://user:secret@127.0.0.1:8080/v1/chat/completions?api-version=1"


def sdk_error(
    cause: BaseException, *, timeout: bool = False, sdk: object = openai
) -> openai.APIConnectionError | anthropic.APIConnectionError:
    """The SDK's connection (or timeout) error raised from ``cause``, as the SDK raises it."""
    wire = httpx2.Request("POST", URL)
    kind = getattr(sdk, "APITimeoutError" if timeout else "APIConnectionError")
    try:
        try:
            raise cause
        except BaseException as transport:
            raise kind(request=wire) from transport
    except (openai.APIConnectionError, anthropic.APIConnectionError) as error:
        return error


def connect_error(inner: BaseException) -> httpx2.ConnectError:
    """The transport's ConnectError around ``inner``, chained as httpx chains it."""
    try:
        raise inner
    except (OSError, ExceptionGroup):
        try:
            raise httpx2.ConnectError(str(inner))
        except httpx2.ConnectError as error:
            return error


REFUSED = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 8080)")


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (sdk_error(connect_error(OSError("All connection attempts failed"))), "cannot connect"),
        (sdk_error(connect_error(REFUSED)), "connection refused"),
        (sdk_error(connect_error(socket.gaierror(-2, "Name or service not known"))), "DNS failure"),
        (sdk_error(httpx2.ConnectTimeout("timed out"), timeout=True), "connect timeout"),
        (sdk_error(connect_error(ExceptionGroup("each address", [OSError("unreachable"), REFUSED]))),
         "connection refused"),
        (sdk_error(connect_error(REFUSED), sdk=anthropic), "connection refused"),
        # A connection was made: the provider was there.
        (sdk_error(httpx2.ReadTimeout("timed out"), timeout=True), None),
        (sdk_error(httpx2.RemoteProtocolError("Server disconnected without sending a response.")), None),
        (sdk_error(httpx2.ReadError("connection reset")), None),
    ],
)  # fmt: skip
def test_a_connection_never_made_is_told_apart(error: BaseException, kind: str | None) -> None:
    assert connect_failure(error) == kind
    failure = failure_from(error)
    assert failure.connect == kind
    if kind is not None:
        # The message names the kind and where, without the URL's credentials or query.
        assert failure.message.startswith(f"{kind} at http://127.0.0.1:8080/v1/chat/completions")
        assert "secret" not in failure.message and "api-version" not in failure.message
        assert error_kind(failure.message) == kind


def test_a_connect_timeout_is_still_retried_as_a_timeout() -> None:
    failure = failure_from(sdk_error(httpx2.ConnectTimeout("timed out"), timeout=True))
    assert failure.kind == "timeout" and failure.connect == "connect timeout"
    assert failure_from(sdk_error(httpx2.ReadTimeout("timed out"), timeout=True)).message == "request timed out"


def test_an_unexplained_connect_error_keeps_its_detail() -> None:
    failure = failure_from(sdk_error(connect_error(OSError("[SSL: CERTIFICATE_VERIFY_FAILED] bad"))))
    assert failure.message == (
        "cannot connect at http://127.0.0.1:8080/v1/chat/completions "
        "(ConnectError: [SSL: CERTIFICATE_VERIFY_FAILED] bad)"
    )


def test_request_url_is_none_without_a_request() -> None:
    assert request_url(RuntimeError("x")) is None
    assert request_url(sdk_error(connect_error(REFUSED))) == "http://127.0.0.1:8080/v1/chat/completions"


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("provider unreachable: 5 consecutive connection failures (last: connection refused at http://h/v1)",
         "provider unreachable"),
        ("connection refused at http://127.0.0.1:1/v1/chat/completions (after 4 retries)", "connection refused"),
        ("DNS failure at http://nohost.invalid/v1/chat/completions (after 4 retries)", "DNS failure"),
        ("connection error (RemoteProtocolError: Server disconnected) (after 4 retries)", "connection error"),
        ("request timed out (after 1 retries)", "request timed out"),
        ("HTTP 429 rate_limit_exceeded: Rate limit reached (after 4 retries)", "HTTP 429 rate_limit_exceeded"),
        ("HTTP 429 insufficient_quota: You exceeded your quota. (insufficient_quota, not retried)",
         "HTTP 429 insufficient_quota"),
        ("HTTP 503 (after 2 retries)", "HTTP 503"),
        ("truncated reply (finish_reason=length)", "truncated reply"),
        ("refused by the content filter (finish_reason=content_filter)", "content filter"),
        ("the model refused: I cannot help with that", "model refusal"),
        ("unusable reply: it has no choices", "unusable reply"),
        ("invalid reply after one re-ask: score: 9 is more than the maximum of 5", "invalid reply"),
        ("the reply does not judge citation 'kb-7'", "incomplete reply"),
        ("unexpected KeyError: 'choices'", "unexpected error"),
        ("content-safety service answered 503", "content-safety service answered 503"),
        ("ConnectError: content-safety request failed", "ConnectError"),
        ("", "error"),
        (None, "error"),
    ],
)  # fmt: skip
def test_error_kind_names_every_message_the_pool_writes(message: str | None, kind: str) -> None:
    assert error_kind(message) == kind


def test_the_breaker_counts_connections_never_made_and_resets_on_a_reply() -> None:
    refused = sdk_error(connect_error(REFUSED))
    wire = httpx2.Request("POST", URL)
    busy = openai.APIStatusError("Error code: 503", response=httpx2.Response(503, request=wire), body=None)
    breaker = Breaker(threshold=3)
    breaker.attempted(refused)
    breaker.attempted(refused)
    breaker.attempted(None)  # a reply
    assert breaker.health().failures == 0
    breaker.attempted(refused)
    breaker.attempted(sdk_error(httpx2.ReadTimeout("timed out"), timeout=True))  # connected: no change
    breaker.attempted(refused)
    assert breaker.health().failures == 2 and breaker.reason is None
    breaker.attempted(busy)  # an HTTP error: the provider answered
    assert breaker.health().failures == 0
    for _ in range(3):
        breaker.attempted(refused)
    assert breaker.reason == (
        "provider unreachable: 3 consecutive connection failures "
        "(last: connection refused at http://127.0.0.1:8080/v1/chat/completions)"
    )
    breaker.attempted(None)  # once open, it stays open for the run
    assert breaker.reason is not None and breaker.health().failures == 3


@pytest.mark.parametrize("threshold", [0, -1, 1.5, True, "5"])
def test_a_breaker_threshold_is_a_positive_integer(threshold: object) -> None:
    with pytest.raises(ValueError, match="threshold must be an integer >= 1"):
        Breaker(threshold)  # type: ignore[arg-type]
