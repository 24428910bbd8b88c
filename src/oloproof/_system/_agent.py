"""An agent's tools: declared with ``@tool`` on the ``@agent_system`` class.

A tool is a method the agent calls through the ``tools`` object Oloproof hands its
``run``. Each tool has a name (the method's, unless given), a version, and may
declare a pydantic model of its own parameters, whose values ``oloproof.yaml``
sets (``system.agent.tools.<name>``) and which the method receives as ``params``.
A context tool returns passages (``Passage`` objects, each with its text): what
it returns is the agent's retrieved context, which evaluators and diagnosis read.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from oloproof._limits import MAX_NAME

__all__ = ["TOOL_ATTRIBUTE", "AgentTool", "ToolDeclaration", "declared_tools", "tool"]

TOOL_ATTRIBUTE = "__oloproof_tool__"

F = TypeVar("F", bound=Callable[..., Any])


class ToolDeclaration(BaseModel):
    """What ``@tool`` records on a method."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=MAX_NAME, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The tool's name as the agent calls it; the method's name when ``None``."""

    version: str = Field(default="1", min_length=1, max_length=MAX_NAME)
    """The tool's version: every call's identity (change it when the tool's code changes)."""

    context: bool = False
    """Whether the tool retrieves context: it returns passages, which are the agent's
    retrieved context, replaced by the gold passages under diagnosis."""

    parameters: type[BaseModel] | None = None
    """The model of the tool's own parameters, passed to the method as ``params``."""


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(
    *, name: str | None = None, version: str = "1", context: bool = False, parameters: type[BaseModel] | None = None
) -> Callable[[F], F]: ...


def tool(
    fn: F | None = None,
    /,
    *,
    name: str | None = None,
    version: str = "1",
    context: bool = False,
    parameters: type[BaseModel] | None = None,
) -> F | Callable[[F], F]:
    """Declare a method of an ``@agent_system`` class as one of its tools.

    Used bare (``@tool``) or with settings (``@tool(version="2", context=True)``).
    The agent calls it with keyword arguments (``tools.search_kb(query="...")``),
    which must be JSON values: they are the call's identity. A tool that names a
    ``parameters`` model is called ``method(**arguments, params=params)``.

    Args:
        fn: The method, when used bare.
        name: The tool's name; the method's own by default.
        version: The tool's version (every call's identity).
        context: Whether the tool retrieves context (returns ``Passage`` objects).
        parameters: A pydantic model of the tool's own parameters.

    Returns:
        The method, unchanged but for the declaration it carries.

    Raises:
        pydantic.ValidationError: A setting's value is invalid.
    """
    declaration = ToolDeclaration(name=name, version=version, context=context, parameters=parameters)

    def decorate(method: F) -> F:
        if not callable(method):
            raise TypeError("@tool decorates a method of an @agent_system class")
        setattr(method, TOOL_ATTRIBUTE, declaration)
        return method

    return decorate(fn) if fn is not None else decorate


@dataclass(frozen=True)
class AgentTool:
    """One resolved tool of an agent instance."""

    name: str
    """The name the agent calls it by."""
    version: str
    """Its version."""
    context: bool
    """Whether it is a context tool."""
    method: Callable[..., Any]
    """The bound method."""
    params: BaseModel | None = None
    """Its declared parameters with the file's values, or ``None``."""

    @property
    def is_async(self) -> bool:
        """Whether the method is ``async def``."""
        return inspect.iscoroutinefunction(self.method)

    def spec(self) -> dict[str, JsonValue]:
        """What the tool contributes to identities: version, kind and parameters."""
        return {
            "version": self.version,
            "context": self.context,
            "parameters": None if self.params is None else self.params.model_dump(mode="json"),
        }

    def arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments by parameter name, defaults filled in, as the identity has them.

        Raises:
            TypeError: The method cannot take them, or they name ``params``.
        """
        if "params" in kwargs:
            raise TypeError(f"tool {self.name!r}: params are Oloproof's to pass, not the agent's")
        try:
            signature = inspect.signature(self.method)
        except (TypeError, ValueError):  # a builtin: keyword arguments as they are
            if args:
                raise TypeError(f"tool {self.name!r} takes keyword arguments only") from None
            return dict(kwargs)
        if self.params is not None:
            signature = signature.replace(parameters=[p for n, p in signature.parameters.items() if n != "params"])
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"tool {self.name!r}: {error}") from None
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        for name, parameter in signature.parameters.items():
            if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
                raise TypeError(f"tool {self.name!r} is called with named arguments: {name!r} is positional-only")
            if parameter.kind is inspect.Parameter.VAR_POSITIONAL and arguments.pop(name, ()):
                raise TypeError(f"tool {self.name!r} is called with named arguments, not *{name}")
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                arguments.update(arguments.pop(name, {}))
        return arguments


def declared_tools(cls: type) -> dict[str, tuple[str, ToolDeclaration]]:
    """The tools an agent class declares: ``{tool name: (attribute, declaration)}``.

    Raises:
        ValueError: Two methods declare the same tool name.
    """
    found: dict[str, tuple[str, ToolDeclaration]] = {}
    for attribute, value in inspect.getmembers(cls):
        declaration = getattr(value, TOOL_ATTRIBUTE, None)
        if not isinstance(declaration, ToolDeclaration):
            continue
        name = declaration.name or attribute
        if name in found:
            raise ValueError(f"two methods declare the tool {name!r}: {found[name][0]} and {attribute}")
        found[name] = (attribute, declaration)
    return dict(sorted(found.items()))
