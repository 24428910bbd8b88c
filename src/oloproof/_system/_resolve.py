"""Turn ``system:`` settings and a decorated object into a runnable system.

Settings in ``oloproof.yaml`` (and ``--set``) override the decorator's.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, JsonValue

from oloproof._exceptions import ConfigError
from oloproof._system._agent import AgentTool, declared_tools
from oloproof._system._decorators import DECLARATION_ATTRIBUTE, SystemDeclaration
from oloproof._system._parameters import check_takes_parameters, resolve_parameters
from oloproof._system._toolbox import Tools
from oloproof.config._load import Project
from oloproof.config._project import AgentSettings, RagSettings
from oloproof.config._settings import NameAndVersion, RagParameters, SystemConfig, is_required, setting_paths
from oloproof.transcripts import FILE_SEARCH

__all__ = [
    "SystemConfig",
    "SystemHandle",
    "import_callable",
    "import_object",
    "recorded_system",
    "resolve_system",
]


@dataclass(frozen=True)
class SystemHandle:
    """The live system: its configuration and the callables to run."""

    config: SystemConfig
    target: Any
    """The instance (RAG) or the function (plain)."""

    retriever_params: BaseModel | None = None
    """The retriever's declared parameters: ``retrieve``'s third argument when set."""

    generator_params: BaseModel | None = None
    """The generator's (or plain function's, or agent's ``run``) declared parameters:
    its last argument when set."""

    tools: dict[str, AgentTool] = field(default_factory=dict)
    """An agent's tools by name (empty for other systems)."""

    @property
    def retrieve(self) -> Any:
        return self.target.retrieve

    @property
    def generate(self) -> Any:
        """What the generate stage calls: ``generate``, a plain function, or an agent's ``run``."""
        kind = self.config.kind
        return self.target.generate if kind == "rag" else self.target.run if kind == "agent" else self.target

    @property
    def context_tools(self) -> tuple[str, ...]:
        """The names of an agent's context tools, in name order."""
        return tuple(name for name, tool in self.tools.items() if tool.context)

    @property
    def count_tokens(self) -> Any:
        return getattr(self.target, "count_tokens", None)


def _import(spec: str, project_dir: Any, what: str = "attribute") -> Any:
    """Import ``module:attribute`` with ``project_dir`` first on ``sys.path``.

    Raises:
        ValueError: With a message saying what could not be imported.
    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"expected module:{what}, got {spec!r}")
    directory = str(Path(project_dir).resolve())
    if directory not in sys.path:
        sys.path.insert(0, directory)
    _forget_foreign(module_name, directory)
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - the user's module may raise anything on import
        first_line = (str(exc).strip().splitlines() or [""])[0]
        raise ValueError(f"cannot import {module_name!r}: {type(exc).__name__}: {first_line}") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"module {module_name!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    return target


def _forget_foreign(module_name: str, directory: str) -> None:
    # Two projects may both have an ``app.py``: a module imported from another
    # project's folder must not stand in for this one's.
    top = module_name.split(".")[0]
    loaded = sys.modules.get(top)
    origin = getattr(loaded, "__file__", None)
    if loaded is None or origin is None or Path(origin).resolve().is_relative_to(directory):
        return
    if not (Path(directory) / top).exists() and not (Path(directory) / f"{top}.py").exists():
        return  # not a project module (an installed package): keep it
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]
    if directory in sys.path:
        sys.path.remove(directory)
    sys.path.insert(0, directory)


def import_object(spec: str, *, project: Project, location: tuple[str, ...]) -> Any:
    """Import ``module:attribute`` named in ``oloproof.yaml``, relative to the project."""
    try:
        return _import(spec, project.directory)
    except ValueError as exc:
        raise project.error(str(exc), location) from None


def resolve_system(project: Project) -> SystemHandle:
    """Import the configured system and merge its declared settings with the file's.

    Raises:
        ConfigError: The object cannot be imported, a required setting is missing,
            or the object lacks a method its settings need.
    """
    settings = project.config.system
    if settings is None:
        return recorded_system(project)
    if settings.rag is not None and settings.agent is not None:
        raise project.error("a system is staged (system.rag) or an agent (system.agent), not both",
                            ("system", "agent"))  # fmt: skip
    if settings.rag is not None:
        return _resolve_rag(project, settings.rag)
    if settings.agent is not None:
        return _resolve_agent(project, settings.agent)
    if settings.object is None:
        raise project.error("expected system.rag.object or system.object", ("system",))
    target = import_object(settings.object, project=project, location=("system", "object"))
    if not callable(target) or inspect.isclass(target):
        raise project.error("system.object must be a function input -> output", ("system", "object"))
    declared = _declaration(target)
    if declared is None:
        # Any importable callable would otherwise run with each case's input (os:system).
        raise project.error(f"{settings.object} is not declared as a system: decorate it with "
                            "@oloproof.system(name=..., version=...)", ("system", "object"))  # fmt: skip
    generator = resolve_parameters(project, declared.generator, settings.generator, ("system", "generator"),
                                   settings.object)  # fmt: skip
    if generator is not None:
        check_takes_parameters(project, target, f"{settings.object}(input, params)", ("system", "generator"))
    config = SystemConfig.model_validate({"kind": "plain", "object": settings.object,
                                          **_merged(project, declared, None), "generator": _json(generator)})
    return SystemHandle(config=config, target=target, generator_params=generator)


def _resolve_rag(project: Project, rag: RagSettings) -> SystemHandle:
    location = ("system", "rag", "object")
    if rag.object is None:
        raise project.error("required field is missing", location)
    target = import_object(rag.object, project=project, location=location)
    declared = _declaration(target) or SystemDeclaration(kind="rag")
    try:
        instance: Any = target() if inspect.isclass(target) else target
    except Exception as exc:  # noqa: BLE001 - a constructor may need a key or an index that is missing
        first_line = (str(exc).strip().splitlines() or [""])[0]
        raise project.error(
            f"{rag.object}() raised {type(exc).__name__}: {first_line}", location
        ) from None
    for method in ("retrieve", "generate"):
        if not callable(getattr(instance, method, None)):
            raise project.error(f"{rag.object} has no {method}() method", location)
    if project.config.system is not None and project.config.system.generator is not None:
        raise project.error("a staged system's generator parameters go under system.rag.generator",
                            ("system", "generator"))  # fmt: skip
    retriever = resolve_parameters(project, declared.retriever, rag.retriever, ("system", "rag", "retriever"),
                                   rag.object)  # fmt: skip
    generator = resolve_parameters(project, declared.generator, rag.generator, ("system", "rag", "generator"),
                                   rag.object)  # fmt: skip
    if retriever is not None:
        check_takes_parameters(project, instance.retrieve, f"{rag.object}.retrieve(input, depth, params)",
                               ("system", "rag", "retriever"))  # fmt: skip
    if generator is not None:
        check_takes_parameters(project, instance.generate, f"{rag.object}.generate(input, context, params)",
                               ("system", "rag", "generator"))  # fmt: skip
    config = SystemConfig.model_validate({"kind": "rag", "object": rag.object, **_merged(project, declared, rag),
                                          "retriever": _json(retriever), "generator": _json(generator)})
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
    return SystemHandle(config=config, target=instance, retriever_params=retriever, generator_params=generator)


def _instance(project: Project, spec: str, location: tuple[str, ...]) -> tuple[Any, Any]:
    """The imported target and an instance of it (a class is instantiated)."""
    target = import_object(spec, project=project, location=location)
    try:
        return target, (target() if inspect.isclass(target) else target)
    except Exception as exc:  # noqa: BLE001 - a constructor may need a key or an index that is missing
        first_line = (str(exc).strip().splitlines() or [""])[0]
        raise project.error(f"{spec}() raised {type(exc).__name__}: {first_line}", location) from None


def _resolve_agent(project: Project, agent: AgentSettings) -> SystemHandle:
    location = ("system", "agent", "object")
    if agent.object is None:
        raise project.error("required field is missing", location)
    target, instance = _instance(project, agent.object, location)
    declared = _declaration(target)
    if declared is None or declared.kind != "agent":
        raise project.error(f"{agent.object} is not declared as an agent: decorate its class with "
                            "@oloproof.agent_system(name=..., version=...)", location)  # fmt: skip
    if not callable(getattr(instance, "run", None)):
        raise project.error(f"{agent.object} has no run(input, tools) method", location)
    if project.config.system is not None and project.config.system.generator is not None:
        raise project.error("an agent's run parameters go under system.agent.generator", ("system", "generator"))
    generator = resolve_parameters(project, declared.generator, agent.generator, ("system", "agent", "generator"),
                                   agent.object)  # fmt: skip
    if generator is not None:
        check_takes_parameters(project, instance.run, f"{agent.object}.run(input, tools, params)",
                               ("system", "agent", "generator"))  # fmt: skip
    elif not _takes(instance.run, 2):
        raise project.error(f"{agent.object}.run(input, tools) is how an agent is called; "
                            "it does not take those arguments", location)  # fmt: skip
    tools = _agent_tools(project, agent, instance, type(instance))
    waiting = [name for name, tool in tools.items() if tool.is_async]
    if waiting and not inspect.iscoroutinefunction(instance.run):
        # A synchronous run would be handed a coroutine it has no way to await.
        raise project.error(f"{agent.object}.run is synchronous and cannot await the async tool {waiting[0]!r}: "
                            "make run `async def`, or the tool a plain def", location)  # fmt: skip
    values = _merged_agent(project, declared, agent)
    config = SystemConfig.model_validate({"kind": "agent", "object": agent.object, **values,
                                          "generator": _json(generator),
                                          "tools": {name: tool.spec() for name, tool in tools.items()}})  # fmt: skip
    return SystemHandle(config=config, target=instance, generator_params=generator, tools=tools)


def _agent_tools(project: Project, agent: AgentSettings, instance: Any, cls: type) -> dict[str, AgentTool]:
    location = ("system", "agent", "tools")
    try:
        declared = declared_tools(cls)
    except ValueError as exc:
        raise project.error(str(exc), ("system", "agent", "object")) from None
    if FILE_SEARCH in declared:
        # Transcripts read every file_search result as the vendor's own retrieval's (file ids,
        # filenames, no doc_id), never as this tool's passages: the two would be confused.
        raise project.error(f"{agent.object}.{declared[FILE_SEARCH][0]} declares the tool name {FILE_SEARCH!r}, "
                            "the vendor's retrieval tool, whose results have another shape: "
                            "name it otherwise with @tool(name=...)", ("system", "agent", "object"))  # fmt: skip
    for name, (attribute, _) in declared.items():
        if name in _TOOLS_OWN:
            raise project.error(f"{agent.object}.{attribute} declares the tool name {name!r}, which the tools "
                                f"object handed to run has for itself (tools.{name}): name it otherwise "
                                "with @tool(name=...)", ("system", "agent", "object"))  # fmt: skip
    for name in agent.tools or {}:
        if name not in declared:
            known = ", ".join(declared) or "none"
            raise project.error(f"{agent.object} declares no tool {name!r} (declared: {known})", (*location, name))
    tools: dict[str, AgentTool] = {}
    for name, (attribute, declaration) in declared.items():
        values = (agent.tools or {}).get(name)
        if declaration.parameters is None and values is not None:
            raise project.error(f"the tool {name!r} declares no parameters: name their model in "
                                "@tool(parameters=...)", (*location, name))  # fmt: skip
        params = resolve_parameters(project, declaration.parameters, values,
                                    (*location, name), f"{agent.object}.{attribute}")  # fmt: skip
        tools[name] = AgentTool(name=name, version=declaration.version, context=declaration.context,
                                method=getattr(instance, attribute), params=params)  # fmt: skip
    return tools


_TOOLS_OWN = frozenset(name for name in dir(Tools) if not name.startswith("_"))
"""The attributes of the ``tools`` object that are its own (``call``, ``names``, ``forced``):
a tool of one of these names could never be called as ``tools.<name>(...)``."""


def _takes(method: Any, count: int) -> bool:
    """Whether ``method`` can be called with ``count`` positional arguments (a builtin: yes)."""
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(*range(count))
    except TypeError:
        return False
    return True


def _merged_agent(project: Project, declared: SystemDeclaration, agent: AgentSettings) -> dict[str, Any]:
    """Name, version and ``index_version`` from the file (or ``--set``), else the decorator."""
    system = project.config.system
    values: dict[str, Any] = {name: getattr(system, name) or getattr(declared, name) for name in NameAndVersion.model_fields}
    values["index_version"] = agent.index_version or declared.index_version
    paths = {**setting_paths(), "index_version": ("system", "agent", "index_version")}
    for name in ("name", "version", "index_version"):
        if values[name] is None:
            raise project.error("required: set it in oloproof.yaml or in the system's decorator", paths[name])
    return values


def _json(parameters: BaseModel | None) -> dict[str, JsonValue] | None:
    return None if parameters is None else parameters.model_dump(mode="json")


RECORDED_VERSION = "recorded"
"""The version of every recorded-data "system"."""


def recorded_system(project: Project) -> SystemHandle:
    """The stand-in for a project without ``system:``: nothing is executed.

    Its name is the dataset file's stem, so two log files of one set of rows
    (one per release) compare as two systems.
    """
    stem = Path(project.config.dataset.rstrip("/").rsplit("/", 1)[-1]).stem or "recorded"
    config = SystemConfig(kind="recorded", object="recorded", name=stem, version=RECORDED_VERSION)
    return SystemHandle(config=config, target=None)


def _declaration(target: Any) -> SystemDeclaration | None:
    declared = getattr(target, DECLARATION_ATTRIBUTE, None)
    if declared is None and not inspect.isclass(target):
        declared = getattr(type(target), DECLARATION_ATTRIBUTE, None)
    return declared if isinstance(declared, SystemDeclaration) else None


def _merged(project: Project, declared: SystemDeclaration, rag: RagSettings | None) -> dict[str, str | int | None]:
    """Each setting from the file (or ``--set``), else from the decorator.

    ``rag`` is ``None`` for a plain system, which has only a name and a version.

    Raises:
        ConfigError: A required setting is set in neither place.
    """
    values: dict[str, str | int | None] = {
        # An empty name or version in the file leaves the decorator's in place.
        name: getattr(project.config.system, name) or getattr(declared, name)
        for name in NameAndVersion.model_fields
    }
    if rag is not None:
        values.update(
            # An explicit null in the file (or --set) switches a declared setting off.
            (name, getattr(rag if name in rag.model_fields_set else declared, name))
            for name in RagParameters.model_fields
        )
    paths = setting_paths()
    for name, value in values.items():
        if value is None and is_required(SystemConfig, name):
            raise project.error(
                "required: set it in oloproof.yaml or in the system's decorator", paths[name]
            )
    return values


def import_callable(spec: str, *, project_dir: Any, option: str) -> Any:
    """Import a ``module:function`` named on the command line (e.g. ``--reranker``)."""
    try:
        target = _import(spec, project_dir, what="function")
    except ValueError as exc:
        raise ConfigError(str(exc), path=option) from None
    if not callable(target):
        raise ConfigError(f"{spec} is not callable", path=option)
    return target
