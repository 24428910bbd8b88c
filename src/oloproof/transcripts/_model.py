"""The typed transcript of an agent: messages in order, with their tool calls and results."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, JsonValue, model_validator

__all__ = ["Frozen", "Message", "Role", "ToolCall", "ToolResult", "Transcript"]

Role = Literal["system", "developer", "user", "assistant", "tool"]
"""Who wrote a message; the results of tool calls are always in ``tool`` messages."""


class Frozen(BaseModel):
    """The base of the package's models: frozen, unknown fields refused."""

    model_config = ConfigDict(use_attribute_docstrings=True, frozen=True, extra="forbid")


class ToolCall(Frozen):
    """One call of a tool, as the model asked for it."""

    name: str
    """The tool's name, e.g. ``file_search``."""

    id: str
    """The call's id, which its result names."""

    arguments: dict[str, JsonValue]
    """The call's arguments, a parsed JSON object."""


class ToolResult(Frozen):
    """What one tool call returned."""

    call_id: str
    """The id of the call this result answers; always an earlier call of the transcript."""

    content: JsonValue
    """The result as given: text stays a string (never decoded here), structured results stay JSON."""

    is_error: bool = False
    """Whether the tool reported a failure instead of a result (Anthropic's ``is_error``):
    a context tool's failed call retrieved nothing."""


class Message(Frozen):
    """One message of a transcript."""

    role: Role
    """Who wrote the message."""

    texts: tuple[str, ...] = ()
    """The message's text parts, in order."""

    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls the message makes (assistant messages only)."""

    tool_results: tuple[ToolResult, ...] = ()
    """The tool results the message carries (``tool`` messages only, one result each)."""


class Transcript(Frozen):
    """An agent's conversation, read from any of the supported formats."""

    messages: tuple[Message, ...]
    """The messages in order."""

    def calls(self) -> list[tuple[ToolCall, ToolResult | None]]:
        """Every tool call in order, with its result (``None`` when it has none)."""
        results = {result.call_id: result for message in self.messages for result in message.tool_results}
        return [(call, results.get(call.id)) for message in self.messages for call in message.tool_calls]

    @model_validator(mode="after")
    def _calls_and_results_pair(self) -> Self:
        # The readers check this with paths into their input; this keeps a transcript built
        # by hand just as consistent, so extraction never meets a result without its call.
        calls: set[str] = set()
        answered: set[str] = set()
        for index, message in enumerate(self.messages):
            if message.tool_calls and message.role != "assistant":
                raise ValueError(f"messages[{index}]: only assistant messages make tool calls")
            if message.tool_results and message.role != "tool":
                raise ValueError(f"messages[{index}]: only tool messages carry tool results")
            for call in message.tool_calls:
                if call.id in calls:
                    raise ValueError(f"messages[{index}]: call id '{call.id}' is already an earlier call's")
                calls.add(call.id)
            for result in message.tool_results:
                if result.call_id not in calls or result.call_id in answered:
                    raise ValueError(f"messages[{index}]: result for '{result.call_id}' answers no earlier"
                                     " unanswered call")
                answered.add(result.call_id)
        return self
