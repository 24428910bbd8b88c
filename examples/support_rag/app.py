"""A small support-desk RAG system: keyword retrieval and an extractive generator.

It needs no credentials and no network, so the evaluation is reproducible
anywhere. The retriever ranks knowledge-base passages by how many distinct
question words they share; the generator answers with the first sentence of
the context passage that shares the most words with the question.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

KNOWLEDGE_BASE = Path(__file__).with_name("knowledge_base.jsonl")

STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "get", "how", "i", "if", "in",
    "is", "it", "my", "of", "on", "or", "our", "the", "this", "to", "we", "what", "when", "which", "who", "will",
    "with", "you", "your",
})


def words(text: str) -> set[str]:
    """Distinct lower-case content words."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]


@rag_system(
    name="support-rag",
    version="slice-b-example",
    depth=6,
    top_k=2,
    token_budget=40,
    index_version="kb-2026-09-16",
)
class SupportRag:
    def __init__(self) -> None:
        with KNOWLEDGE_BASE.open(encoding="utf-8") as handle:
            self.documents = [json.loads(line) for line in handle if line.strip()]

    def retrieve(self, input, depth):
        question = words(input["question"])
        scored = []
        for doc in self.documents:
            overlap = len(question & words(doc["text"]))
            if overlap:
                scored.append((overlap, doc))
        scored.sort(key=lambda pair: (-pair[0], pair[1]["doc_id"]))
        passages = [
            Passage(doc_id=doc["doc_id"], score=float(score), text=doc["text"])
            for score, doc in scored[:depth]
        ]
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(passages))

    def generate(self, input, context):
        if not context:
            return {"answer": "I could not find this in the knowledge base.", "citations": []}
        question = words(input["question"])
        best = max(context, key=lambda passage: len(question & words(passage.text or "")))
        answer = first_sentence(best.text or "")
        return {"answer": answer, "citations": [best.doc_id]}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
