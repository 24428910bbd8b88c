"""Every judge through every provider, over the providers' real SDKs and wire protocols.

A local server on 127.0.0.1 speaks the OpenAI, Azure OpenAI and Anthropic
protocols; each judge renders its prompt, the provider sends it, and the reply
becomes the judge's verdict with the call's accounting.
"""

from __future__ import annotations

import asyncio

import pytest
from providers_wire import ENV, Script, anthropic_config, chat_json, fast_retry, message, openai_config, serve
from test_evaluators_judges import view

from oloproof.evaluators import JudgeContext, build_evaluators
from oloproof.providers import ProviderConfig, ProviderPool

JUDGES = ["groundedness", "groundedness_judge", "relevance", "retrieval", "response_completeness",
          "citation_support_judge"]  # fmt: skip
PROVIDERS = ["openai", "azure_openai", "anthropic"]
MODEL = "judge-model"


def _reply(judge: str) -> dict:
    if judge == "citation_support_judge":
        return {"citations": [{"id": "kb-01", "supported": True, "reason": "states 14 days"}]}
    return {"score": 4, "reason": "scripted"}


def _provider(kind: str, server) -> tuple[ProviderConfig, str, Script]:
    if kind == "openai":
        return openai_config(server), "/v1/chat/completions", Script()
    if kind == "azure_openai":
        config = ProviderConfig(type="azure_openai", endpoint=server.url_for(""), api_version="2024-10-21",
                                api_key_env="AZ_KEY")  # fmt: skip
        return config, f"/openai/deployments/{MODEL}/chat/completions", Script()
    return anthropic_config(server), "/v1/messages", Script()


@pytest.mark.parametrize("kind", PROVIDERS)
@pytest.mark.parametrize("judge_type", JUDGES)
def test_every_judge_through_every_provider(server, kind, judge_type):
    config, path, script = _provider(kind, server)
    answer = _reply(judge_type)
    if kind == "anthropic":
        script.replies.append(message(tool_input=answer, tool_name=f"{judge_type}_verdict", input_tokens=50))
    else:
        script.replies.append(chat_json(answer, prompt_tokens=50))
    serve(server, path, script)
    (judge,) = build_evaluators(
        [{"type": judge_type, "provider": "p", "model": MODEL}], rag=True, providers={"p": config}
    )
    case = view(expected={"answer": "14 days"})
    fields = judge.read(case)
    pool = ProviderPool({"p": config}, ENV, retry=fast_retry())

    async def go():
        try:
            return await judge.judge(fields, JudgeContext(providers=pool))
        finally:
            await pool.aclose()

    verdict = asyncio.run(go())
    assert verdict.status == "observed", verdict
    assert verdict.score == (1.0 if judge_type == "citation_support_judge" else 4.0)
    assert verdict.call["provider"] == "p" and verdict.call["provider_type"] == kind
    assert verdict.call["model"] == MODEL and verdict.call["input_tokens"] == 50
    assert verdict.call["prompt_hash"] == fields["prompt"] and verdict.call["raw_reply"] is None

    (seen,) = script.seen
    text = str(seen.body)
    assert "14 days." in text  # the answer reached the prompt
    if judge_type in ("groundedness", "groundedness_judge", "retrieval"):
        assert "[1] kb-01" in text and "Refunds for annual plans take 14 days." in text
    if judge_type == "citation_support_judge":
        assert "[kb-01]" in text
    if kind == "anthropic":
        assert (seen.body["tool_choice"]["type"], seen.body["tool_choice"]["name"]) == ("tool", f"{judge_type}_verdict")
    else:
        assert seen.body["response_format"]["json_schema"]["name"] == f"{judge_type}_verdict"


def test_an_unparseable_reply_is_an_error_verdict_with_the_raw_reply(server):
    config, path, script = _provider("openai", server)
    script.replies.append(chat_json("not an object"))
    serve(server, path, script)
    (judge,) = build_evaluators(
        [{"type": "relevance", "provider": "p", "model": MODEL}], rag=True, providers={"p": config}
    )
    pool = ProviderPool({"p": config}, ENV, retry=fast_retry())

    async def go():
        try:
            return await judge.judge(judge.read(view()), JudgeContext(providers=pool))
        finally:
            await pool.aclose()

    verdict = asyncio.run(go())
    assert verdict.status == "error" and verdict.score is None
    assert verdict.call["raw_reply"] is not None and "not an object" in verdict.call["raw_reply"]
    assert len(script.seen) == 2  # the one re-ask, then the error
