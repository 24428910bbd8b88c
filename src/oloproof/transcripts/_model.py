"""The typed transcript of an agent: messages in order, with their tool calls and results."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

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
