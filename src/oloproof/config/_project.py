"""The ``oloproof.yaml`` schema.

Numbers are strict: ``timeouts: {generate: '10'}`` or ``max_concurrency: "4"`` is
refused, not read as a number. Names (``system.name``, the versions, provider
names) hold at most `MAX_NAME` (256) characters.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from oloproof._limits import MAX_NAME
from oloproof.config._settings import ModelDump, NameAndVersion, RagParameters, omit_undeclared, text_settings
from oloproof.config._yaml import YamlMapping
from oloproof.providers import ProviderConfig
from oloproof.transcripts import FILE_SEARCH, ContextTool

__all__ = ["AgentSettings", "ProjectConfig", "RagSettings", "StageTimeouts", "SystemSettings", "TaskRunnerSettings"]

_SLICE = re.compile(r"^(metadata\.[A-Za-z0-9_.-]+|relevant_position|context_truncated)$")


def _as_text(value: Any) -> str | None:
    # YAML reads 2026-09-16 as a date and 3 as an int; both name versions (or files).
    # A list, a mapping or a boolean names nothing: refused rather than written out.
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | list | dict):
        raise ValueError(f"expected text, got {type(value).__name__}")  # noqa: TRY004 - pydantic wants ValueError
    return str(value)


class _RagObject(BaseModel):
    """Where a staged system lives."""

    object: str | None = None
    """``module:attribute`` of the ``@rag_system`` class, relative to the project."""


class RagSettings(RagParameters, _RagObject):
    """``system.rag``: where the staged system lives and how it is run.

    Its settings are those of ``RagParameters``; each overrides the decorator's.
    The ``retriever`` and ``generator`` blocks set the system's own parameters,
    checked against the models its decorator names when the system is resolved.
    """

    # Pydantic orders fields from the last base to the first: ``object`` stays
    # first, so of several errors it is still the one reported.
    model_config = ConfigDict(extra="forbid")

    retriever: YamlMapping | None = None
    """Values of the retriever's declared parameters (``@rag_system(retriever=Model)``)."""

    generator: YamlMapping | None = None
    """Values of the generator's declared parameters (``@rag_system(generator=Model)``)."""

    @field_validator(*text_settings(RagParameters), mode="before")
    @classmethod
    def _versions_are_text(cls, value: Any) -> Any:
        return _as_text(value)

    @model_serializer(mode="wrap")
    def _omit_undeclared(self, handler: SerializerFunctionWrapHandler) -> ModelDump:
        # A file without blocks dumps as it did before they existed (the run's config hash).
        return omit_undeclared(handler(self))


class AgentSettings(BaseModel):
    """``system.agent``: where an ``@agent_system`` lives and how it is run.

    Each setting overrides the decorator's; the ``generator`` block sets the
    parameters of its ``run``, and ``tools.<name>`` each tool's own parameters.
    """

    model_config = ConfigDict(extra="forbid")

    object: str | None = None
    """``module:attribute`` of the ``@agent_system`` class, relative to the project."""

    index_version: str | None = Field(default=None, max_length=MAX_NAME)
    """The version of the index the agent's tools read (every tool call's identity)."""

    generator: YamlMapping | None = None
    """Values of the agent's declared run parameters (``@agent_system(generator=Model)``)."""

    tools: dict[str, YamlMapping] | None = None
    """Values of each tool's declared parameters, by tool name (``@tool(parameters=Model)``)."""

    @field_validator("index_version", mode="before")
    @classmethod
    def _version_is_text(cls, value: Any) -> Any:
        return _as_text(value)

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> ModelDump:
        return {key: value for key, value in handler(self).items() if value is not None}


class SystemSettings(NameAndVersion):
    """``system``: the system under evaluation.

    ``name`` and ``version`` override the decorator's.
    """

    model_config = ConfigDict(extra="forbid")

    object: str | None = None
    """``module:attribute`` of an ``@system`` function (plain, non-RAG systems)."""

    rag: RagSettings | None = None
    """Settings of a staged RAG system."""

    agent: AgentSettings | None = None
    """Settings of an agent system (``@agent_system``)."""

    generator: YamlMapping | None = None
    """Values of a plain system's declared parameters (``@system(generator=Model)``)."""

    deterministic: bool | None = Field(default=None, strict=True)
    """``true``: the system answers a case the same way every time, so ``repeats`` never
    repeats it (a stochastic system is sampled once per repeat)."""

    @field_validator(*text_settings(NameAndVersion), mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return _as_text(value)

    @model_serializer(mode="wrap")
    def _omit_undeclared(self, handler: SerializerFunctionWrapHandler) -> ModelDump:
        # A file without an agent dumps as it did before agents existed (the run's config hash).
        data = omit_undeclared(handler(self))
        return data if data.get("agent") is not None else {k: v for k, v in data.items() if k != "agent"}


class TaskRunnerSettings(BaseModel):
    """``task_runner``: where batch tasks execute."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["threads", "dask"] = "threads"
    """``threads`` (default) or ``dask`` (needs ``prefect-dask``)."""

    address: str | None = None
    """Address of an existing Dask scheduler; a local cluster is started when absent."""

    n_workers: int | None = Field(strict=True, default=None, ge=1)
    """Workers of a local Dask cluster."""


class StageTimeouts(BaseModel):
    """``timeouts``: seconds one user call of each stage may take.

    A call past its timeout makes its case *missing* with the error
    ``timeout after Ns``. An ``async def`` call is cancelled; a blocking one is
    abandoned: its thread runs on until the call returns (one thread per
    abandoned call), and a fresh worker takes its place. ``null`` means no limit.
    """

    model_config = ConfigDict(extra="forbid")

    retrieve: float | None = Field(default=30.0, gt=0, allow_inf_nan=False, strict=True)
    """One ``retrieve(input, depth)`` call."""

    assemble: float | None = Field(default=30.0, gt=0, allow_inf_nan=False, strict=True)
    """Counting one context's tokens with an ``async def count_tokens``."""

    generate: float | None = Field(default=120.0, gt=0, allow_inf_nan=False, strict=True)
    """One ``generate(input, context)`` (or plain system) call."""

    judge: float | None = Field(default=60.0, gt=0, allow_inf_nan=False, strict=True)
    """One evaluator's judgment of one case. An LLM judgment is charged only while its
    requests are out at the provider, not while it waits for the provider's slots and
    rate buckets (a call waiting for its rate limit is not late); each request is
    also bounded by the provider's ``timeout_s`` and ``max_retries``."""

    @field_validator("retrieve", "assemble", "generate", "judge", mode="before")
    @classmethod
    def _not_bool(cls, value: Any) -> Any:
        # Strict already refuses `true`; this says why. ValueError, not TypeError:
        # pydantic reports only ValueError as a validation error.
        if isinstance(value, bool):
            raise ValueError("expected a number of seconds or null, not a boolean")  # noqa: TRY004
        return value

    def seconds(self) -> dict[str, float | None]:
        """The timeout of each stage, by stage name."""
        return self.model_dump()


class ProjectConfig(BaseModel):
    """The whole ``oloproof.yaml``."""

    model_config = ConfigDict(extra="forbid")

    system: SystemSettings | None = None
    """The system under evaluation; absent for recorded data (each row of the
    dataset is evaluated as it was recorded)."""

    dataset: str
    """The cases file: a path relative to the project, or an fsspec URL."""

    evaluators: list[YamlMapping] = Field(default_factory=list)
    """Evaluator entries, each with a ``type`` and that evaluator's options."""

    testing_criteria: list[Any] | str | None = None
    """Evaluators in the catalogue's ``testing_criteria`` form (``type:
    azure_ai_evaluator``, ``evaluator_name: builtin.…``), inline or as the path of a
    JSON or YAML file relative to the project; run after ``evaluators``."""

    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    """LLM providers by name (at most 256 characters), for judges (``provider: <name>``);
    keys come from the environment variables they name, never from this file."""

    slices: list[str] = Field(default_factory=list)
    """Slices to report: ``metadata.<field>``, ``relevant_position``, ``context_truncated``."""

    min_slice_support: int = Field(strict=True, default=4, ge=1)
    """Slices with fewer observed cases are listed as too small, not scored."""

    results: str | None = None
    """The results store URL; defaults to ``.oloproof/results`` inside the project."""

    storage_options: YamlMapping = Field(default_factory=dict)
    """fsspec options for the store (e.g. ``endpoint_url``); credentials belong in the environment."""

    max_concurrency: int = Field(strict=True, default=8, ge=1)
    """The most system calls (retrieve/generate/judge) in flight at once."""

    timeouts: StageTimeouts = Field(default_factory=StageTimeouts)
    """Per-stage timeouts of user calls, in seconds."""

    confidence: float = Field(default=0.95, gt=0.5, lt=1.0, strict=True)
    """Confidence level of every interval in the report."""

    repeats: int = Field(strict=True, default=1, ge=1, exclude_if=lambda value: value == 1)
    """Generations of each case (samples of a stochastic system); each repeat is cached
    on its own, and a case's value is its mean over them."""

    judge_repeats: int = Field(strict=True, default=1, ge=1, exclude_if=lambda value: value == 1)
    """Calls of each LLM judge per output; a verdict's value is its mean over them."""

    retrieve_repeats: bool = Field(strict=True, default=False, exclude_if=lambda value: value is False)
    """``true``: each repeat retrieves (and assembles) afresh, for a retriever that samples
    too; by default a case is retrieved once and its repeats generate from that context."""

    batch_size: int | None = Field(strict=True, default=None, ge=1)
    """Cases per Prefect batch task; chosen from the case count when absent."""

    task_runner: TaskRunnerSettings = Field(default_factory=TaskRunnerSettings)
    """Where batch tasks execute."""

    context_tools: list[ContextTool] = Field(default_factory=list)
    """Tools besides ``file_search`` whose results are an agent's retrieved context, read
    by every judge in agent-response mode: a name (results are objects with ``doc_id``
    and ``text``) or ``{name, id_field, text_field}``. A live agent's own context tools
    (``@tool(context=True)``) are added to them."""

    @field_validator("context_tools", mode="before")
    @classmethod
    def _tool_names(cls, value: Any) -> Any:
        # ``[search_kb]`` is shorthand for ``[{name: search_kb}]``.
        return [{"name": item} if isinstance(item, str) else item for item in value] if isinstance(value, list) else value

    @field_validator("context_tools")
    @classmethod
    def _tools_once(cls, value: list[ContextTool]) -> list[ContextTool]:
        names = [tool.name for tool in value]
        for name in names:
            if name == FILE_SEARCH:
                raise ValueError("file_search is always a context tool: leave it out")
            if names.count(name) > 1:
                raise ValueError(f"the context tool {name!r} is named twice")
        return value

    @field_validator("slices")
    @classmethod
    def _known_slices(cls, value: list[str]) -> list[str]:
        for item in value:
            if not _SLICE.match(item):
                raise ValueError(
                    f"unknown slice {item!r}: expected metadata.<field>, "
                    "relevant_position or context_truncated"
                )
        return value

    @field_validator("providers", mode="before")
    @classmethod
    def _provider_names(cls, value: Any) -> Any:
        # Checked here, not on the key's type: an error there would print the whole key.
        if isinstance(value, dict) and any(isinstance(name, str) and len(name) > MAX_NAME for name in value):
            raise ValueError(f"a provider name holds at most {MAX_NAME} characters")
        return value

    @field_validator("dataset", "results", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        value = _as_text(value)
        if value is not None and not value.strip():
            # An empty value would silently mean the default: say so instead.
            raise ValueError("must not be empty (leave the setting out for the default)")
        return value
