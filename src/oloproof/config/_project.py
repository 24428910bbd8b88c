"""The ``oloproof.yaml`` schema."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["ProjectConfig", "RagSettings", "SystemSettings", "TaskRunnerSettings"]

_SLICE = re.compile(r"^(metadata\.[A-Za-z0-9_.-]+|relevant_position|context_truncated)$")


class RagSettings(BaseModel):
    """``system.rag``: where the staged system lives and how it is run."""

    model_config = ConfigDict(extra="forbid")

    object: str | None = None
    """``module:attribute`` of the ``@rag_system`` class, relative to the project."""

    depth: int | None = Field(default=None, ge=1)
    """How many candidates ``retrieve`` is asked for (retrieval identity)."""

    top_k: int | None = Field(default=None, ge=1)
    """How many of the first candidates may enter the context (not retrieval identity)."""

    token_budget: int | None = Field(default=None, ge=1)
    """The most tokens the context may hold; needs ``count_tokens``."""

    index_version: str | None = None
    """The version of the index the retriever reads (retrieval identity)."""

    retriever_version: str | None = None
    """An optional version of the retriever code (retrieval identity)."""

    @field_validator("index_version", "retriever_version", mode="before")
    @classmethod
    def _versions_are_text(cls, value: Any) -> Any:
        # YAML reads 2026-09-16 as a date and 3 as an int; both name versions.
        return None if value is None else str(value)


class SystemSettings(BaseModel):
    """``system``: the system under evaluation."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    """Overrides the decorator's name."""

    version: str | None = None
    """Overrides the decorator's version."""

    object: str | None = None
    """``module:attribute`` of an ``@system`` function (plain, non-RAG systems)."""

    rag: RagSettings | None = None
    """Settings of a staged RAG system."""

    @field_validator("name", "version", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return None if value is None else str(value)


class TaskRunnerSettings(BaseModel):
    """``task_runner``: where batch tasks execute."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["threads", "dask"] = "threads"
    """``threads`` (default) or ``dask`` (needs ``prefect-dask``)."""

    address: str | None = None
    """Address of an existing Dask scheduler; a local cluster is started when absent."""

    n_workers: int | None = Field(default=None, ge=1)
    """Workers of a local Dask cluster."""


class ProjectConfig(BaseModel):
    """The whole ``oloproof.yaml``."""

    model_config = ConfigDict(extra="forbid")

    system: SystemSettings
    """The system under evaluation."""

    dataset: str
    """The cases file: a path relative to the project, or an fsspec URL."""

    evaluators: list[dict[str, Any]] = Field(default_factory=list)
    """Evaluator entries, each with a ``type`` and that evaluator's options."""

    slices: list[str] = Field(default_factory=list)
    """Slices to report: ``metadata.<field>``, ``relevant_position``, ``context_truncated``."""

    min_slice_support: int = Field(default=4, ge=1)
    """Slices with fewer observed cases are listed as too small, not scored."""

    results: str | None = None
    """The results store URL; defaults to ``.oloproof/results`` inside the project."""

    storage_options: dict[str, Any] = Field(default_factory=dict)
    """fsspec options for the store (e.g. ``endpoint_url``); credentials belong in the environment."""

    max_concurrency: int = Field(default=8, ge=1)
    """The most system calls (retrieve/generate/judge) in flight at once."""

    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    """Confidence level of every interval in the report."""

    batch_size: int | None = Field(default=None, ge=1)
    """Cases per Prefect batch task; chosen from the case count when absent."""

    task_runner: TaskRunnerSettings = Field(default_factory=TaskRunnerSettings)
    """Where batch tasks execute."""

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

    @field_validator("dataset", "results", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return None if value is None else str(value)
