"""The content-safety provider against a local server speaking the groundedness detection API."""

from __future__ import annotations

from typing import Any

import pytest
from providers_wire import KEY, Answer, Script, closed_port, fast_retry, run, serve

from oloproof._exceptions import ProviderConfigError
from oloproof.providers import ProviderConfig, ProviderPool, error_kind, parse_providers
from oloproof.providers._content_safety import DEFAULT_API_VERSION, groundedness_request

PATH = "/contentsafety/text:detectGroundedness"
BODY = {"domain": "Generic", "task": "QnA", "text": "14 days.", "groundingSources": ["Refunds take 14 days."],
        "reasoning": False, "qna": {"query": "How long do refunds take?"}}  # fmt: skip
GROUNDED = Answer(body={"ungroundedDetected": False, "ungroundedPercentage": 0, "ungroundedDetails": []})


def _pool(endpoint: str, **options: Any) -> ProviderPool:
    config = ProviderConfig(type="content_safety", endpoint=endpoint, api_key_env="CS_KEY", **options)
    return ProviderPool({"cs": config}, {"CS_KEY": KEY}, retry=fast_retry())


def _detect(pool: ProviderPool, times: int = 1) -> list[Any]:
    async def go() -> list[Any]:
        try:
            return [await pool.judge("cs", groundedness_request(BODY)) for _ in range(times)]
        finally:
            await pool.aclose()

    return run(go())


def test_a_request_speaks_the_groundedness_api(server) -> None:
    script = serve(server, PATH, Script(GROUNDED))
    (call,) = _detect(_pool(server.url_for("")))
    assert call.ok and call.data["ungroundedDetected"] is False
    assert (call.provider, call.provider_type, call.model) == ("cs", "content_safety", DEFAULT_API_VERSION)
    (seen,) = script.seen
    assert seen.headers["ocp-apim-subscription-key"] == KEY and seen.args == {"api-version": DEFAULT_API_VERSION}
    assert seen.headers["content-type"] == "application/json" and seen.body == BODY


def test_a_429_then_200_is_retried_and_counted(server) -> None:
    limited = Answer(status=429, body={"error": {"code": "TooManyRequests", "message": "slow down"}},
                     headers={"retry-after-ms": "5"})  # fmt: skip
    script = serve(server, PATH, Script(limited, GROUNDED))
    pool = _pool(server.url_for(""))
    (call,) = _detect(pool)
    assert call.ok and call.retries == 1 and len(script.seen) == 2
    assert pool.health("cs").sent == 2


def test_a_failure_that_is_not_transient_is_not_retried(server) -> None:
    script = serve(server, PATH, Script(Answer(status=401, body={"error": {"code": "PermissionDenied", "message": f"bad {KEY}"}})))
    (call,) = _detect(_pool(server.url_for("")))
    assert not call.ok and len(script.seen) == 1 and call.retries == 0
    assert error_kind(call.error) == "HTTP 401 PermissionDenied" and KEY not in repr(call) and "[redacted]" in str(call.error)


def test_a_reply_without_a_verdict_is_an_error_asked_once(server) -> None:
    script = serve(server, PATH, Script(Answer(body={"ungroundedDetected": "no"})))
    (call,) = _detect(_pool(server.url_for("")))
    assert not call.ok and error_kind(call.error) == "unusable reply" and "ungroundedDetected" in str(call.error)
    assert len(script.seen) == 1 and call.raw is not None


def test_the_accounting_counts_every_call(server) -> None:
    script = serve(server, PATH, Script(GROUNDED))
    pool = _pool(server.url_for(""))
    calls = _detect(pool, times=3)
    assert [call.ok for call in calls] == [True] * 3 and len(script.seen) == 3
    assert pool.health("cs").sent == 3 and sum(call.retries for call in calls) == 0


def test_a_dead_endpoint_is_named() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    pool = _pool(url, max_retries=1)
    with pytest.raises(ProviderConfigError) as caught:
        pool.preflight(["cs"])
    assert caught.value.field == "providers.cs.endpoint" and caught.value.message.startswith(f"cannot reach {url}")
    (call,) = _detect(pool)
    assert not call.ok and str(call.error).startswith(f"connection refused at {url}{PATH}")
    assert pool.health("cs").sent == 2  # the request and its one retry


def test_a_slow_reply_is_a_timeout(server) -> None:
    import threading

    release = threading.Event()

    def stalled(_: Any) -> Answer:
        release.wait(10)
        return GROUNDED

    serve(server, PATH, Script(stalled))
    try:
        (call,) = _detect(_pool(server.url_for(""), timeout_s=0.2, max_retries=0))
    finally:
        release.set()
    assert not call.ok and error_kind(call.error) == "request timed out"


@pytest.mark.parametrize(
    ("entry", "field"),
    [({"api_key_env": "CS_KEY"}, "providers.cs"), ({"endpoint": "https://cs.example.com"}, "providers.cs"),
     ({"endpoint": "https://cs.example.com", "api_key_env": "CS_KEY", "base_url": "https://x.example.com"},
      "providers.cs"),
     ({"endpoint": "https://cs.example.com", "api_key_env": KEY}, "providers.cs.api_key_env")],
)  # fmt: skip
def test_a_content_safety_entry_needs_an_endpoint_and_a_key_variable(entry, field) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        parse_providers({"cs": {"type": "content_safety", **entry}})
    assert caught.value.field == field and KEY not in str(caught.value)


def test_a_content_safety_entry_reads_its_key_from_the_environment_it_names() -> None:
    (config,) = parse_providers({"cs": {"type": "content_safety", "endpoint": "https://cs.example.com",
                                        "api_key_env": "CS_KEY"}}).values()  # fmt: skip
    assert config.url == "https://cs.example.com" and config.credential_env == "CS_KEY"
    with pytest.raises(ProviderConfigError) as caught:
        ProviderPool({"cs": config}, {}).check(["cs"])
    assert caught.value.field == "providers.cs.api_key_env" and "CS_KEY" in caught.value.message
