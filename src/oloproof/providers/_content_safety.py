"""A content-safety service's REST API, as a provider (``type: content_safety``).

The service is not a model: one operation (``text:detectGroundedness``) takes a
JSON body and answers a JSON object. It goes through the pool like every other
provider, so its calls get the same concurrency and rate limits, retries,
timeouts, circuit breaker and accounting. A `JudgeRequest` for it is made by
`groundedness_request`: the body travels as the request's ``user`` text, the API
version as its ``model``, the operation as its ``schema_name``.

Failures are raised as the OpenAI SDK's error types, which wrap the same
``httpx2`` requests and replies: the retry policy, the rate limits and the
breaker read those, so this provider needs no rules of its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import httpx2
import openai
from pydantic import JsonValue

from oloproof.providers._calls import JudgeRequest
from oloproof.providers._config import ProviderConfig
from oloproof.providers._extract import schema_problem
from oloproof.providers._retry import Failure
from oloproof.providers._structured import Message, Reply

__all__ = [
    "DEFAULT_API_VERSION",
    "GROUNDEDNESS",
    "GROUNDEDNESS_SCHEMA",
    "ContentSafetyAdapter",
    "groundedness_request",
]

DEFAULT_API_VERSION = "2024-09-15-preview"
"""The groundedness detection API version asked for unless another is configured."""

GROUNDEDNESS = "text:detectGroundedness"
"""The groundedness detection operation, under ``<endpoint>/contentsafety/``."""

GROUNDEDNESS_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"ungroundedDetected": {"type": "boolean"}},
    "required": ["ungroundedDetected"],
}
"""What a groundedness reply must hold to be read."""

_OPERATIONS = {GROUNDEDNESS: GROUNDEDNESS_SCHEMA}
_MODE = "rest"
_KEY_HEADER = "Ocp-Apim-Subscription-Key"


def groundedness_request(body: Mapping[str, JsonValue], api_version: str = DEFAULT_API_VERSION) -> JudgeRequest:
    """The pool's request for one groundedness detection of ``body``."""
    return JudgeRequest(
        system="",
        user=json.dumps(body, ensure_ascii=False),
        schema=GROUNDEDNESS_SCHEMA,
        schema_name=GROUNDEDNESS,
        model=api_version,
        max_tokens=1,  # nothing is generated; it only sizes a tpm estimate
    )


class ContentSafetyAdapter:
    """POSTs to one content-safety resource.

    Args:
        config: The provider's configuration (``content_safety``).
        credential: The resource's key.
    """

    modes: tuple[str, ...] = (_MODE,)

    def __init__(self, config: ProviderConfig, credential: str | None) -> None:
        self._root = f"{config.url.rstrip('/')}/contentsafety/"
        self._timeout_s = config.timeout_s
        self._headers = {_KEY_HEADER: credential or "", "Content-Type": "application/json"}

    async def send(self, request: JudgeRequest, mode: str, extra: list[Message]) -> Reply:
        """One POST of the request's body to its operation.

        Raises:
            openai.APIStatusError: The service answered with a status other than 2xx.
            openai.APITimeoutError: The request timed out.
            openai.APIConnectionError: No reply came (refused, reset, DNS).
        """
        if request.schema_name not in _OPERATIONS:
            raise ValueError(f"unknown content-safety operation {request.schema_name!r}")
        try:
            # A client per request: the evaluator's own pool (an inline configuration)
            # is never closed, so no connection may outlive its call.
            async with httpx2.AsyncClient(timeout=self._timeout_s) as client:
                reply = await client.post(
                    self._root + request.schema_name,
                    params={"api-version": request.model},
                    content=request.user.encode(),
                    headers=self._headers,
                )
        except httpx2.TimeoutException as exc:
            # A connect timeout too: the breaker finds it in the chain of causes.
            raise openai.APITimeoutError(exc.request) from exc
        except httpx2.TransportError as exc:
            raise openai.APIConnectionError(request=exc.request) from exc
        text = reply.text
        try:
            data = reply.json()
        except ValueError:
            data = None
        if not reply.is_success:
            raise openai.APIStatusError(
                f"content-safety service answered {reply.status_code}",
                response=reply,
                body=data if data is not None else text,
            )
        if not isinstance(data, dict):
            return Reply(raw=text, finish_reason="stop", malformed="it is not a JSON object")
        # Checked here, not by the ladder: a re-ask would only send the same body again.
        problem = schema_problem(data, _OPERATIONS[request.schema_name])
        if problem is not None:
            return Reply(raw=text, finish_reason="stop", malformed=problem)
        return Reply(raw=text, finish_reason="stop", data=data)

    def reask(self, reply: Reply, text: str) -> list[Message]:
        """Nothing to add: `send` checks every reply, so the ladder never re-asks."""
        return []

    def rejects(self, failure: Failure, mode: str) -> bool:
        """Never: the service has one mode."""
        return False

    async def aclose(self) -> None:
        """Nothing to close: each request closes its own client."""
