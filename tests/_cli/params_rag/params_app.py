"""A keyword RAG system that declares its own retriever and generator parameters.

The retriever cuts each passage to ``chunk_size`` words; its ``mode`` names the
search but ranks alike, so a changed mode retrieves the same passages again. The
generator echoes the parameters it was given, so a test can see that they arrived.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from oloproof import Passage, Retrieval, rag_system

KNOWLEDGE_BASE = Path(__file__).with_name("knowledge_base.jsonl")


class RetrieverParams(BaseModel):
    """How the retriever searches."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["vector", "keyword", "hybrid"] = "keyword"
    """The kind of search."""

    chunk_size: int = Field(default=400, ge=1, strict=True)
    """The most words of a passage."""


class GeneratorParams(BaseModel):
    """How the generator answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """The sampling temperature."""

    prompt_version: str = "p1"
    """The version of the prompt."""


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - {"a", "the", "do", "i", "how", "my", "is", "of", "to"}


@rag_system(name="params-rag", version="params-1", depth=6, top_k=2, index_version="params-kb-1",
            retriever=RetrieverParams, generator=GeneratorParams)  # fmt: skip
class ParamsRag:
    def __init__(self) -> None:
        with KNOWLEDGE_BASE.open(encoding="utf-8") as handle:
            self.documents = [json.loads(line) for line in handle if line.strip()]

    def retrieve(self, input, depth, params: RetrieverParams):
        question = words(input["question"])
        scored = sorted(
            ((len(question & words(doc["text"])), doc) for doc in self.documents),
            key=lambda pair: (-pair[0], pair[1]["doc_id"]),
        )
        passages = [
            Passage(doc_id=doc["doc_id"], score=float(score), text=" ".join(doc["text"].split()[: params.chunk_size]))
            for score, doc in scored[:depth]
            if score
        ]
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(passages))

    def generate(self, input, context, params: GeneratorParams):
        if not context:
            return {"answer": "", "citations": [], "params": params.model_dump()}
        question = words(input["question"])
        best = max(context, key=lambda passage: len(question & words(passage.text or "")))
        return {"answer": best.text, "citations": [best.doc_id], "params": params.model_dump()}
