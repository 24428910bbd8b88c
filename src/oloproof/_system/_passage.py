"""What a retriever returns: passages in the retriever's own order."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

__all__ = ["Passage", "Retrieval"]


class Passage(BaseModel):
    """One retrieval candidate, as the user's retriever produced it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str
    """Identifier of the document the passage comes from."""

    score: float | None = None
    """The retriever's own score. Recorded, never used to re-rank."""

    text: str | None = None
    """The passage text handed to the generator."""

    chunk_id: str | None = None
    """Identifier of the chunk within the document, for `relevance_unit: chunk`."""

    def __init__(
        self,
        doc_id: str | None = None,
        score: float | None = None,
        text: str | None = None,
        chunk_id: str | None = None,
        **data: Any,
    ) -> None:
        # Positional construction, as on the product page: Passage(doc_id, score, text).
        super().__init__(doc_id=doc_id, score=score, text=text, chunk_id=chunk_id, **data)

    @field_validator("doc_id", "chunk_id", mode="before")
    @classmethod
    def _ids_are_strings(cls, value: Any) -> Any:
        # Integer ids from a vector store are common; they compare as strings.
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value

    @property
    def unit_id(self) -> str:
        """The chunk-level unit id, ``doc_id#chunk_id`` (or the doc id alone)."""
        return self.doc_id if self.chunk_id is None else f"{self.doc_id}#{self.chunk_id}"


class Retrieval(BaseModel):
    """The result of one ``retrieve(input, depth)`` call."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    query: str | None = None
    """The query the retriever actually ran (after any rewriting)."""

    depth: int
    """The depth the retriever was asked for."""

    candidates: tuple[Passage, ...] = ()
    """At most ``depth`` passages, in the retriever's order (position 1 first)."""

    @field_validator("candidates", mode="before")
    @classmethod
    def _candidates_are_passages(cls, value: Any) -> Any:
        # A dict that merely looks like a passage is a contract slip worth naming.
        items = tuple(value) if isinstance(value, list | tuple) else value
        if isinstance(items, tuple):
            for position, item in enumerate(items, start=1):
                if not isinstance(item, Passage):
                    # ValueError, not TypeError: pydantic reports only ValueError as a validation error.
                    raise ValueError(  # noqa: TRY004
                        f"candidate {position} is {type(item).__name__}, expected Passage"
                    )
        return items

    def __init__(
        self,
        query: str | None = None,
        depth: int | None = None,
        candidates: Any = (),
        **data: Any,
    ) -> None:
        super().__init__(query=query, depth=depth, candidates=candidates, **data)
