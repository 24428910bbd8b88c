"""The ``@rag_system`` and ``@system`` decorators.

They only attach declared settings to the user's object; nothing runs at import
time, and ``oloproof.yaml`` may override every setting. Their parameters are the
fields of :class:`NameAndVersion` (and, for ``@rag_system``, :class:`RagParameters`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from oloproof._system._settings import NameAndVersion, RagParameters

__all__ = ["DECLARATION_ATTRIBUTE", "SystemDeclaration", "rag_system", "system"]

DECLARATION_ATTRIBUTE = "__oloproof_system__"

T = TypeVar("T")


class SystemDeclaration(RagParameters, NameAndVersion):
    """Settings declared in code by a decorator; ``None`` means not declared."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["rag", "plain"]
    """``rag`` for a class with ``retrieve``/``generate``, ``plain`` for a function."""


def _signature(*models: type[BaseModel]) -> inspect.Signature:
    """A signature with one parameter per field of ``models``, in their order."""
    return inspect.Signature(
        [
            inspect.Parameter(
                name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=field.default,
                annotation=field.annotation,
            )
            for model in models
            for name, field in model.model_fields.items()
        ]
    )


_RAG_SIGNATURE = _signature(NameAndVersion, RagParameters)
_PLAIN_SIGNATURE = _signature(NameAndVersion)


def _declare(
    kind: Literal["rag", "plain"],
    signature: inspect.Signature,
    decorator: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> SystemDeclaration:
    """Bind a decorator's arguments to its settings and validate them.

    Wrong arguments are worded as Python words them for a function with the
    settings as its parameters.

    Raises:
        TypeError: More positional arguments than settings, an unknown setting,
            or one given twice.
        pydantic.ValidationError: A setting's value is invalid.
    """
    names = list(signature.parameters)
    if len(args) > len(names):
        raise TypeError(
            f"{decorator}() takes from 0 to {len(names)} positional arguments but {len(args)} were given"
        )
    settings = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in signature.parameters:
            raise TypeError(f"{decorator}() got an unexpected keyword argument {name!r}")
        if name in settings:
            raise TypeError(f"{decorator}() got multiple values for argument {name!r}")
        settings[name] = value
    return SystemDeclaration(kind=kind, **settings)


def rag_system(*args: Any, **kwargs: Any) -> Callable[[type[T]], type[T]]:
    """Declare a class as a staged RAG system.

    The class must define ``retrieve(input, depth) -> Retrieval`` and
    ``generate(input, context) -> output``; with a token budget also
    ``count_tokens(passage) -> int``. Methods may be ``async def``.

    Args:
        *args: Settings by position, in the order of ``**kwargs``.
        **kwargs: Settings by name: ``name`` and ``version`` (the fields of
            ``NameAndVersion``), then the fields of ``RagParameters`` (``depth``,
            ``top_k``, ``token_budget``, ``index_version``, ...). Each defaults
            to ``None``, not declared.

    Returns:
        A class decorator that records the settings and returns the class unchanged.

    Raises:
        TypeError: An unknown setting, one given twice, or too many positional arguments.
        pydantic.ValidationError: A setting's value is invalid.
    """
    declaration = _declare("rag", _RAG_SIGNATURE, "rag_system", args, kwargs)

    def decorate(cls: type[T]) -> type[T]:
        if not isinstance(cls, type):
            raise TypeError("@rag_system decorates a class with retrieve() and generate()")
        setattr(cls, DECLARATION_ATTRIBUTE, declaration)
        return cls

    return decorate


def system(*args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a plain function ``input -> output`` (sync or async) as a system.

    Args:
        *args: Settings by position, in the order of ``**kwargs``.
        **kwargs: ``name`` and ``version`` (the fields of ``NameAndVersion``),
            each defaulting to ``None``, not declared.

    Returns:
        A decorator that records the settings and returns the function unchanged.

    Raises:
        TypeError: An unknown setting, one given twice, or too many positional arguments.
        pydantic.ValidationError: A setting's value is invalid.
    """
    declaration = _declare("plain", _PLAIN_SIGNATURE, "system", args, kwargs)

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(fn):
            raise TypeError("@system decorates a function input -> output")
        setattr(fn, DECLARATION_ATTRIBUTE, declaration)
        return fn

    return decorate


# help() and inspect show the settings as the decorators' parameters.
setattr(rag_system, "__signature__", _RAG_SIGNATURE)
setattr(system, "__signature__", _PLAIN_SIGNATURE)
