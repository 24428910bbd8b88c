"""What a judge asks of a provider, and what one judged call came to."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

__all__ = ["JudgeCall", "JudgeRequest"]


@dataclass(frozen=True)
class JudgeRequest:
    """One structured question to a model.

    The reply is one JSON object described by ``schema``; the pool chooses how to
    ask for it (native JSON Schema, JSON mode or plain text) per provider and model.
    """

    system: str
    """The system prompt."""
    user: str
    """The user message."""
    schema: dict[str, JsonValue]
    """A JSON Schema of the reply object (``"type": "object"`` with ``properties``)."""
    schema_name: str
    """A short name of the schema (OpenAI's ``json_schema.name``, Anthropic's tool name)."""
    model: str
    """The model; for ``azure_openai`` the deployment name."""
    max_tokens: int = 512
    """The most tokens the reply may take; a reply cut there is an error, never parsed."""
    temperature: float = 0.0
    """Sampling temperature (not sent to Anthropic, whose SDK has no such parameter)."""

    def __post_init__(self) -> None:
        if not isinstance(self.schema, dict):
            raise TypeError(
                f"schema must be a dict (a JSON Schema), not {type(self.schema).__name__}"
            )
        if (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens < 1
        ):
            raise ValueError(f"max_tokens must be a positive integer, not {self.max_tokens!r}")
        if not self.model:
            raise ValueError("model must not be empty")


@dataclass(frozen=True)
class JudgeCall:
    """The outcome of one judged request, after the structured-output ladder and retries.

    A failed call is a value, not an exception: ``error`` says why in one line and
    ``raw`` keeps whatever reply text came back, so nothing is guessed.
    """

    data: dict[str, JsonValue] | None
    """The reply object, validated against the schema; ``None`` on error."""
    error: str | None
    """Why the call failed, in one line; ``None`` when it succeeded."""
    raw: str | None
    """The last reply text (a tool call's input as JSON); ``None`` when no reply came."""
    provider: str
    """The provider's configured name."""
    provider_type: str
    """``openai``, ``azure_openai``, ``anthropic`` or ``content_safety``."""
    model: str
    """The model (deployment) asked."""
    mode: str
    """The structured mode of the last exchange: ``json_schema``, ``json_object`` or ``text``."""
    input_tokens: int
    """Input tokens over every reply that reported usage (re-ask included)."""
    output_tokens: int
    """Output tokens over every reply that reported usage (re-ask included)."""
    latency_ms: float
    """Wall time of the whole call: limiter waits, retries, backoff and re-ask included."""
    retries: int
    """Requests sent again after a transient failure (429, 5xx, timeout, connection)."""
    finish_reason: str | None
    """The last reply's finish reason in OpenAI's words (``stop``, ``length``,
    ``content_filter``, ``tool_calls``); ``None`` when no reply came."""
    cost_usd: float | None
    """The price of the tokens, when the provider has ``prices``."""
    requests: int = 0
    """Requests sent to the provider: the first, its retries, a re-ask and a step
    down the structured-output ladder each count one."""

    @property
    def ok(self) -> bool:
        """Whether the call produced a valid reply object."""
        return self.error is None
