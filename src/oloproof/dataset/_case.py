"""The case model: one line of a JSONL cases file.

A case id is a JSON string of 1 to `MAX_NAME` (256) characters: ``"id": 5`` is
refused, not read as ``"5"``. Numbers are strict: a grade of ``"1"`` is refused.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from oloproof._limits import MAX_NAME
from oloproof.records._base import Json

__all__ = ["Case", "Expected", "GoldPassage", "RelevantUnit"]


class RelevantUnit(BaseModel):
    """A labelled relevant document (or chunk) for a case."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str
    """The relevant document."""

    chunk_id: str | None = None
    """The relevant chunk, counted as its own unit under ``relevance_unit: chunk``."""

    grade: float = Field(default=1.0, ge=0, allow_inf_nan=False, strict=True)
    """Graded relevance (linear gain in nDCG); 0 marks a judged non-relevant unit."""

    @field_validator("doc_id", "chunk_id", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class GoldPassage(BaseModel):
    """A passage that answers the case, substituted for the context by diagnosis."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str
    """The document the gold passage comes from."""

    text: str
    """The passage text."""

    chunk_id: str | None = None
    """The chunk, if the corpus is chunked."""

    @field_validator("doc_id", "chunk_id", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class Expected(BaseModel):
    """What a case expects. Unknown keys are kept for custom evaluators."""

    model_config = ConfigDict(frozen=True, extra="allow")

    answer: Any = None
    """The reference answer read by answer evaluators."""

    relevant: list[RelevantUnit] | None = None
    """Relevance labels; without them a case is excluded from retrieval metrics."""

    gold_context: list[GoldPassage] | None = None
    """The passages that answer the case; without them a failure cannot be diagnosed."""

    # Kept as written: the tool_calls evaluator checks it, naming the entry at fault.
    tool_calls: Json = None
    """The tool calls an agent should make, read by the ``tool_calls`` evaluator: a list of
    ``{"name": ..., "arguments": {...}}``, ``arguments`` optional (only the arguments it
    gives are compared)."""


class Case(BaseModel):
    """One evaluation case."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=MAX_NAME, strict=True)
    """Unique id within the dataset, a JSON string of at most 256 characters; runs pair
    cases by it."""

    input: Any
    """What the system receives."""

    expected: Expected = Field(default_factory=Expected)
    """What a correct run produces."""

    # The line's own JSON, kept as it is (not validated value by value): slices read any field of it.
    metadata: dict[str, Json] = Field(default_factory=dict)
    """Free-form fields, usable as ``metadata.<field>`` slices."""
