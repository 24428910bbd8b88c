"""Scripted provider endpoints for the provider tests.

A `Script` is a ``pytest-httpserver`` handler that answers requests with its
replies in order (the last one repeats) and records each request it saw: when,
which path and query, which headers, which JSON body.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from werkzeug import Request, Response

from oloproof.providers import JudgeCall, JudgeRequest, ProviderConfig, ProviderPool, RetryPolicy

T = TypeVar("T")

KEY = "sk-test-PLANTED-7c1f9e2b4a"
"""The key planted in the test environments; it must never come back out."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "reason": {"type": "string"},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}
"""The reply schema most tests ask for."""

GOOD = {"score": 4, "reason": "grounded in the context"}
"""A reply object that fits `SCHEMA`."""


def fast_retry(seed: int = 0, **overrides: Any) -> RetryPolicy:
    """A retry policy whose backoff waits milliseconds."""
    options: dict[str, Any] = {"base_s": 0.01, "cap_s": 0.05, "rng": random.Random(seed)}
    options.update(overrides)
    return RetryPolicy(**options)


def request(**overrides: Any) -> JudgeRequest:
    """A judge request for `SCHEMA`."""
    options: dict[str, Any] = {
        "system": "You grade answers.",
        "user": "Question: 2+2? Answer: 4. Grade it.",
        "schema": SCHEMA,
        "schema_name": "verdict",
        "model": "judge-model",
    }
    options.update(overrides)
    return JudgeRequest(**options)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on a fresh event loop."""
    return asyncio.run(coroutine)


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    at: float
    """``time.monotonic()`` on arrival."""
    path: str
    args: dict[str, str]
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any


@dataclass
class Answer:
    """One scripted reply: a status, a JSON body, headers and an optional delay."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    def response(self) -> Response:
        if self.delay_s:
            time.sleep(self.delay_s)
        return Response(
            json.dumps(self.body),
            status=self.status,
            headers=self.headers,
            content_type="application/json",
        )


Reply = Answer | Callable[[Seen], Answer]


class Script:
    """Answers requests with ``replies`` in order, the last one repeating; records them."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.seen: list[Seen] = []
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        seen = Seen(
            at=time.monotonic(),
            path=request.path,
            args=dict(request.args),
            headers={name.lower(): value for name, value in request.headers.items()},
            body=request.get_json(silent=True),
        )
        with self.lock:
            index = len(self.seen)
            self.seen.append(seen)
        reply = self.replies[min(index, len(self.replies) - 1)]
        answer = reply(seen) if callable(reply) else reply
        return answer.response()


def chat(
    content: str | None,
    *,
    finish: str = "stop",
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    refusal: str | None = None,
) -> Answer:
    """An OpenAI chat completion whose one choice says ``content``."""
    return Answer(
        body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "judge-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def chat_json(data: Any, **kwargs: Any) -> Answer:
    """A chat completion whose content is ``data`` as JSON."""
    return chat(json.dumps(data), **kwargs)


def message(
    *,
    tool_input: Any = None,
    text: str | None = None,
    stop_reason: str | None = None,
    input_tokens: int = 12,
    output_tokens: int = 7,
    tool_name: str = "verdict",
) -> Answer:
    """An Anthropic message: a ``tool_use`` block with ``tool_input``, or a text block."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool_input is not None:
        content.append(
            {"type": "tool_use", "id": "toolu_01", "name": tool_name, "input": tool_input}
        )
    return Answer(
        body={
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-judge",
            "content": content,
            "stop_reason": stop_reason or ("tool_use" if tool_input is not None else "end_turn"),
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
    )


def openai_error(
    status: int, message: str, *, code: str | None = None, headers: dict[str, str] | None = None
) -> Answer:
    """An OpenAI-style error reply."""
    body = {
        "error": {
            "message": message,
            "type": code or "invalid_request_error",
            "param": None,
            "code": code,
        }
    }
    return Answer(status=status, body=body, headers=headers or {})


def anthropic_error(
    status: int, kind: str, message: str, *, headers: dict[str, str] | None = None
) -> Answer:
    """An Anthropic-style error reply."""
    return Answer(
        status=status,
        body={"type": "error", "error": {"type": kind, "message": message}},
        headers=headers or {},
    )


def max_in_window(times: list[float], window: float, *, start: int = 0) -> int:
    """The most arrivals in any half-open window ``[t, t + window)`` that starts at arrival ``start`` or later."""
    ordered = sorted(times)
    best = 0
    for i in range(start, len(ordered)):
        count = sum(1 for t in ordered[i:] if t < ordered[i] + window)
        best = max(best, count)
    return best


TOKEN = "eyJ-test-PLANTED-entra-token"
"""The Entra ID token planted for Azure; it must never come back out either."""

ENV = {"OAI_KEY": KEY, "ANT_KEY": KEY, "AZ_KEY": KEY, "AZ_TOKEN": TOKEN}
"""The environment the pools of these tests read."""


def serve(server: Any, path: str, script: Script) -> Script:
    """Have ``server`` answer POSTs to ``path`` with ``script``."""
    server.expect_request(path, method="POST").respond_with_handler(script)
    return script


def openai_config(server: Any, **options: Any) -> ProviderConfig:
    """An OpenAI-compatible provider at ``server``'s ``/v1``."""
    options = {
        "type": "openai",
        "base_url": server.url_for("/v1"),
        "api_key_env": "OAI_KEY",
        **options,
    }
    return ProviderConfig(**options)


def anthropic_config(server: Any, **options: Any) -> ProviderConfig:
    """An Anthropic provider at ``server``."""
    options = {
        "type": "anthropic",
        "base_url": server.url_for(""),
        "api_key_env": "ANT_KEY",
        **options,
    }
    return ProviderConfig(**options)


def judge(
    configs: dict[str, ProviderConfig],
    *requests: JudgeRequest,
    provider: str | None = None,
    retry: RetryPolicy | None = None,
    **pool_options: Any,
) -> list[JudgeCall]:
    """Judge ``requests`` concurrently on one fresh loop, then close the pool."""
    pool = ProviderPool(configs, ENV, retry=retry or fast_retry(), **pool_options)
    name = provider or next(iter(configs))

    async def go() -> list[JudgeCall]:
        try:
            return list(await asyncio.gather(*(pool.judge(name, r) for r in requests)))
        finally:
            await pool.aclose()

    return run(go())


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
