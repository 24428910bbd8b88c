"""The support desk as an agent: it answers by calling a ``search_kb`` tool.

Deterministic and credential-free, like ``support_rag``, over the same knowledge
base (a copy, so this folder stands alone). The "model" is a few rules standing in for an LLM's choices, so that each
way an agent fails appears and every figure is reproducible:

- it answers yes/no questions ("Is ...?") from memory, without searching, unless
  its run is told to call the search tool (``tools.forced``, as a model's tool choice);
- it searches with the question's words, so a question worded unlike the knowledge
  base retrieves the wrong passage;
- prompt ``p1`` answers with the first sentence of the passage sharing the most words
  with the question; ``p2`` with the whole passage.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, Field

from oloproof import Passage, Tools, agent_system, tool

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


class Prompt(BaseModel):
    """The agent's own parameters: its run's identity."""

    prompt_version: str = Field(default="p1", pattern=r"^p[12]$")
    """``p1`` answers with one sentence, ``p2`` with the whole passage."""


class Search(BaseModel):
    """The search tool's own parameters: every search call's identity."""

    limit: int = Field(default=3, ge=1, le=10)
    """How many passages a search returns."""


@agent_system(name="support-agent", version="agent-example", index_version="kb-2026-09-16", generator=Prompt)
class SupportAgent:
    def __init__(self) -> None:
        with KNOWLEDGE_BASE.open(encoding="utf-8") as handle:
            self.documents = [json.loads(line) for line in handle if line.strip()]

    @tool(context=True, parameters=Search)
    def search_kb(self, query: str, params: Search) -> list[Passage]:
        """Knowledge-base passages ranked by how many distinct query words they share."""
        wanted = words(query)
        scored = [(len(wanted & words(doc["text"])), doc) for doc in self.documents]
        scored = [(score, doc) for score, doc in scored if score]
        scored.sort(key=lambda pair: (-pair[0], pair[1]["doc_id"]))
        return [Passage(doc_id=doc["doc_id"], score=float(score), text=doc["text"])
                for score, doc in scored[: params.limit]]

    def run(self, input, tools: Tools, params: Prompt):
        question = input["question"]
        if question.startswith("Is ") and tools.forced is None:
            # A yes/no question looks answerable without looking anything up.
            return {"answer": "Yes, that is available on every plan.", "citations": []}
        passages = tools.search_kb(query=question)
        if not passages:
            return {"answer": "I could not find this in the knowledge base.", "citations": []}
        asked = words(question)
        best = max(passages, key=lambda passage: len(asked & words(passage.text or "")))
        text = best.text or ""
        answer = first_sentence(text) if params.prompt_version == "p1" else text
        return {"answer": answer, "citations": [best.doc_id]}
