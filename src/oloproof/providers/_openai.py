"""OpenAI, Azure OpenAI and OpenAI-compatible servers, through the ``openai`` SDK."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import openai

from oloproof.providers._calls import JudgeRequest
from oloproof.providers._config import ProviderConfig
from oloproof.providers._retry import Failure
from oloproof.providers._structured import Message, Reply, instruction, tool_name

__all__ = ["OpenAIAdapter"]

_PLACEHOLDER_KEY = "unused"  # local servers ignore the key, but the SDK wants one
_MODE_WORDS = ("response_format", "json_schema", "json_object")


class OpenAIAdapter:
    """Chat completions on one OpenAI-style endpoint.

    Args:
        config: The provider's configuration (``openai`` or ``azure_openai``).
        credential: The key (or, for Azure with ``token_env``, the bearer token);
            ``None`` for a local server without one.
    """

    modes: tuple[str, ...] = ("json_schema", "json_object", "text")

    def __init__(self, config: ProviderConfig, credential: str | None) -> None:
        if config.type == "azure_openai":
            # With token_env the credential is a bearer token, else a key; None is the SDK's default.
            self.client: openai.AsyncOpenAI = openai.AsyncAzureOpenAI(
                azure_endpoint=str(config.endpoint),
                api_version=str(config.api_version),
                timeout=config.timeout_s,
                max_retries=0,  # retries live in _retry.py, where the limits see every 429
                azure_ad_token=credential if config.token_env else None,
                api_key=None if config.token_env else credential,
            )
            # Azure knows `max_completion_tokens` from API version 2024-09-01 on.
            newer = str(config.api_version)[:10] >= "2024-09-01"
            self._budget = "max_completion_tokens" if newer else "max_tokens"
        else:
            self.client = openai.AsyncOpenAI(
                base_url=config.url,
                api_key=credential or _PLACEHOLDER_KEY,
                timeout=config.timeout_s,
                max_retries=0,  # retries live in _retry.py, where the limits see every 429
            )
            # OpenAI's newer models refuse `max_tokens`; compatible servers
            # (vLLM, Ollama, llama.cpp) have long known only `max_tokens`.
            official = urlsplit(config.url).hostname == "api.openai.com"
            self._budget = "max_completion_tokens" if official else "max_tokens"

    async def send(self, request: JudgeRequest, mode: str, extra: list[Message]) -> Reply:
        """One chat completion in ``mode``."""
        system = (
            request.system
            if mode == "json_schema"
            else _joined(request.system, instruction(request.schema))
        )
        messages: list[Mapping[str, object]] = [{"role": "system", "content": system}] if system else []
        messages += [{"role": "user", "content": request.user}, *extra]
        options: dict[str, Any] = {self._budget: request.max_tokens}  # the SDK's keyword arguments
        if mode == "json_schema":
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": tool_name(request.schema_name),
                    "schema": request.schema,
                    "strict": True,
                },
            }
        elif mode == "json_object":
            options["response_format"] = {"type": "json_object"}
        completion = await self.client.chat.completions.create(
            model=request.model,
            messages=messages,  # type: ignore[arg-type]
            temperature=request.temperature,
            **options,
        )
        return _reply(completion)

    def reask(self, reply: Reply, text: str) -> list[Message]:
        """The previous reply as the assistant's turn, then the correction."""
        return [
            {"role": "assistant", "content": reply.raw or ""},
            {"role": "user", "content": text},
        ]

    def rejects(self, failure: Failure, mode: str) -> bool:
        """A 400 (or 422) about ``response_format``: the server refuses the mode."""
        if mode == "text" or failure.status not in (400, 422):
            return False
        said = f"{failure.message} {failure.text}".lower()
        return any(word in said for word in _MODE_WORDS)

    async def aclose(self) -> None:
        await self.client.close()


def _joined(system: str, addition: str) -> str:
    return f"{system}\n\n{addition}" if system else addition


def _reply(completion: Any) -> Reply:
    # Compatible servers omit fields the SDK does not validate: read defensively.
    usage = getattr(completion, "usage", None)
    input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    choices = getattr(completion, "choices", None) or []
    if not choices:
        return Reply(raw=None, finish_reason=None, malformed="it has no choices",
                     input_tokens=input_tokens, output_tokens=output_tokens)  # fmt: skip
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    return Reply(
        raw=content if isinstance(content, str) else None,
        finish_reason=getattr(choice, "finish_reason", None),
        refusal=getattr(message, "refusal", None) or None,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
