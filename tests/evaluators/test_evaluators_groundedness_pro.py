"""``groundedness_pro`` against a local server speaking the groundedness detection REST API."""

from __future__ import annotations

import asyncio

import pytest
from providers_wire import Answer, Script, closed_port, fast_retry, serve
from test_evaluators_judges import view

from oloproof._exceptions import EvaluatorConfigError
from oloproof.evaluators import JudgeContext, build_evaluators
from oloproof.providers import ProviderConfig, ProviderPool

KEY = "cs-key-PLANTED-55aa"


def _judge(server, monkeypatch, **options):
    monkeypatch.setenv("CS_KEY", KEY)
    entry = {"type": "groundedness_pro", "endpoint": server.url_for(""), "api_key_env": "CS_KEY", **options}
    (built,) = build_evaluators([entry], rag=True)
    return built


@pytest.mark.parametrize(("detected", "passed"), [(False, True), (True, False)])
def test_the_service_verdict_is_the_pass(server, monkeypatch, detected, passed):
    script = serve(server, "/contentsafety/text:detectGroundedness",
                   Script(Answer(body={"ungroundedDetected": detected, "ungroundedPercentage": 0.4 if detected else 0,
                                       "ungroundedDetails": []})))  # fmt: skip
    judge = _judge(server, monkeypatch)
    verdict = asyncio.run(judge.judge(judge.read(view()), JudgeContext()))
    assert (verdict.status, verdict.passed, verdict.score) == ("observed", passed, 1.0 if passed else 0.0)
    (seen,) = script.seen
    assert seen.headers["ocp-apim-subscription-key"] == KEY
    assert seen.args["api-version"] == "2024-09-15-preview"
    assert seen.body["qna"] == {"query": "How long do refunds take?"} and seen.body["text"] == "14 days."
    assert seen.body["groundingSources"][0] == "Refunds for annual plans take 14 days."
    assert KEY not in repr(verdict)


def test_a_failed_request_is_an_error_without_the_key(server, monkeypatch):
    serve(server, "/contentsafety/text:detectGroundedness",
          Script(Answer(status=401, body={"error": {"message": f"bad key {KEY}"}})))  # fmt: skip
    judge = _judge(server, monkeypatch)
    verdict = asyncio.run(judge.judge(judge.read(view()), JudgeContext()))
    assert verdict.status == "error" and verdict.reason.startswith("HTTP 401")
    assert KEY not in repr(verdict) and "bad key [redacted]" in verdict.reason


@pytest.mark.parametrize(
    ("options", "field"),
    [({"endpoint": None}, "evaluators.0.endpoint"), ({"api_key_env": None}, "evaluators.0.api_key_env"),
     ({"api_key_env": "CS_KEY_UNSET"}, "evaluators.0.api_key_env")],
)  # fmt: skip
def test_without_an_endpoint_and_key_it_is_refused_in_one_line(server, monkeypatch, options, field):
    monkeypatch.delenv("CS_KEY_UNSET", raising=False)
    with pytest.raises(EvaluatorConfigError) as raised:
        _judge(server, monkeypatch, **options)
    assert raised.value.field == field and "\n" not in str(raised.value)


# --- through the provider layer ------------------------------------------------------


GROUNDED = Answer(body={"ungroundedDetected": False, "ungroundedPercentage": 0, "ungroundedDetails": []})
LIMITED = Answer(status=429, body={"error": {"code": "TooManyRequests", "message": "slow down"}},
                 headers={"retry-after-ms": "5"})  # fmt: skip


def _provided(server, **provider):
    config = ProviderConfig(type="content_safety", endpoint=server.url_for(""), api_key_env="CS_KEY", **provider)
    pool = ProviderPool({"cs": config}, {"CS_KEY": KEY}, retry=fast_retry())
    (built,) = build_evaluators([{"type": "groundedness_pro", "provider": "cs"}], rag=True, providers={"cs": config})
    return built, pool


def _judged(judge, pool):
    async def go():
        try:
            return await judge.judge(judge.read(view()), JudgeContext(providers=pool))
        finally:
            await pool.aclose()

    return asyncio.run(go())


def test_a_named_provider_is_called_through_the_pool_with_its_retries(server):
    script = serve(server, "/contentsafety/text:detectGroundedness", Script(LIMITED, GROUNDED))
    judge, pool = _provided(server)
    verdict = _judged(judge, pool)
    assert (verdict.status, verdict.passed) == ("observed", True) and len(script.seen) == 2
    assert script.seen[1].headers["ocp-apim-subscription-key"] == KEY and script.seen[1].body["text"] == "14 days."
    call = verdict.call
    assert (call["provider"], call["provider_type"], call["model"], call["retries"]) == (
        "cs", "content_safety", "2024-09-15-preview", 1)  # fmt: skip
    assert judge.providers() == ("cs",) and pool.health("cs").sent == 2


def test_the_inline_form_is_retried_and_accounted_as_a_provider(server, monkeypatch):
    script = serve(server, "/contentsafety/text:detectGroundedness", Script(LIMITED, GROUNDED))
    judge = _judge(server, monkeypatch)
    verdict = asyncio.run(judge.judge(judge.read(view()), JudgeContext()))
    assert verdict.passed is True and len(script.seen) == 2
    assert (verdict.call["provider"], verdict.call["provider_type"], verdict.call["retries"]) == (
        "content_safety", "content_safety", 1)  # fmt: skip
    assert judge.providers() == ()


def test_the_inline_form_names_a_dead_endpoint(monkeypatch):
    monkeypatch.setenv("CS_KEY", KEY)
    url = f"http://127.0.0.1:{closed_port()}"
    (judge,) = build_evaluators([{"type": "groundedness_pro", "endpoint": url, "api_key_env": "CS_KEY"}], rag=True)
    verdict = asyncio.run(judge.judge(judge.read(view()), JudgeContext()))
    assert verdict.status == "error" and verdict.reason.startswith(f"connection refused at {url}/contentsafety/")


def test_the_inline_form_keeps_its_identity(monkeypatch):
    # The spec of an inline configuration is what it was before providers could be named,
    # so an existing store stays a full cache hit.
    monkeypatch.setenv("CS_KEY", KEY)
    (judge,) = build_evaluators(
        [{"type": "groundedness_pro", "endpoint": "https://cs.example.com", "api_key_env": "CS_KEY"}], rag=True)
    assert judge.spec_hash == "7b2232113f6fd395244b78a8b6faf76e9ed0f055c854197c29092516521e1098"
    assert "provider" not in judge.identity()["options"]


def test_a_named_provider_is_not_part_of_the_identity(server):
    first, _ = _provided(server)
    config = ProviderConfig(type="content_safety", endpoint=server.url_for(""), api_key_env="CS_KEY")
    (renamed,) = build_evaluators([{"type": "groundedness_pro", "provider": "other"}], rag=True,
                                  providers={"other": config})  # fmt: skip
    assert first.identity() == renamed.identity() and first.identity()["provider_type"] == "content_safety"


@pytest.mark.parametrize(
    ("entry", "providers", "field"),
    [({"provider": "missing"}, {}, "evaluators.0.provider"),
     ({"provider": "llm"}, {"llm": ProviderConfig(type="openai", base_url="http://127.0.0.1:1/v1")},
      "evaluators.0.provider"),
     ({"provider": "cs", "endpoint": "https://cs.example.com"}, None, "evaluators.0.endpoint"),
     ({"provider": "cs", "timeout_s": 5.0}, None, "evaluators.0.timeout_s"),
     ({"endpoint": "not a url", "api_key_env": "CS_KEY"}, {}, "evaluators.0.endpoint")],
)  # fmt: skip
def test_a_misconfigured_provider_is_refused_in_one_line(monkeypatch, entry, providers, field):
    monkeypatch.setenv("CS_KEY", KEY)
    if providers is None:
        providers = {"cs": ProviderConfig(type="content_safety", endpoint="https://cs.example.com", api_key_env="CS_KEY")}
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "groundedness_pro", **entry}], rag=True, providers=providers)
    assert raised.value.field == field and "\n" not in str(raised.value) and KEY not in str(raised.value)
