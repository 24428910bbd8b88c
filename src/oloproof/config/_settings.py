"""The system's settings, each declared once.

A setting's type, constraint and docstring live here. The decorators' keyword
arguments, the ``system`` and ``system.rag`` sections of ``oloproof.yaml``, the
resolved system configuration and the settings a diagnosis reproduces are all
read from these models, so a new setting is one new field.

Names and versions are text of at most `MAX_NAME` (256) characters: each is part of
every stage identity. Numbers are strict: ``top_k: "2"`` is refused, not read as 2.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

from oloproof._limits import MAX_NAME

__all__ = [
    "PARAMETER_BLOCKS",
    "REQUIRED",
    "ModelDump",
    "NameAndVersion",
    "RagParameters",
    "SystemConfig",
    "is_required",
    "omit_undeclared",
    "setting_paths",
    "text_settings",
]


class _Required:
    """The type of :data:`REQUIRED`."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()
"""``Annotated`` marker: a resolved system cannot do without this setting.

Every setting is optional where it is written (the file or the decorator may
give it); the merged value of a marked one must not be ``None``.
"""


class NameAndVersion(BaseModel):
    """What names the system: ``system.name``/``system.version`` or a decorator's."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str | None, REQUIRED] = Field(default=None, max_length=MAX_NAME)
    """The system's name, part of every stage identity (at most 256 characters)."""

    version: Annotated[str | None, REQUIRED] = Field(default=None, max_length=MAX_NAME)
    """The system's version: part of generation identity, never of retrieval identity
    (at most 256 characters)."""


class RagParameters(BaseModel):
    """How a staged system is run: ``system.rag`` or ``@rag_system``."""

    model_config = ConfigDict(extra="forbid")

    depth: Annotated[int | None, REQUIRED] = Field(strict=True, default=None, ge=1)
    """How many candidates ``retrieve`` is asked for (retrieval identity)."""

    top_k: Annotated[int | None, REQUIRED] = Field(strict=True, default=None, ge=1)
    """How many of the first candidates may enter the context (not retrieval identity)."""

    token_budget: int | None = Field(strict=True, default=None, ge=1)
    """The most tokens (by ``count_tokens``) the context may hold; ``None`` for no budget."""

    index_version: Annotated[str | None, REQUIRED] = Field(default=None, max_length=MAX_NAME)
    """The version of the index the retriever reads (retrieval identity; at most 256 characters)."""

    retriever_version: str | None = Field(default=None, max_length=MAX_NAME)
    """An optional version of the retriever code (retrieval identity; at most 256 characters)."""


# A module-level name: inside the settings models ``object`` is a field.
ModelDump: TypeAlias = dict[str, object]
"""A settings model as pydantic dumps it (Python or JSON mode), by field name."""

PARAMETER_BLOCKS = ("retriever", "generator")
"""The stages a system may declare its own parameters for, by the name of their block."""

_UNDECLARED = (*PARAMETER_BLOCKS, "tools")
"""The entries a configuration leaves out of its JSON when the system declares none."""


def omit_undeclared(data: ModelDump) -> ModelDump:
    """``data`` less each parameter block (and an agent's ``tools``) that is ``None``.

    A system without parameters dumps to exactly the JSON it dumped before they
    existed, so its stage identities and every record hashed from it stay as they were.
    """
    return {key: value for key, value in data.items() if key not in _UNDECLARED or value is not None}


class _Target(BaseModel):
    """What the system is and where it was imported from."""

    kind: Literal["rag", "plain", "agent", "recorded"]
    """``rag`` (staged), ``plain`` (one function), ``agent`` (a ``run(input, tools)``
    whose tool calls are stages of their own) or ``recorded`` (no system: the
    dataset's rows are evaluated as they were recorded)."""

    object: str
    """``module:attribute`` the system was imported from."""


class SystemConfig(RagParameters, NameAndVersion, _Target):
    """The effective configuration of the system under evaluation.

    Its JSON is hashed into stage identities and recorded in run manifests.
    ``name`` and ``version`` are always set; the RAG parameters are ``None``
    for a plain system. The parameter blocks appear in the JSON only when the
    system declares them.
    """

    # Pydantic orders fields from the last base to the first: kind and object,
    # then name and version, then the RAG parameters, then the parameter blocks.
    model_config = ConfigDict(frozen=True, extra="forbid")

    # Redeclared (in place: the order above holds) because resolving refuses a system without them.
    name: Annotated[str, REQUIRED]
    version: Annotated[str, REQUIRED]

    retriever: dict[str, JsonValue] | None = None
    """The retriever's declared parameters as JSON (retrieval identity); ``None`` when
    the system declares none."""

    generator: dict[str, JsonValue] | None = None
    """The generator's declared parameters as JSON (generation identity); for a plain
    system, its own; for an agent, its ``run``'s. ``None`` when the system declares none."""

    tools: dict[str, dict[str, JsonValue]] | None = None
    """An agent's tools by name: each one's ``version``, whether it is a ``context``
    tool and its declared ``parameters`` (every tool call's identity, and the agent
    run's). ``None`` for systems that are not agents."""

    @model_serializer(mode="wrap")
    def _omit_undeclared(self, handler: SerializerFunctionWrapHandler) -> ModelDump:
        return omit_undeclared(handler(self))


def is_required(model: type[BaseModel], name: str) -> bool:
    """Whether the setting ``name`` of ``model`` is marked :data:`REQUIRED`."""
    return any(item is REQUIRED for item in model.model_fields[name].metadata)


def setting_paths() -> dict[str, tuple[str, ...]]:
    """Each setting's key path in ``oloproof.yaml``, in declaration order, then the
    staged system's parameter blocks."""
    return {
        **{name: ("system", name) for name in NameAndVersion.model_fields},
        **{name: ("system", "rag", name) for name in RagParameters.model_fields},
        **{name: ("system", "rag", name) for name in PARAMETER_BLOCKS},
    }


def text_settings(model: type[BaseModel]) -> tuple[str, ...]:
    """The names of ``model``'s text settings (typed ``str | None``)."""
    return tuple(name for name, field in model.model_fields.items() if field.annotation == str | None)
