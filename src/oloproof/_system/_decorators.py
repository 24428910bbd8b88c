"""The ``@rag_system``, ``@agent_system`` and ``@system`` decorators.

They only attach declared settings to the user's object; nothing runs at import
time, and ``oloproof.yaml`` may override every setting. Their parameters are the
fields of `NameAndVersion` (and, for ``@rag_system``, `RagParameters`), plus the
pydantic models of the system's own parameters (``retriever``, ``generator``):
those declare the parameters' names, types and defaults; their values are set in
``oloproof.yaml`` (``system.rag.retriever``) or with ``--set``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from oloproof.config._settings import NameAndVersion, RagParameters

__all__ = ["DECLARATION_ATTRIBUTE", "SystemDeclaration", "agent_system", "rag_system", "system"]

DECLARATION_ATTRIBUTE = "__oloproof_system__"

T = TypeVar("T")


class SystemDeclaration(RagParameters, NameAndVersion):
    """Settings declared in code by a decorator; ``None`` means not declared."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["rag", "plain", "agent"]
    """``rag`` for a class with ``retrieve``/``generate``, ``agent`` for a class with
    ``run(input, tools)``, ``plain`` for a function."""

    retriever: type[BaseModel] | None = None
    """The model of the retriever's own parameters (retrieval identity), or ``None``."""

    generator: type[BaseModel] | None = None
    """The model of the generator's own parameters (generation identity); for a plain
    system, the function's; for an agent, its ``run``'s. ``None`` when not declared."""


def rag_system(
    name: str | None = None,
    version: str | None = None,
    depth: int | None = None,
    top_k: int | None = None,
    token_budget: int | None = None,
    index_version: str | None = None,
    retriever_version: str | None = None,
    *,
    retriever: type[BaseModel] | None = None,
    generator: type[BaseModel] | None = None,
) -> Callable[[type[T]], type[T]]:
    """Declare a class as a staged RAG system.

    The class must define ``retrieve(input, depth) -> Retrieval`` and
    ``generate(input, context) -> output``; with a token budget also
    ``count_tokens(passage) -> int``. Methods may be ``async def``. A system that
    names a ``retriever`` model is called ``retrieve(input, depth, params)``, one that
    names a ``generator`` model ``generate(input, context, params)``, ``params``
    being an instance of that model with the values of ``oloproof.yaml``.

    The parameters are spelled out for editors and type checkers; their meaning,
    types and constraints are `NameAndVersion`'s and `RagParameters`' fields
    (a test holds the two lists equal).

    Args:
        name: The system's name.
        version: The system's version (generation identity).
        depth: How many candidates to retrieve (retrieval identity).
        top_k: How many of the first candidates may enter the context.
        token_budget: The most tokens the context may hold, or ``None``.
        index_version: The version of the index (retrieval identity).
        retriever_version: An optional version of the retriever code (retrieval identity).
        retriever: A pydantic model of the retriever's own parameters (retrieval identity).
        generator: A pydantic model of the generator's own parameters (generation identity).

    Returns:
        A class decorator that records the settings and returns the class unchanged.

    Raises:
        pydantic.ValidationError: A setting's value is invalid.
    """
    declaration = SystemDeclaration(
        kind="rag", name=name, version=version, depth=depth, top_k=top_k, token_budget=token_budget,
        index_version=index_version, retriever_version=retriever_version, retriever=retriever,
        generator=generator,
    )

    def decorate(cls: type[T]) -> type[T]:
        if not isinstance(cls, type):
            raise TypeError("@rag_system decorates a class with retrieve() and generate()")
        setattr(cls, DECLARATION_ATTRIBUTE, declaration)
        return cls

    return decorate


def agent_system(
    name: str | None = None,
    version: str | None = None,
    index_version: str | None = None,
    *,
    generator: type[BaseModel] | None = None,
) -> Callable[[type[T]], type[T]]:
    """Declare a class as an agent: ``run(input, tools) -> output`` calling its tools.

    Its tools are its methods decorated with ``@tool``; Oloproof hands ``run`` a
    ``tools`` object whose attributes call them (``tools.search_kb(query=...)``),
    each call a cached stage of its own, and records the transcript. An agent
    that names a ``generator`` model is called ``run(input, tools, params)``.
    ``run`` and the tools may be ``async def``.

    Args:
        name: The system's name.
        version: The agent's version (its runs' identity, e.g. a prompt version).
        index_version: The version of the index its tools read (every tool call's identity).
        generator: A pydantic model of ``run``'s own parameters (the run's identity).

    Returns:
        A class decorator that records the settings and returns the class unchanged.

    Raises:
        pydantic.ValidationError: A setting's value is invalid.
    """
    declaration = SystemDeclaration(kind="agent", name=name, version=version, index_version=index_version,
                                    generator=generator)  # fmt: skip

    def decorate(cls: type[T]) -> type[T]:
        if not isinstance(cls, type):
            raise TypeError("@agent_system decorates a class with run(input, tools)")
        setattr(cls, DECLARATION_ATTRIBUTE, declaration)
        return cls

    return decorate


def system(
    name: str | None = None, version: str | None = None, *, generator: type[BaseModel] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a plain function ``input -> output`` (sync or async) as a system.

    A plain system is its own generator: one that names a ``generator`` model is
    called ``function(input, params)``.

    Args:
        name: The system's name (`NameAndVersion`).
        version: The system's version (`NameAndVersion`).
        generator: A pydantic model of the function's own parameters (generation identity).

    Returns:
        A decorator that records the settings and returns the function unchanged.

    Raises:
        pydantic.ValidationError: A setting's value is invalid.
    """
    declaration = SystemDeclaration(kind="plain", name=name, version=version, generator=generator)

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(fn):
            raise TypeError("@system decorates a function input -> output")
        setattr(fn, DECLARATION_ATTRIBUTE, declaration)
        return fn

    return decorate
