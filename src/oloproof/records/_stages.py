"""The records of a case's stages: what each stage hands the next, and caches.

A stage record is stored as one JSON object under its identity key (inside a pack of
its batch, see `oloproof.store.RecordCache`); `stored` gives exactly the object that was
always stored, so a store written before these models still answers every lookup.
Passages inside a record are typed dictionaries: evaluators, identities and the
tables read them as JSON objects, and they hash as they always did.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, JsonValue, Tag, TypeAdapter
from typing_extensions import TypedDict

from oloproof.records._base import Json, JsonObject, Record
from oloproof.records._cases import DroppedEntry

__all__ = [
    "AssembledPassage",
    "AssemblyRecord",
    "Candidate",
    "DroppedPassage",
    "ExecutionRecord",
    "GenerationRecord",
    "JudgeRecord",
    "RecordedRetrieval",
    "RetrievalRecord",
    "StageRecord",
    "StagedRecord",
    "ToolRecord",
    "ToolTally",
    "stage_record",
    "validate_staged",
]


class Candidate(TypedDict):
    """One retrieved candidate, as the retriever's ``Passage`` is stored.

    Attributes:
        doc_id: The passage's document.
        score: The retriever's own score.
        text: The passage text.
        chunk_id: Its chunk, when the corpus is chunked.
    """

    doc_id: str
    score: float | None
    text: str | None
    chunk_id: str | None


class AssembledPassage(TypedDict):
    """A candidate kept in the context the generator saw.

    Attributes:
        position: Its 1-based position among the retrieval's candidates.
        doc_id: The passage's document.
        chunk_id: Its chunk, when the corpus is chunked.
        text: The passage text.
        tokens: Its token count, when a token budget was applied.
    """

    position: int
    doc_id: str
    chunk_id: str | None
    text: str | None
    tokens: int | None


DroppedPassage = DroppedEntry
"""A candidate left out of the context, and why: the ``cases`` table's own entry."""


class StageRecord(Record):
    """The base of the stage records: a frozen record stored as one JSON object."""

    def stored(self) -> dict[str, object]:
        """The JSON object the record is stored as: its fields in order, values as they are.

        Values are not converted: the store's canonical JSON writes them (NumPy
        values among them) as it always has.
        """
        # Not model_dump: it would warn on (and convert) the NumPy values evaluators report.
        omit = _omitted(type(self))
        return {name: value for name, value in self.__dict__.items() if name not in omit or not omit[name](value)}


@cache
def _omitted(record: type[StageRecord]) -> dict[str, Callable[[Any], bool]]:
    """The fields a record leaves out of its stored object, each with when it does."""
    return {name: info.exclude_if for name, info in record.model_fields.items() if info.exclude_if is not None}


class RetrievalRecord(StageRecord):
    """The retrieve stage's record: what the retriever returned for one case."""

    query: str | None = None
    """The query the retriever actually ran."""

    depth: int
    """The depth it was asked for."""

    candidates: list[Candidate]
    """The candidates, in the retriever's order (position 1 first)."""

    replayed: bool = Field(default=False, exclude_if=lambda value: not value)
    """Replayed from a parent run's recorded retrievals (never cached); written only
    when true, as it always was."""


class RecordedRetrieval(Record):
    """A case's retrieval as a complete run recorded it, read back to be replayed."""

    query: str | None = None
    """The query the retriever ran."""

    candidates: list[Candidate]
    """The recorded candidates, in their recorded order."""


class AssemblyRecord(StageRecord):
    """The assemble stage's record: the top-k cut-off and token budget applied."""

    context: list[AssembledPassage]
    """The passages kept, in rank order."""

    dropped: list[DroppedPassage]
    """The candidates left out, each with its reason."""


class ToolTally(Record):
    """An agent run's tool calls: this run's accounting, never cached."""

    hits: int
    """Calls answered from the tool cache."""

    misses: int
    """Calls that ran the tool."""


class GenerationRecord(StageRecord):
    """The generate stage's record: the system's output (an agent's, with its transcript)."""

    output: Json
    """What the system generated (JSON values)."""

    output_items: list[JsonValue] | None = Field(default=None, exclude_if=lambda value: value is None)
    """An agent's transcript in the vendor's agent message format; written only for agents."""

    tools: ToolTally | None = Field(default=None, exclude_if=lambda value: True)
    """The run's tool calls, counted when the agent ran in this run; never written,
    so a record read back (a cache hit) made no calls."""


class ToolRecord(StageRecord):
    """The tool stage's record: what one call of an agent's tool returned."""

    result: Json
    """The result: a context tool's passages as JSON objects, any other tool's JSON."""


class JudgeRecord(StageRecord):
    """The judge stage's record of one judgment: the evaluator's verdict as it was given.

    The fields are those of ``oloproof.evaluators.Verdict``; rows derive each
    output's value and verdict from them, so a changed threshold needs no call.
    """

    status: Literal["observed", "excluded", "error"] = "observed"
    """``observed`` (scored), ``excluded`` (nothing to judge) or ``error`` (the judge failed)."""

    score: float | None = None
    """The raw score on the output's scale."""

    passed: bool | None = None
    """Set only by evaluators that decide pass/fail themselves."""

    reason: str | None = None
    """The evaluator's reason, or why the case was skipped or failed."""

    detail: JsonObject = Field(default_factory=dict)
    """What the evaluator reports besides the score."""

    call: JsonObject | None = None
    """The judge call's accounting (provider, model, tokens, retries, raw reply on error)."""

    scores: dict[str, float] | None = None
    """One raw score per output criterion, for evaluators with several outputs."""

    def call_value(self, name: str) -> JsonValue:
        """One entry of the call's accounting; ``None`` without a call or that entry."""
        return None if self.call is None else self.call.get(name)


class ExecutionRecord(StageRecord):
    """The execution cache's record of one case: enough to skip every stage next time."""

    retrieval_key: str | None = None
    """The retrieval identity; ``None`` without a retrieve stage."""

    assembly_key: str | None = None
    """The assembly identity; ``None`` without an assemble stage."""

    generation_key: str | None = None
    """The generation identity."""

    query: str | None = None
    """The query the retriever reported."""

    candidates: list[Candidate] | None = None
    """The retrieved candidates, in rank order; ``None`` without a retrieval."""

    context: list[AssembledPassage] | None = None
    """The assembled context; ``None`` without an assembly."""

    dropped: list[DroppedPassage] | None = None
    """The candidates left out of the context; ``None`` without an assembly."""

    output: Json = None
    """The system's output."""

    output_items: list[JsonValue] | None = Field(default=None, exclude_if=lambda value: value is None)
    """An agent's transcript; written only for agents."""


def _stage_of(value: Any) -> str | None:
    # Stored records name no stage: each stage's record has keys no other has.
    if isinstance(value, StageRecord):
        return type(value).__name__
    if isinstance(value, dict):
        for key, name in _MARKS:
            if key in value:
                return name
    return None


_MARKS = (
    ("candidates", "RetrievalRecord"),
    ("context", "AssemblyRecord"),
    ("output", "GenerationRecord"),
    ("status", "JudgeRecord"),
)

StagedRecord = Annotated[
    Annotated[RetrievalRecord, Tag("RetrievalRecord")]
    | Annotated[AssemblyRecord, Tag("AssemblyRecord")]
    | Annotated[GenerationRecord, Tag("GenerationRecord")]
    | Annotated[JudgeRecord, Tag("JudgeRecord")],
    Discriminator(_stage_of),
]
"""The record of any stage of a batch task, told apart by its keys when read back."""

_STAGE_RECORDS: dict[str, type[StageRecord]] = {
    "retrieve": RetrievalRecord,
    "assemble": AssemblyRecord,
    "generate": GenerationRecord,
    "judge": JudgeRecord,
    "execute": ExecutionRecord,
    "tool": ToolRecord,
}


def stage_record(stage: str) -> type[StageRecord]:
    """The record model of a stage cache, by the stage's name in the store
    (``retrieve``, ``assemble``, ``generate``, ``judge``, ``execute`` or ``tool``).

    Raises:
        KeyError: No stage has that name.
    """
    return _STAGE_RECORDS[stage]

_STAGED: TypeAdapter[StageRecord] = TypeAdapter(StagedRecord)


def validate_staged(value: Any) -> StageRecord | None:
    """Any batch stage's record from its stored JSON object (or the record itself).

    Prefect reads a batch's outcomes back from their JSON and validates each
    outcome's record with this.

    Raises:
        pydantic.ValidationError: The value is no stage's record.
    """
    if value is None or isinstance(value, StageRecord):
        return value
    return _STAGED.validate_python(value)
