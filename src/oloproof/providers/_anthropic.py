"""Anthropic's Messages API, through the ``anthropic`` SDK.

The ``json_schema`` mode is a forced tool: the schema is the tool's input
schema, ``tool_choice`` names it, and the ``tool_use`` block's input is the
reply object. The ``text`` mode asks for the JSON in the system prompt.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic

from oloproof.providers._calls import JudgeRequest
from oloproof.providers._config import ProviderConfig
from oloproof.providers._retry import Failure
from oloproof.providers._structured import Message, Reply, instruction, tool_name

__all__ = ["FINISH_REASONS", "AnthropicAdapter"]

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
"""Anthropic's stop reasons in OpenAI's words; others are kept as they are."""

_TOOL_DESCRIPTION = "Record the reply. Its input is the whole answer."


class AnthropicAdapter:
    """Messages on one Anthropic endpoint.

    Args:
        config: The provider's configuration.
        credential: The API key.
    """

    modes: tuple[str, ...] = ("json_schema", "text")

    def __init__(self, config: ProviderConfig, credential: str | None) -> None:
        self.client = anthropic.AsyncAnthropic(
            api_key=credential,
            base_url=config.url,
            timeout=config.timeout_s,
            max_retries=0,  # retries live in _retry.py, where the limits see every 429
        )

    async def send(self, request: JudgeRequest, mode: str, extra: list[Message]) -> Reply:
        """One message in ``mode``."""
        system = request.system
        options: dict[str, Any] = {}  # the SDK's keyword arguments
        if mode == "json_schema":
            name = tool_name(request.schema_name)
            options["tools"] = [
                {"name": name, "description": _TOOL_DESCRIPTION, "input_schema": request.schema}
            ]
            options["tool_choice"] = {
                "type": "tool",
                "name": name,
                "disable_parallel_tool_use": True,
            }
        else:
            addition = instruction(request.schema)
            system = f"{system}\n\n{addition}" if system else addition
        if system:
            options["system"] = system
        # The installed SDK's Messages API has no `temperature`: it is not sent.
        message = await self.client.messages.create(
            model=request.model,
            max_tokens=request.max_tokens,
            messages=[{"role": "user", "content": request.user}, *extra],  # type: ignore[list-item]
            **options,
        )
        return _reply(message)

    def reask(self, reply: Reply, text: str) -> list[Message]:
        """The previous reply as the assistant's turn, then the correction.

        A tool call is answered with an error ``tool_result``, as the Messages
        API wants every ``tool_use`` answered.
        """
        tool = reply.turn
        if tool is not None:
            return [
                {"role": "assistant", "content": [tool]},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tool["id"],
                            "is_error": True,
                            "content": text,
                        }
                    ],
                },
            ]
        # The API refuses an empty assistant turn.
        return [
            {"role": "assistant", "content": reply.raw or "(no reply)"},
            {"role": "user", "content": text},
        ]

    def rejects(self, failure: Failure, mode: str) -> bool:
        """A 400 (or 422) about tools: the endpoint refuses the forced tool."""
        if mode != "json_schema" or failure.status not in (400, 422):
            return False
        return "tool" in f"{failure.message} {failure.text}".lower()

    async def aclose(self) -> None:
        await self.client.close()


def _reply(message: Any) -> Reply:
    blocks = getattr(message, "content", None)
    if not isinstance(blocks, list):
        # What came back is not a message at all (an HTML page from a proxy, say).
        return Reply(raw=None, finish_reason=None, malformed="it is not a message")
    usage = getattr(message, "usage", None)
    # Cached prompt tokens are input tokens too (priced alike here).
    input_tokens = sum(
        int(getattr(usage, name, 0) or 0)
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
    stop = getattr(message, "stop_reason", None)
    finish = FINISH_REASONS.get(stop, stop) if stop is not None else None
    texts: list[str] = []
    tool: dict[str, Any] | None = None  # the reply's tool_use block, as the API writes it
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "tool_use" and tool is None:
            tool = {
                "type": "tool_use",
                "id": getattr(block, "id", ""),
                "name": getattr(block, "name", ""),
                "input": getattr(block, "input", None),
            }
        elif kind == "text":
            texts.append(str(getattr(block, "text", "")))
    if tool is not None:
        return Reply(
            raw=json.dumps(tool["input"], ensure_ascii=False),
            finish_reason=finish,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            data=tool["input"],
            turn=tool,
        )
    return Reply(
        raw="".join(texts),
        finish_reason=finish,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
