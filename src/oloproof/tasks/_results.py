"""`CaseResult`: one case's execution, merged from its stage outcomes.

The seam between executing a case and everything after it: the judge reads
it, the summary counts it and the ``cases`` and ``retrievals`` tables are
written from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from pydantic import JsonValue

from oloproof.records import AssembledPassage, Candidate, DroppedPassage, ExecutionRecord

__all__ = ["CaseResult"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case's execution in one run."""

    case_id: str
    """The case's id in the dataset."""
    status: Literal["ok", "missing"]
    """``ok`` when every stage produced a record; ``missing`` otherwise."""
    execution_key: str
    """The identity of the whole execution (system configuration and input)."""
    error_stage: str | None = None
    """The stage whose failure made the case missing."""
    error: str | None = None
    """One line: why the case is missing."""
    execution_hit: bool = False
    """Served whole from the execution cache (no stage ran)."""
    retrieve_hit: bool = False
    """The retrieval came from a cache."""
    generate_hit: bool = False
    """The generation came from a cache."""
    retrieve_ran: bool = False
    """The retrieve stage was asked for this case (and it was not a replay)."""
    generate_ran: bool = False
    """The generate stage was asked for this case."""
    retrieve_ms: float | None = None
    """How long the retriever call took."""
    generate_ms: float | None = None
    """How long the generator call took."""
    retrieval_key: str | None = None
    """The retrieval identity."""
    assembly_key: str | None = None
    """The assembly identity."""
    generation_key: str | None = None
    """The generation identity."""
    query: str | None = None
    """The query the retriever reported."""
    candidates: list[Candidate] | None = None
    """The retrieved candidates, in rank order."""
    context: list[AssembledPassage] | None = None
    """The assembled context: kept passages with their positions and token counts."""
    dropped: list[DroppedPassage] | None = None
    """Candidates left out of the context, each with its position and reason."""
    output: JsonValue = None
    """The system's output (JSON values)."""
    output_items: list[JsonValue] | None = None
    """An agent's transcript (``{{sample.output_items}}``); ``None`` for other systems."""
    tool_hits: int = 0
    """An agent's tool calls answered from the tool cache in this run."""
    tool_misses: int = 0
    """An agent's tool calls that ran the tool in this run."""
    repeat: int = 0
    """Which sample of the case's generation this is (``repeats``), from 0."""

    @property
    def ok(self) -> bool:
        """Whether every stage produced a record."""
        return self.status == "ok"

    def as_mapping(self) -> Mapping[str, Any]:
        """The fields by name (values as they are, not copied)."""
        return {name: getattr(self, name) for name in FIELD_NAMES}

    def execution(self) -> ExecutionRecord:
        """What the execution cache keeps of the case."""
        return ExecutionRecord.model_construct(**{name: getattr(self, name) for name in EXECUTION_FIELDS})

    @classmethod
    def of_execution(cls, case_id: str, key: str, record: ExecutionRecord, repeat: int = 0) -> CaseResult:
        """The result of a case served whole from the execution cache under ``key``."""
        return cls(
            case_id=case_id, status="ok", execution_key=key, execution_hit=True, repeat=repeat,
            retrieval_key=record.retrieval_key, assembly_key=record.assembly_key,
            generation_key=record.generation_key, query=record.query, candidates=record.candidates,
            context=record.context, dropped=record.dropped, output=record.output,
            output_items=record.output_items,
        )  # fmt: skip


FIELD_NAMES = tuple(field.name for field in fields(CaseResult))

EXECUTION_FIELDS = (
    "retrieval_key", "assembly_key", "generation_key", "query", "candidates", "context", "dropped", "output",
    "output_items",
)  # fmt: skip
"""What the execution cache keeps of a case: enough to skip every stage next time."""
