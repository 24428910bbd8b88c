"""The pool: request shapes and auth on the wire, checks before a run, accounting, secrecy."""

from __future__ import annotations

import asyncio
import dataclasses
import pickle
import subprocess
import sys
from typing import Any

import anthropic._constants
import pytest
from providers_wire import (
    ENV,
    GOOD,
    KEY,
    SCHEMA,
    TOKEN,
    Answer,
    Script,
    anthropic_config,
    chat,
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
from werkzeug import Response

from oloproof._exceptions import ConfigError, ProviderConfigError
from oloproof.providers import JudgeCall, JudgeRequest, ProviderConfig, ProviderPool
from oloproof.providers._openai import OpenAIAdapter

CHAT = "/v1/chat/completions"


# --- request shapes and auth -------------------------------------------------------------


def test_openai_request_shape_and_bearer_key(server: Any) -> None:
    script = serve(server, CHAT, Script(chat_json(GOOD)))
    [call] = judge({"judge": openai_config(server)}, request(max_tokens=300, temperature=0.2))
    assert call.ok and call.provider == "judge" and call.provider_type == "openai"
    [seen] = script.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body["model"] == "judge-model"
    assert seen.body["messages"] == [
        {"role": "system", "content": "You grade answers."},
        {"role": "user", "content": "Question: 2+2? Answer: 4. Grade it."},
    ]
    assert seen.body["max_tokens"] == 300 and seen.body["temperature"] == 0.2
    assert seen.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
    }


def test_the_official_openai_endpoint_gets_max_completion_tokens() -> None:
    # No wire test can reach api.openai.com: the choice itself is checked.
    official = OpenAIAdapter(ProviderConfig(type="openai", api_key_env="K"), KEY)
    local = OpenAIAdapter(ProviderConfig(type="openai", base_url="http://127.0.0.1:1/v1"), None)
    assert (official._budget, local._budget) == ("max_completion_tokens", "max_tokens")
    assert str(official.client.base_url) == "https://api.openai.com/v1/"


def test_an_openai_compatible_server_without_a_key_gets_a_placeholder(server: Any) -> None:
    script = serve(server, CHAT, Script(chat_json(GOOD)))
    [call] = judge({"local": openai_config(server, api_key_env=None)}, request())
    assert call.ok
    assert script.seen[0].headers["authorization"] == "Bearer unused"


def azure(server: Any, api_version: str = "2024-10-21", **options: Any) -> ProviderConfig:
    return ProviderConfig(
        type="azure_openai", endpoint=server.url_for(""), api_version=api_version, **options
    )


@pytest.mark.parametrize(
    ("api_version", "budget"),
    [("2024-10-21", "max_completion_tokens"), ("2024-06-01", "max_tokens")],
)
def test_azure_with_a_key(server: Any, api_version: str, budget: str) -> None:
    path = "/openai/deployments/gpt4o-judge/chat/completions"
    script = serve(server, path, Script(chat_json(GOOD)))
    config = azure(server, api_version, api_key_env="AZ_KEY")
    [call] = judge({"az": config}, request(model="gpt4o-judge"))
    assert call.ok and call.provider_type == "azure_openai" and call.model == "gpt4o-judge"
    [seen] = script.seen
    assert seen.args == {"api-version": api_version}
    assert seen.headers["api-key"] == KEY
    assert "authorization" not in seen.headers
    assert {k for k in seen.body if k.startswith("max_")} == {budget}
    assert seen.body[budget] == 512


def test_azure_with_an_entra_token(server: Any) -> None:
    script = serve(server, "/openai/deployments/dep/chat/completions", Script(chat_json(GOOD)))
    [call] = judge({"az": azure(server, token_env="AZ_TOKEN")}, request(model="dep"))
    assert call.ok
    [seen] = script.seen
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert "api-key" not in seen.headers


def test_anthropic_request_shape_forced_tool_and_auth(server: Any) -> None:
    script = serve(server, "/v1/messages", Script(message(tool_input=GOOD)))
    [call] = judge({"claude": anthropic_config(server)}, request(max_tokens=256))
    assert call.ok and call.data == GOOD and call.provider_type == "anthropic"
    assert call.mode == "json_schema" and call.finish_reason == "stop"
    [seen] = script.seen
    assert seen.path == "/v1/messages"
    # anthropic 2.x sends the API key as a bearer token (1.x used x-api-key).
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["anthropic-version"] == anthropic._constants.ANTHROPIC_API_VERSION
    body = seen.body
    assert body["model"] == "judge-model" and body["max_tokens"] == 256
    assert body["system"] == "You grade answers."
    assert body["messages"] == [{"role": "user", "content": "Question: 2+2? Answer: 4. Grade it."}]
    [tool] = body["tools"]
    assert tool["name"] == "verdict" and tool["input_schema"] == SCHEMA
    assert body["tool_choice"] == {
        "type": "tool",
        "name": "verdict",
        "disable_parallel_tool_use": True,
    }


# --- accounting ---------------------------------------------------------------------------


def test_tokens_and_cost_are_summed_over_the_re_ask_and_retries(server: Any) -> None:
    script = serve(
        server,
        CHAT,
        Script(
            openai_error(503, "busy", code="server_error"),
            chat("not json", prompt_tokens=1000, completion_tokens=200),
            chat_json(GOOD, prompt_tokens=1100, completion_tokens=50),
        ),
    )
    prices = {"input_per_mtok": 2.0, "output_per_mtok": 10.0}
    [call] = judge({"p": openai_config(server, prices=prices)}, request())
    assert call.ok and len(script.seen) == 3
    assert call.retries == 1
    assert (call.input_tokens, call.output_tokens) == (2100, 250)
    assert call.cost_usd == pytest.approx((2100 * 2.0 + 250 * 10.0) / 1e6)
    assert call.latency_ms > 0


def test_no_prices_no_cost_and_a_failed_call_still_counts_its_tokens(server: Any) -> None:
    serve(server, CHAT, Script(chat("{", finish="length", prompt_tokens=70, completion_tokens=512)))
    [call] = judge({"p": openai_config(server)}, request())
    assert not call.ok and call.cost_usd is None
    assert (call.input_tokens, call.output_tokens) == (70, 512)


# --- the pool's life ------------------------------------------------------------------------


def test_the_pool_works_on_whichever_loop_runs_it(server: Any) -> None:
    # Clients and limiters are made on the running loop at first use, so a pool
    # built outside any loop serves one loop, then another.
    serve(server, CHAT, Script(chat_json(GOOD)))
    pool = ProviderPool({"p": openai_config(server)}, ENV, retry=fast_retry())
    pool.check(["p"])

    async def once() -> JudgeCall:
        return await pool.judge("p", request())

    assert run(once()).ok
    assert run(once()).ok
    run(pool.aclose())


def test_aclose_closes_the_clients(server: Any) -> None:
    serve(server, CHAT, Script(chat_json(GOOD)))
    pool = ProviderPool({"p": openai_config(server)}, ENV, retry=fast_retry())

    async def go() -> Any:
        await pool.judge("p", request())
        client = pool._live["p"].adapter.client  # type: ignore[attr-defined]
        await pool.aclose()
        return client

    assert run(go()).is_closed()


def test_cancellation_propagates_and_frees_the_slot(server: Any) -> None:
    script = serve(server, CHAT, Script(Answer(body={}, delay_s=1.0), chat_json(GOOD)))
    pool = ProviderPool({"p": openai_config(server, max_concurrency=1)}, ENV, retry=fast_retry())

    async def go() -> JudgeCall:
        try:
            hung = asyncio.create_task(pool.judge("p", request()))
            for _ in range(500):  # until the hung request is at the server
                if script.seen:
                    break
                await asyncio.sleep(0.01)
            hung.cancel()
            with pytest.raises(asyncio.CancelledError):
                await hung
            return await asyncio.wait_for(pool.judge("p", request()), 5)
        finally:
            await pool.aclose()

    assert run(go()).ok


def test_an_unexpected_reply_is_a_failed_call(server: Any) -> None:
    serve(server, CHAT, Script(Answer(body=["not", "a", "completion"])))
    [call] = judge({"p": openai_config(server)}, request())
    assert not call.ok and call.data is None
    assert call.error == "unusable reply: it has no choices"


def test_a_reply_that_is_not_json_at_all_is_a_failed_call(server: Any) -> None:
    def page(request: Any) -> Response:
        return Response("<html>502 from a proxy</html>", content_type="text/html")

    server.expect_request(CHAT).respond_with_handler(page)
    server.expect_request("/v1/messages").respond_with_handler(page)
    configs = {"p": openai_config(server), "a": anthropic_config(server)}
    [openai_call] = judge(configs, request(), provider="p")
    [anthropic_call] = judge(configs, request(), provider="a")
    assert openai_call.error == "unusable reply: it has no choices"
    assert anthropic_call.error == "unusable reply: it is not a message"


def test_judging_an_unknown_provider_raises() -> None:
    pool = ProviderPool({}, ENV)
    with pytest.raises(ProviderConfigError, match="no provider named 'nope'"):
        run(pool.judge("nope", request()))


def test_the_pool_is_not_picklable() -> None:
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(ProviderPool({}, ENV))


# --- checks before a run ------------------------------------------------------------------


def configs(server_url: str = "http://127.0.0.1:9/v1") -> dict[str, ProviderConfig]:
    return {
        "b": ProviderConfig(type="openai", base_url=server_url, api_key_env="B_KEY"),
        "a": ProviderConfig(type="anthropic", api_key_env="A_KEY"),
        "local": ProviderConfig(type="openai", base_url=server_url),
    }


def test_check_names_the_missing_variable_in_one_line() -> None:
    pool = ProviderPool(configs(), {"A_KEY": KEY, "B_KEY": ""})
    pool.check(["a", "local"])
    with pytest.raises(ProviderConfigError) as caught:
        pool.check(["a", "b"])
    text = str(caught.value)
    assert isinstance(caught.value, ConfigError)
    assert "B_KEY" in text and "\n" not in text
    assert text == (
        "field 'providers.b.api_key_env': provider 'b' reads its API key from the environment "
        "variable B_KEY, which is not set or empty"
    )
    with pytest.raises(ProviderConfigError, match="A_KEY"):
        ProviderPool(configs(), {"B_KEY": KEY}).check(["a"])


def test_check_names_unknown_providers_and_the_configured_ones() -> None:
    pool = ProviderPool(configs(), {})
    with pytest.raises(ProviderConfigError) as caught:
        pool.check(["x"])
    assert str(caught.value) == "no provider named 'x' (configured: a, b, local)"
    with pytest.raises(ProviderConfigError, match=r"\(configured: none\)"):
        ProviderPool({}, {}).check(["x"])


def test_check_creates_no_client() -> None:
    pool = ProviderPool(configs(), {"A_KEY": KEY, "B_KEY": KEY})
    pool.check(["a", "b", "local"])
    assert pool._live == {}


def test_preflight_names_an_unreachable_url(server: Any) -> None:
    port = closed_port()
    pool = ProviderPool(
        {
            "up": openai_config(server),
            "down": ProviderConfig(type="openai", base_url=f"http://user:pw@127.0.0.1:{port}/v1"),
        },
        ENV,
    )
    pool.preflight(["up"])
    with pytest.raises(ProviderConfigError) as caught:
        pool.preflight(["up", "down"])
    text = str(caught.value)
    assert caught.value.field == "providers.down.base_url"
    assert caught.value.message.startswith(f"cannot reach http://127.0.0.1:{port}/v1 (provider 'down'): ")
    assert "refused" in text.lower()
    assert "pw" not in text  # credentials in a URL are not repeated


# --- secrecy ------------------------------------------------------------------------------


def test_the_key_never_comes_back_out(server: Any) -> None:
    # A server that echoes the key in its error, as some do.
    echo = openai_error(401, f"Incorrect API key provided: {KEY}.", code="invalid_api_key")
    serve(server, CHAT, Script(echo))
    serve(server, "/v1/messages", Script(message(text=f"my key is {KEY}")))
    config = {"p": openai_config(server), "a": anthropic_config(server)}
    pool = ProviderPool(
        {**config, "missing": ProviderConfig(type="anthropic", api_key_env="NOT_SET")}, ENV
    )

    async def go() -> list[JudgeCall]:
        try:
            return [await pool.judge("p", request()), await pool.judge("a", request())]
        finally:
            await pool.aclose()

    calls = run(go())
    assert calls[0].error is not None and "401" in calls[0].error
    texts = [repr(pool), *(repr(dataclasses.asdict(call)) for call in calls)]
    for names in (["missing"], ["nope"]):
        with pytest.raises(ProviderConfigError) as caught:
            pool.check(names)
        texts.append(str(caught.value))
    assert "[redacted]" in calls[0].error
    assert all(KEY not in text for text in texts)
    assert repr(pool) == "ProviderPool(providers=['a', 'missing', 'p'])"


def test_judge_requests_are_checked() -> None:
    with pytest.raises(TypeError, match="schema must be a dict"):
        request(schema="{}")
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="max_tokens"):
            request(max_tokens=bad)
    with pytest.raises(ValueError, match="model"):
        JudgeRequest(system="", user="u", schema=SCHEMA, schema_name="v", model="")


def test_importing_the_package_does_not_import_the_sdks() -> None:
    # A command that only reads oloproof.yaml should not pay for two SDK imports.
    code = (
        "import sys, oloproof.providers; print('openai' in sys.modules, 'anthropic' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["False", "False"], done.stderr
