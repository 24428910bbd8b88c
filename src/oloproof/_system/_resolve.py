"""Turn ``system:`` settings and a decorated object into a runnable system.

Settings in ``oloproof.yaml`` (and ``--set``) override the decorator's.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from oloproof._exceptions import ConfigError
from oloproof._system._decorators import DECLARATION_ATTRIBUTE, SystemDeclaration
from oloproof.config._load import Project
from oloproof.config._project import RagSettings

__all__ = [
    "SystemConfig",
    "SystemHandle",
    "import_callable",
    "import_object",
    "resolve_system",
]


class SystemConfig(BaseModel):
    """The effective configuration of the system under evaluation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["rag", "plain"]
    """``rag`` (staged) or ``plain`` (one function)."""

    object: str
    """``module:attribute`` the system was imported from."""

    name: str
    """The system's name."""

    version: str
    """The system's version."""

    depth: int | None = None
    """Candidates asked of ``retrieve`` (RAG only)."""

    top_k: int | None = None
    """Candidates offered to the context (RAG only)."""

    token_budget: int | None = None
    """Token budget of the context, or ``None`` for no budget (RAG only)."""

    index_version: str | None = None
    """Version of the index (RAG only)."""

    retriever_version: str | None = None
    """Optional version of the retriever code (RAG only)."""


@dataclass(frozen=True)
class SystemHandle:
    """The live system: its configuration and the callables to run."""

    config: SystemConfig
    target: Any
    """The instance (RAG) or the function (plain)."""

    @property
    def retrieve(self) -> Any:
        return self.target.retrieve

    @property
    def generate(self) -> Any:
        return self.target.generate if self.config.kind == "rag" else self.target

    @property
    def count_tokens(self) -> Any:
        return getattr(self.target, "count_tokens", None)


def import_object(spec: str, *, project: Project, location: tuple[str, ...]) -> Any:
    """Import ``module:attribute`` with the project folder first on ``sys.path``."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise project.error(f"expected module:attribute, got {spec!r}", location)
    directory = str(project.directory)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module may raise anything on import
        raise project.error(
            f"cannot import {module_name!r}: {type(exc).__name__}: {exc}", location
        ) from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise project.error(f"module {module_name!r} has no attribute {attribute!r}", location)
        target = getattr(target, part)
    return target


def resolve_system(project: Project) -> SystemHandle:
    """Import the configured system and merge its declared settings with the file's.

    Raises:
        ConfigError: The object cannot be imported, a required setting is missing,
            or the object lacks a method its settings need.
    """
    settings = project.config.system
    if settings.rag is not None:
        return _resolve_rag(project, settings.rag)
    if settings.object is None:
        raise project.error("expected system.rag.object or system.object", ("system",))
    target = import_object(settings.object, project=project, location=("system", "object"))
    declared = _declaration(target) or SystemDeclaration(kind="plain")
    if not callable(target) or inspect.isclass(target):
        raise project.error("system.object must be a function input -> output", ("system", "object"))
    config = SystemConfig(
        kind="plain",
        object=settings.object,
        name=_required(settings.name or declared.name, project, ("system", "name")),
        version=_required(settings.version or declared.version, project, ("system", "version")),
    )
    return SystemHandle(config=config, target=target)


def _resolve_rag(project: Project, rag: RagSettings) -> SystemHandle:
    settings = project.config.system
    location = ("system", "rag", "object")
    if rag.object is None:
        raise project.error("required field is missing", location)
    target = import_object(rag.object, project=project, location=location)
    declared = _declaration(target) or SystemDeclaration(kind="rag")
    instance = target() if inspect.isclass(target) else target
    for method in ("retrieve", "generate"):
        if not callable(getattr(instance, method, None)):
            raise project.error(f"{rag.object} has no {method}() method", location)

    def pick(name: str) -> Any:
        value = getattr(rag, name)
        return value if value is not None else getattr(declared, name)

    config = SystemConfig(
        kind="rag",
        object=rag.object,
        name=_required(settings.name or declared.name, project, ("system", "name")),
        version=_required(settings.version or declared.version, project, ("system", "version")),
        depth=_required(pick("depth"), project, ("system", "rag", "depth")),
        top_k=_required(pick("top_k"), project, ("system", "rag", "top_k")),
        token_budget=pick("token_budget"),
        index_version=_required(pick("index_version"), project, ("system", "rag", "index_version")),
        retriever_version=pick("retriever_version"),
    )
    if config.top_k is not None and config.depth is not None and config.top_k > config.depth:
        raise project.error(
            f"top_k ({config.top_k}) cannot exceed depth ({config.depth})", ("system", "rag", "top_k")
        )
    if config.token_budget is not None and not callable(getattr(instance, "count_tokens", None)):
        raise project.error(
            "a token_budget needs a count_tokens(passage) method on the system "
            "(Oloproof never estimates tokens)",
            ("system", "rag", "token_budget"),
        )
    return SystemHandle(config=config, target=instance)


def _declaration(target: Any) -> SystemDeclaration | None:
    declared = getattr(target, DECLARATION_ATTRIBUTE, None)
    if declared is None and not inspect.isclass(target):
        declared = getattr(type(target), DECLARATION_ATTRIBUTE, None)
    return declared if isinstance(declared, SystemDeclaration) else None


def _required(value: Any, project: Project, location: tuple[str, ...]) -> Any:
    if value is None:
        raise project.error(
            "required: set it in oloproof.yaml or in the system's decorator", location
        )
    return value


def import_callable(spec: str, *, project_dir: Any, option: str) -> Any:
    """Import a ``module:function`` named on the command line (e.g. ``--reranker``)."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"expected module:function, got {spec!r}", path=option)
    directory = str(project_dir)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # the user's module may raise anything on import
        raise ConfigError(f"cannot import {module_name!r}: {type(exc).__name__}: {exc}", path=option) from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ConfigError(f"module {module_name!r} has no attribute {attribute!r}", path=option)
        target = getattr(target, part)
    if not callable(target):
        raise ConfigError(f"{spec} is not callable", path=option)
    return target
