"""citation_validity on hand-made cases: every cited id names a passage of the context."""

from __future__ import annotations

from oloproof.evaluators import CaseView, CitationValidity, JudgeContext, Verdict, build_evaluators

CONTEXT = [
    {"position": 1, "doc_id": "kb-01", "chunk_id": None, "text": "a", "tokens": None},
    {"position": 3, "doc_id": "kb-07", "chunk_id": "c2", "text": "b", "tokens": None},
]


def view(output, context=CONTEXT) -> CaseView:
    return CaseView(
        case_id="c1",
        input="q",
        expected={},
        metadata={},
        output=output,
        context=context,
        candidates=[] if context is not None else None,
    )


def verdict(case: CaseView, **options) -> Verdict:
    (evaluator,) = build_evaluators([{"type": "citation_validity", **options}], rag=True)
    fields = evaluator.read(case)
    if isinstance(fields, Verdict):
        return fields
    return evaluator.judge(fields, JudgeContext())


def test_default_criterion_and_class():
    (evaluator,) = build_evaluators([{"type": "citation_validity"}], rag=True)
    assert isinstance(evaluator, CitationValidity)
    assert evaluator.criterion == "citations_valid"
    assert evaluator.needs_retrieval is True and evaluator.kind == "proportion"


def test_citations_inside_the_context_pass():
    assert verdict(view({"citations": ["kb-01", "kb-07"]})) == Verdict(score=1.0, passed=True)


def test_a_citation_outside_the_context_fails_and_names_the_invalid_ids():
    result = verdict(view({"citations": ["kb-01", "kb-99", "kb-02", "kb-07"]}))
    assert result == Verdict(
        score=0.0, passed=False, reason="cited_outside_context", detail={"invalid": ["kb-99", "kb-02"]}
    )


def test_a_retrieved_but_dropped_passage_is_outside_the_context():
    # Only the assembled context counts, not the candidates.
    case = CaseView(
        case_id="c1", input="q", expected={}, metadata={},
        output={"citations": ["kb-05"]},
        context=CONTEXT[:1],
        candidates=[{"doc_id": "kb-01"}, {"doc_id": "kb-05"}],
    )
    assert verdict(case).detail == {"invalid": ["kb-05"]}


def test_doc_id_hash_chunk_id_citations():
    assert verdict(view({"citations": ["kb-07#c2"]})).passed is True
    assert verdict(view({"citations": ["kb-07#c9"]})).detail == {"invalid": ["kb-07#c9"]}
    # A passage without a chunk id is cited by its doc id only.
    assert verdict(view({"citations": ["kb-01#None"]})).detail == {"invalid": ["kb-01#None"]}


def test_no_citations_passes_unless_required():
    for output in ({"citations": []}, {"answer": "no citations field"}, {"citations": None}):
        assert verdict(view(output)) == Verdict(score=1.0, passed=True, reason="no_citations")
        assert verdict(view(output), require_citations=True) == Verdict(
            score=0.0, passed=False, reason="no_citations"
        )


def test_a_single_id_and_integer_ids_are_read_as_strings():
    context = [{"position": 1, "doc_id": "7", "chunk_id": None, "text": "t"}]
    assert verdict(view({"citations": "kb-01"})).passed is True
    assert verdict(view({"citations": 7}, context)).passed is True
    assert verdict(view({"citations": [7, 8]}, context)).detail == {"invalid": ["8"]}


def test_a_custom_field():
    assert verdict(view({"meta": {"sources": ["kb-99"]}}), field="meta.sources").detail == {"invalid": ["kb-99"]}


def test_no_context_is_excluded():
    assert verdict(view({"citations": ["kb-01"]}, context=None)) == Verdict(
        status="excluded", reason="no_context"
    )


def test_an_empty_context_makes_every_citation_invalid():
    assert verdict(view({"citations": ["kb-01"]}, context=[])).detail == {"invalid": ["kb-01"]}
