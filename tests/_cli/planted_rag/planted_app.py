"""A RAG system with planted faults, one failed case for every diagnosis label.

Retrieval follows an explicit plan (``retrieval_plan.json``: question -> doc ids in
rank order), so each case's relevant passage sits exactly where the test needs it.
The generator answers with the first sentence of the context passage that shares
the most words with the question (ties: the earlier passage).

Two side channels, both read at call time from environment variables so that the
state belongs to whoever set them (not to whichever copy of this module is
imported first):

* ``PLANTED_RAG_CALLS``: a file that gets one line per ``retrieve`` call;
* ``PLANTED_RAG_SEEN``: a directory remembering the questions of ``flaky`` cases
  already answered; a flaky case fails the first time only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

HERE = Path(__file__).resolve().parent
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "get", "how", "i", "if", "in",
    "is", "it", "my", "of", "on", "or", "our", "the", "this", "to", "we", "what", "when", "where", "which", "who",
    "will", "with", "you", "your",
})


def words(text: str) -> set[str]:
    """Distinct lower-case content words."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]


def _first_sight(question: str) -> bool:
    """True the first time a flaky question is answered under ``$PLANTED_RAG_SEEN``."""
    seen = Path(os.environ["PLANTED_RAG_SEEN"])
    seen.mkdir(parents=True, exist_ok=True)
    marker = seen / hashlib.sha256(question.encode()).hexdigest()
    try:
        marker.touch(exist_ok=False)
    except FileExistsError:
        return False
    return True


@rag_system(
    name="planted-rag",
    version="planted-1",
    depth=6,
    top_k=2,
    token_budget=40,
    index_version="planted-kb-1",
)
class PlantedRag:
    def __init__(self) -> None:
        with (HERE / "knowledge_base.jsonl").open(encoding="utf-8") as handle:
            self.documents = {d["doc_id"]: d for d in map(json.loads, filter(str.strip, handle))}
        self.plan = json.loads((HERE / "retrieval_plan.json").read_text(encoding="utf-8"))

    def retrieve(self, input, depth):
        calls = os.environ.get("PLANTED_RAG_CALLS")
        if calls:
            with open(calls, "a", encoding="utf-8") as handle:
                handle.write(input["question"] + "\n")
        ranked = self.plan[input["question"]][:depth]
        passages = [
            Passage(doc_id=doc_id, score=float(len(ranked) - rank), text=self.documents[doc_id]["text"])
            for rank, doc_id in enumerate(ranked)
        ]
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(passages))

    def generate(self, input, context):
        if input.get("flaky") and _first_sight(input["question"]):
            return {"answer": "I am not sure yet.", "citations": []}
        if not context:
            return {"answer": "I could not find this.", "citations": []}
        question = words(input["question"])
        best = max(context, key=lambda passage: len(question & words(passage.text or "")))
        return {"answer": first_sentence(best.text or ""), "citations": [best.doc_id]}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
