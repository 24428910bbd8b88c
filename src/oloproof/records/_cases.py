"""Rows of the ``cases`` table: one per case of a run."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import SkipValidation
from typing_extensions import TypedDict

from oloproof.records._base import Json, JsonObject, Record

__all__ = ["CaseRow", "ContextEntry", "DroppedEntry"]


class ContextEntry(TypedDict):
    """A passage kept in the context the generator saw.

    Attributes:
        doc_id: The passage's document.
        chunk_id: Its chunk, when the corpus is chunked.
        position: Its 1-based position among the retrieval's candidates.
        tokens: Its token count, when a token budget was applied.
    """

    doc_id: str
    chunk_id: str | None
    position: int
    tokens: int | None


class DroppedEntry(TypedDict):
    """A candidate left out of the context, and why.

    Attributes:
        position: Its 1-based position among the retrieval's candidates.
        doc_id: The passage's document.
        chunk_id: Its chunk, when the corpus is chunked.
        text: The passage text.
        reason: ``beyond_top_k`` or ``token_budget``.
        tokens: Its token count, when it was counted.
    """

    position: int
    doc_id: str
    chunk_id: str | None
    text: str | None
    reason: str
    tokens: int | None


class CaseRow(Record):
    """One case of a run: what ran, what it produced and where the evidence went."""

    run_id: str
    """The run the case belongs to."""

    case_id: str
    """The case's id in the dataset."""

    status: Literal["ok", "missing"]
    """``ok`` when every stage succeeded, ``missing`` when one failed."""

    error_stage: str | None = None
    """The stage that failed, for a ``missing`` case."""

    error: str | None = None
    """What the failing stage raised, in one line."""

    execution_key: str | None = None
    """Identity of the whole execution (the system and the case input)."""

    retrieval_key: str | None = None
    """Identity of the retrieval stage's result."""

    assembly_key: str | None = None
    """Identity of the context assembly's result."""

    generation_key: str | None = None
    """Identity of the generation stage's result."""

    query: str | None = None
    """The query the retriever actually ran."""

    execution_hit: bool
    """Whether the whole execution came from the execution cache."""

    retrieve_hit: bool
    """Whether the retrieval came from the stage cache."""

    generate_hit: bool
    """Whether the generation came from the stage cache."""

    input: Json
    """The case's input, as the system received it."""

    expected: JsonObject
    """What the case expects (``expected`` of the dataset line, without empty keys)."""

    metadata: JsonObject
    """The case's free-form metadata."""

    output: Json = None
    """What the system generated; ``None`` when generation did not succeed."""

    context: Annotated[list[ContextEntry] | None, SkipValidation] = None
    """The passages kept in the context, in order; ``None`` without an assembly."""

    dropped: Annotated[list[DroppedEntry] | None, SkipValidation] = None
    """The candidates left out of the context; ``None`` without an assembly."""

    best_relevant_position: int | None = None
    """1-based position of the first relevant candidate; ``None`` when there is none."""

    relevant_position: str | None = None
    """That position as a slice label: a number, ``none``, ``beyond_top_k`` or ``unlabelled``."""

    context_truncated: bool | None = None
    """Whether the token budget dropped a passage; ``None`` without a retrieval."""

    retrieve_ms: float | None = None
    """Milliseconds the retrieval took, when it ran in this run."""

    generate_ms: float | None = None
    """Milliseconds the generation took, when it ran in this run."""

    output_items: Json = None
    """An agent's transcript (its tool calls and their results); ``None`` for other systems."""

    repeat: int = 0
    """Which sample of the case's generation this row is (``repeats``), from 0: a case
    run N times has N rows, which share its retrieval and context."""
