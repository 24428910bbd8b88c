"""The structured-output ladder, the re-ask and the replies that must not be parsed."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from providers_wire import (
    ENV,
    GOOD,
    SCHEMA,
    Answer,
    Script,
    anthropic_config,
    anthropic_error,
    chat,
    chat_json,
    fast_retry,
    judge,
    message,
    openai_config,
    openai_error,
    request,
    run,
    serve,
)

from oloproof.providers import ProviderPool
from oloproof.providers._structured import ModeCache, tool_name

CHAT = "/v1/chat/completions"


def mode_of(seen: Any) -> str:
    """The structured mode a chat request asked for."""
    return (seen.body.get("response_format") or {}).get("type", "text")


def refusing(*modes: str) -> Any:
    """A chat endpoint that answers 400 to ``modes`` and ``GOOD`` to the others."""

    def answer(seen: Any) -> Answer:
        if mode_of(seen) in modes:
            return openai_error(
                400,
                f"Invalid parameter: 'response_format' of type '{mode_of(seen)}' is not supported.",
            )
        return chat_json(GOOD)

    return answer


def test_rejected_json_schema_falls_back_to_json_object_and_is_remembered(server: Any) -> None:
    script = serve(server, CHAT, Script(refusing("json_schema")))
    pool = ProviderPool({"p": openai_config(server)}, ENV, retry=fast_retry())

    async def go() -> list[Any]:
        try:
            first = await pool.judge("p", request())
            later = await asyncio.gather(pool.judge("p", request()), pool.judge("p", request()))
            other_model = await pool.judge("p", request(model="other-model"))
            return [first, *later, other_model]
        finally:
            await pool.aclose()

    first, second, third, other = run(go())
    assert all(call.ok and call.data == GOOD for call in (first, second, third, other))
    assert [call.mode for call in (first, second, third)] == ["json_object"] * 3
    assert first.retries == 0  # a step down is not a retry
    modes = Counter(mode_of(seen) for seen in script.seen if seen.body["model"] == "judge-model")
    assert modes == {"json_schema": 1, "json_object": 3}  # later calls start at json_object
    # The memory is per (provider, model): another model starts at the top again.
    assert [mode_of(s) for s in script.seen if s.body["model"] == "other-model"] == [
        "json_schema",
        "json_object",
    ]
    # JSON mode needs the schema in the prompt (and OpenAI wants the word "JSON" there).
    system = script.seen[1].body["messages"][0]["content"]
    assert system.startswith("You grade answers.") and "JSON Schema" in system
    assert json.dumps(SCHEMA, sort_keys=True) in system


def test_down_to_text_with_a_reply_in_prose_and_fences(server: Any) -> None:
    prose = 'Sure! Here is my verdict:\n```json\n{"score": 5, "reason": "exact"}\n```'

    def answer(seen: Any) -> Answer:
        if mode_of(seen) != "text":
            return openai_error(400, "response_format is not supported by this server")
        return chat(prose)

    script = serve(server, CHAT, Script(answer))
    [call] = judge({"p": openai_config(server)}, request())
    assert call.ok and call.data == {"score": 5, "reason": "exact"}
    assert call.mode == "text"
    assert [mode_of(s) for s in script.seen] == ["json_schema", "json_object", "text"]
    assert "response_format" not in script.seen[-1].body


def test_a_400_that_is_not_about_the_mode_does_not_step_down(server: Any) -> None:
    script = serve(
        server,
        CHAT,
        Script(openai_error(400, "This model's maximum context length is 8192 tokens.")),
    )
    [call] = judge({"p": openai_config(server)}, request())
    assert len(script.seen) == 1 and call.mode == "json_schema"
    assert call.error is not None and "maximum context length" in call.error


def test_malformed_json_is_re_asked_once_then_an_error_with_raw_kept(server: Any) -> None:
    script = serve(server, CHAT, Script(chat('{"score": 4, "reason": '), chat("still {not json")))
    [call] = judge({"p": openai_config(server)}, request())
    assert len(script.seen) == 2
    assert call.error == "invalid reply after one re-ask: it holds no JSON object"
    assert call.raw == "still {not json"
    assert call.data is None and call.finish_reason == "stop"
    # The re-ask carries the reply and a correction, in the same mode.
    messages = script.seen[1].body["messages"]
    assert messages[-2] == {"role": "assistant", "content": '{"score": 4, "reason": '}
    assert (
        messages[-1]["role"] == "user"
        and "could not be used: it holds no JSON object" in messages[-1]["content"]
    )
    assert mode_of(script.seen[1]) == "json_schema"
    assert (call.input_tokens, call.output_tokens) == (20, 10)  # both replies counted


def test_a_schema_violation_is_re_asked_and_the_second_reply_counts(server: Any) -> None:
    script = serve(
        server,
        CHAT,
        Script(
            chat_json({"score": 9, "reason": "x"}),
            chat_json(GOOD, prompt_tokens=30, completion_tokens=6),
        ),
    )
    [call] = judge({"p": openai_config(server)}, request())
    assert call.ok and call.data == GOOD
    assert "'score' is 9, above the maximum 5" in script.seen[1].body["messages"][-1]["content"]
    assert (call.input_tokens, call.output_tokens) == (40, 11)


def test_a_truncated_reply_is_an_error_and_never_parsed(server: Any) -> None:
    # Even a cut reply that happens to parse is not trusted.
    script = serve(
        server, CHAT, Script(chat('{"score": 4, "reason": "ok"}', finish="length"), chat_json(GOOD))
    )
    [call] = judge({"p": openai_config(server)}, request())
    assert len(script.seen) == 1  # no re-ask either
    assert call.error == "truncated reply (finish_reason=length)"
    assert call.raw == '{"score": 4, "reason": "ok"}'
    assert call.data is None and call.finish_reason == "length"


def test_a_content_filter_stop_and_a_refusal_are_errors(server: Any) -> None:
    serve(server, CHAT, Script(chat(None, finish="content_filter")))
    [call] = judge({"p": openai_config(server)}, request())
    assert call.error == "refused by the content filter (finish_reason=content_filter)"
    server.clear()
    serve(server, CHAT, Script(chat(None, refusal="I can't help with that.")))
    [call] = judge({"p": openai_config(server)}, request())
    assert call.error == "the model refused: I can't help with that."


def test_anthropic_forced_tool_truncated(server: Any) -> None:
    script = serve(
        server, "/v1/messages", Script(message(tool_input={"score": 4}, stop_reason="max_tokens"))
    )
    [call] = judge({"a": anthropic_config(server)}, request())
    assert len(script.seen) == 1
    assert call.error == "truncated reply (finish_reason=length)"
    assert call.finish_reason == "length" and call.raw == '{"score": 4}'


def test_anthropic_invalid_tool_input_is_answered_with_an_error_tool_result(server: Any) -> None:
    script = serve(
        server, "/v1/messages", Script(message(tool_input={"score": 4}), message(tool_input=GOOD))
    )
    [call] = judge({"a": anthropic_config(server)}, request())
    assert call.ok and call.data == GOOD and call.mode == "json_schema"
    assert call.finish_reason == "stop"  # tool_use, in OpenAI's words
    reask = script.seen[1].body["messages"]
    assert reask[1] == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_01", "name": "verdict", "input": {"score": 4}}
        ],
    }
    [result] = reask[2]["content"]
    assert (
        result["type"] == "tool_result"
        and result["tool_use_id"] == "toolu_01"
        and result["is_error"] is True
    )
    assert "lacks the required key 'reason'" in result["content"]


def test_anthropic_tools_rejected_fall_back_to_text(server: Any) -> None:
    def answer(seen: Any) -> Answer:
        if "tools" in seen.body:
            return anthropic_error(
                400, "invalid_request_error", "tools are not supported by this endpoint"
            )
        return message(text='{"score": 2, "reason": "partly"}')

    script = serve(server, "/v1/messages", Script(answer))
    pool = ProviderPool({"a": anthropic_config(server)}, ENV, retry=fast_retry())

    async def go() -> list[Any]:
        try:
            return [await pool.judge("a", request()), await pool.judge("a", request())]
        finally:
            await pool.aclose()

    first, second = run(go())
    assert first.ok and second.ok and first.mode == second.mode == "text"
    assert ["tools" in s.body for s in script.seen] == [True, False, False]
    assert "JSON Schema" in script.seen[1].body["system"]


def test_mode_cache_never_climbs_back() -> None:
    cache = ModeCache()
    modes = ("json_schema", "json_object", "text")
    key = ("p", "m")
    assert cache.first(key, modes) == "json_schema"
    assert cache.lower(key, modes, "json_schema") == "json_object"
    assert cache.lower(key, modes, "json_object") == "text"
    # A call that started before the memory changed steps down late: no climb back.
    assert cache.lower(key, modes, "json_schema") == "json_object"
    assert cache.first(key, modes) == "text"
    assert cache.lower(key, modes, "text") is None


def test_tool_names_are_what_the_apis_accept() -> None:
    assert tool_name("verdict") == "verdict"
    assert tool_name("faithfulness verdict/v2") == "faithfulness_verdict_v2"
    assert tool_name("x" * 80) == "x" * 64
    assert tool_name("") == "reply"
