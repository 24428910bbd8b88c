"""A deterministic RAG system in two versions, for the comparison gate tests.

Case ``n`` (``input.n``) retrieves one passage, ``doc-<n>``. What each version
answers depends only on ``n % 20``:

* answer_correct: the baseline is right on residues 0..11 (60%), the candidate on
  1..17 (85%). They disagree in both directions: residue 0 regresses, 12..17 improve.
* citations_valid: the baseline cites a passage it was not given on residues 3, 9
  and 15 (85% valid); the candidate always cites its context (100%).
"""

from __future__ import annotations

from oloproof import Passage, Retrieval, rag_system

BASELINE_CORRECT = frozenset(range(12))
CANDIDATE_CORRECT = frozenset(range(1, 18))
BASELINE_BAD_CITATIONS = frozenset({3, 9, 15})


class _Shared:
    def retrieve(self, input, depth):
        n = int(input["n"])
        passage = Passage(doc_id=f"doc-{n}", score=1.0, text=f"The answer to question {n} is yes.")
        return Retrieval(query=input["question"], depth=depth, candidates=(passage,))


@rag_system(name="gate-rag", version="v1", depth=1, top_k=1, index_version="idx-1")
class Baseline(_Shared):
    def generate(self, input, context):
        n = int(input["n"])
        answer = "yes" if n % 20 in BASELINE_CORRECT else "no"
        cited = "doc-elsewhere" if n % 20 in BASELINE_BAD_CITATIONS else context[0].doc_id
        return {"answer": answer, "citations": [cited]}


@rag_system(name="gate-rag", version="v2", depth=1, top_k=1, index_version="idx-1")
class Candidate(_Shared):
    def generate(self, input, context):
        n = int(input["n"])
        answer = "yes" if n % 20 in CANDIDATE_CORRECT else "no"
        return {"answer": answer, "citations": [context[0].doc_id]}
