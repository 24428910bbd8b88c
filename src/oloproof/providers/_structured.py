"""The structured-output ladder: how a reply object is asked for, read and checked.

Each provider kind offers modes from the strongest down: OpenAI (and Azure,
and compatible servers) ``json_schema`` (native constrained decoding), then
``json_object`` (JSON mode), then ``text``; Anthropic ``json_schema`` (a forced
tool whose input is the object), then ``text``. A request rejected because of
its mode (a 400 about ``response_format`` / ``json_schema`` / tools) steps down
one rung, and the rung that answered is remembered per (provider, model), so
later calls start there.

A reply cut at its token limit or stopped by a content filter is an error, its
text kept and never parsed. Otherwise the first JSON object in it is checked
against the schema; an unusable reply earns one re-ask (the reply and a short
correction), then the call fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict

from pydantic import JsonValue

from oloproof.providers._calls import JudgeRequest
from oloproof.providers._extract import extract_object, schema_problem
from oloproof.providers._retry import Failure, GaveUp

__all__ = [
    "Adapter",
    "Message",
    "ModeCache",
    "Reply",
    "Trace",
    "ask",
    "correction",
    "instruction",
    "tool_name",
]



class Message(TypedDict):
    """One message a re-ask adds after the user's, as the SDKs take it."""

    role: Literal["assistant", "user"]
    """Who says it."""
    content: str | list[Mapping[str, object]]
    """Its text, or the provider's content blocks (Anthropic's tool use and result)."""


Send = Callable[[str, list[Message]], Awaitable["Reply"]]


@dataclass(frozen=True)
class Reply:
    """One model reply, in the same words whatever the provider."""

    raw: str | None
    """The reply text (a tool call's input as JSON)."""
    finish_reason: str | None
    """In OpenAI's words: ``stop``, ``length``, ``content_filter``, ``tool_calls``."""
    input_tokens: int = 0
    output_tokens: int = 0
    data: Any = None
    """The object the provider already parsed (a tool call's input), if any."""
    refusal: str | None = None
    """A refusal message the provider returned instead of content."""
    turn: Any = None
    """Provider-specific: what the re-ask sends back as the assistant's turn."""
    malformed: str | None = None
    """What makes the reply itself unusable (no choices, say); a re-ask will not cure it."""


class Adapter(Protocol):
    """What the ladder needs of one provider kind's SDK client."""

    modes: tuple[str, ...]

    async def send(self, request: JudgeRequest, mode: str, extra: list[Message]) -> Reply:
        """Send ``request`` in ``mode``, with ``extra`` messages after the user's."""
        ...

    def reask(self, reply: Reply, text: str) -> list[Message]:
        """The messages that answer ``reply`` with the correction ``text``."""
        ...

    def rejects(self, failure: Failure, mode: str) -> bool:
        """Whether ``failure`` is the provider refusing ``mode`` itself."""
        ...

    async def aclose(self) -> None:
        """Close the SDK client."""
        ...


@dataclass
class Trace:
    """What one judged call has seen so far, over every request it sent."""

    mode: str = ""
    raw: str | None = None
    finish_reason: str | None = None
    retries: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def record(self, reply: Reply) -> None:
        """Count a reply's usage and keep it as the latest."""
        self.raw = reply.raw
        self.finish_reason = reply.finish_reason
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens

    def count_retry(self) -> None:
        self.retries += 1

    def count_request(self) -> None:
        """Count one request sent (a retry, a re-ask and a step down the ladder included)."""
        self.requests += 1


class ModeCache:
    """The mode each (provider, model) answers in, learnt as requests are rejected."""

    def __init__(self) -> None:
        self._modes: dict[tuple[str, str], str] = {}

    def first(self, key: tuple[str, str], modes: tuple[str, ...]) -> str:
        """The mode to start a call in."""
        return self._modes.get(key, modes[0])

    def lower(self, key: tuple[str, str], modes: tuple[str, ...], mode: str) -> str | None:
        """The mode below ``mode``, remembered for ``key``; ``None`` at the bottom."""
        index = modes.index(mode) + 1
        if index >= len(modes):
            return None
        known = self._modes.get(key, modes[0])
        # Concurrent calls may step down at once; never climb back up.
        if modes.index(known) < index:
            self._modes[key] = modes[index]
        return modes[index]


def tool_name(schema_name: str) -> str:
    """``schema_name`` as OpenAI and Anthropic accept it: ``[A-Za-z0-9_-]{1,64}``."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema_name)[:64]
    return name or "reply"


def instruction(schema: Mapping[str, JsonValue]) -> str:
    """What the system prompt gains in modes without native schemas."""
    return "Reply with one JSON object and nothing else, matching this JSON Schema:\n" + json.dumps(
        schema, ensure_ascii=False, sort_keys=True
    )


def correction(problem: str) -> str:
    """The re-ask's message, after a reply that could not be used."""
    return (
        f"That reply could not be used: {problem}. Reply again with only the JSON object, "
        "matching the schema exactly."
    )


async def ask(
    adapter: Adapter,
    request: JudgeRequest,
    send: Send,
    modes: ModeCache,
    key: tuple[str, str],
    trace: Trace,
) -> tuple[dict[str, JsonValue] | None, str | None]:
    """Ask for the reply object down the ladder.

    Args:
        adapter: The provider kind's client.
        request: What to ask.
        send: Sends one request (mode, extra messages) with limits and retries;
            raises `GaveUp` when the request failed for good.
        modes: The per-(provider, model) mode memory.
        key: This call's (provider, model).
        trace: Collects the mode, latest reply, usage and retries.

    Returns:
        ``(data, None)`` for a valid reply object, ``(None, error)`` otherwise.
    """
    mode = modes.first(key, adapter.modes)
    while True:
        trace.mode = mode
        try:
            return await _exchange(adapter, request, send, mode, trace)
        except GaveUp as gave:
            lower = (
                modes.lower(key, adapter.modes, mode)
                if adapter.rejects(gave.failure, mode)
                else None
            )
            if lower is None:
                return None, gave.reason
            mode = lower


async def _exchange(
    adapter: Adapter, request: JudgeRequest, send: Send, mode: str, trace: Trace
) -> tuple[dict[str, JsonValue] | None, str | None]:
    """One mode: the request, and at most one re-ask."""
    extra: list[Message] = []
    problem = None
    for _ in range(2):  # the request, then the one re-ask
        reply = await send(mode, extra)
        trace.record(reply)
        stop = _stopped(reply)
        if stop is not None:
            return None, stop
        data, problem = _read(reply, request.schema)
        if problem is None:
            return data, None
        extra = adapter.reask(reply, correction(problem))
    return None, f"invalid reply after one re-ask: {problem}"


def _read(reply: Reply, schema: dict[str, JsonValue]) -> tuple[dict[str, JsonValue] | None, str | None]:
    """The reply object, or what is wrong with it."""
    data = reply.data if isinstance(reply.data, dict) else extract_object(reply.raw or "")
    if data is None:
        return None, "it holds no JSON object"
    problem = schema_problem(data, schema)
    return (data, None) if problem is None else (None, problem)


def _stopped(reply: Reply) -> str | None:
    """Why a reply must not be parsed at all, if it must not."""
    if reply.finish_reason == "length":
        return "truncated reply (finish_reason=length)"
    if reply.finish_reason == "content_filter":
        return "refused by the content filter (finish_reason=content_filter)"
    if reply.malformed:
        return f"unusable reply: {reply.malformed}"
    if reply.refusal:
        text = " ".join(reply.refusal.split())
        return f"the model refused: {text[:200]}"
    return None
