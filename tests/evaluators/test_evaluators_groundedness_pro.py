"""``groundedness_pro`` against a local server speaking the groundedness detection REST API."""

from __future__ import annotations

import asyncio

import pytest
from providers_wire import Answer, Script, serve
from test_evaluators_judges import view

from oloproof._exceptions import EvaluatorConfigError
from oloproof.evaluators import JudgeContext, build_evaluators

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
    assert verdict.status == "error" and "401" in verdict.reason
    assert KEY not in repr(verdict) and "[redacted]" in verdict.call["raw_reply"]


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
