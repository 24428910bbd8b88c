"""Retrieval evaluators on hand-made cases: hit_rate, recall, mrr, ndcg."""

from __future__ import annotations

import math

import pytest

from oloproof._exceptions import EvaluatorConfigError
from oloproof.evaluators import CaseView, HitRate, JudgeContext, Mrr, Ndcg, Recall, Verdict, build_evaluators


def passage(doc_id: str, chunk_id: str | None = None) -> dict:
    return {"doc_id": doc_id, "chunk_id": chunk_id, "score": None, "text": f"{doc_id} {chunk_id}"}


def view(candidates, relevant=None) -> CaseView:
    expected = {} if relevant is None else {"relevant": relevant}
    return CaseView(
        case_id="c1",
        input="q",
        expected=expected,
        metadata={},
        output={"answer": "x"},
        context=[],
        candidates=candidates,
    )


def build(entry: dict):
    (evaluator,) = build_evaluators([entry], rag=True)
    return evaluator


def score(entry: dict, case: CaseView) -> float:
    evaluator = build(entry)
    fields = evaluator.read(case)
    assert not isinstance(fields, Verdict), fields
    result = evaluator.judge(fields, JudgeContext())
    assert result.status == "observed" and result.passed is None
    return result.score


RANKING = [passage("d3"), passage("d1"), passage("d4"), passage("d2")]
LABELS = [{"doc_id": "d1"}, {"doc_id": "d2"}]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"type": "hit_rate", "k": 1}, 0.0),
        ({"type": "hit_rate", "k": 2}, 1.0),
        ({"type": "recall", "k": 2}, 0.5),
        ({"type": "recall", "k": 3}, 0.5),
        ({"type": "recall", "k": 4}, 1.0),
        ({"type": "mrr", "k": 1}, 0.0),
        ({"type": "mrr", "k": 3}, 0.5),
        ({"type": "ndcg", "k": 1}, 0.0),
        (
            {"type": "ndcg", "k": 4},
            (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)),
        ),
    ],
)
def test_metrics_at_k_cut_off(entry, expected):
    assert score(entry, view(RANKING, LABELS)) == pytest.approx(expected, abs=1e-12)


def test_criterion_names_carry_the_cut_off():
    assert [build({"type": t, "k": 2}).criterion for t in ("hit_rate", "recall", "mrr", "ndcg")] == [
        "hit_rate_at_2",
        "recall_at_2",
        "mrr_at_2",
        "ndcg_at_2",
    ]
    assert build({"type": "ndcg", "k": 6, "criterion": "ranking"}).criterion == "ranking"
    assert [type(build({"type": t, "k": 1})) for t in ("hit_rate", "recall", "mrr", "ndcg")] == [
        HitRate,
        Recall,
        Mrr,
        Ndcg,
    ]
    assert all(build({"type": t, "k": 1}).kind == "mean" for t in ("hit_rate", "recall", "mrr", "ndcg"))


def test_only_the_first_k_candidates_are_read():
    evaluator = build({"type": "recall", "k": 2})
    fields = evaluator.read(view(RANKING, LABELS))
    assert fields == {"retrieved": ["d3", "d1"], "grades": {"d1": 1.0, "d2": 1.0}}
    # A change below the cut-off reads the same fields (the same judgment identity).
    changed = evaluator.read(view(RANKING[:2] + [passage("d9")], LABELS))
    assert changed == fields


def test_document_unit_counts_duplicate_chunks_of_one_doc_once():
    ranking = [passage("d1", "a"), passage("d1", "b"), passage("d2", "a")]
    labels = [{"doc_id": "d1"}, {"doc_id": "d2"}]
    assert score({"type": "recall", "k": 2}, view(ranking, labels)) == 0.5
    assert score({"type": "recall", "k": 3}, view(ranking, labels)) == 1.0
    # The duplicate still occupies rank 2, so d2 is discounted at rank 3.
    expected_ndcg = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert score({"type": "ndcg", "k": 3}, view(ranking, labels)) == pytest.approx(expected_ndcg)


def test_chunk_unit_counts_each_chunk():
    ranking = [passage("d1", "b"), passage("d1", "a"), passage("d2", "a")]
    labels = [{"doc_id": "d1", "chunk_id": "a"}, {"doc_id": "d1", "chunk_id": "c"}]
    chunk = {"relevance_unit": "chunk"}
    assert score({"type": "hit_rate", "k": 1, **chunk}, view(ranking, labels)) == 0.0
    assert score({"type": "mrr", "k": 3, **chunk}, view(ranking, labels)) == 0.5
    assert score({"type": "recall", "k": 3, **chunk}, view(ranking, labels)) == 0.5
    # The same labels at document level: d1 is found at rank 1, once.
    assert score({"type": "hit_rate", "k": 1}, view(ranking, labels)) == 1.0
    assert score({"type": "recall", "k": 3}, view(ranking, labels)) == 1.0
    assert build({"type": "recall", "k": 3, **chunk}).read(view(ranking, labels)) == {
        "retrieved": ["d1#b", "d1#a", "d2#a"],
        "grades": {"d1#a": 1.0, "d1#c": 1.0},
    }


def test_graded_relevance_uses_linear_gain():
    labels = [{"doc_id": "d1", "grade": 2}, {"doc_id": "d2", "grade": 1}, {"doc_id": "d5", "grade": 0}]
    ranking = [passage("d2"), passage("d5"), passage("d1")]
    dcg = 1 / math.log2(2) + 0 + 2 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert score({"type": "ndcg", "k": 3}, view(ranking, labels)) == pytest.approx(dcg / ideal)
    # Grade 0 is judged non-relevant: it neither hits nor counts toward recall.
    assert score({"type": "recall", "k": 2}, view(ranking, labels)) == 0.5
    assert score({"type": "mrr", "k": 3}, view([passage("d5"), passage("d1")], labels)) == 0.5


def test_the_best_grade_of_a_doc_wins_at_document_level():
    labels = [{"doc_id": "d1", "chunk_id": "a", "grade": 1}, {"doc_id": "d1", "chunk_id": "b", "grade": 3}]
    assert build({"type": "ndcg", "k": 1}).read(view([passage("d1", "a")], labels)) == {
        "retrieved": ["d1"],
        "grades": {"d1": 3.0},
    }


def test_no_relevance_labels_is_excluded():
    for relevant in (None, []):
        for kind in ("hit_rate", "recall", "mrr", "ndcg"):
            result = build({"type": kind, "k": 2}).read(view(RANKING, relevant))
            assert result == Verdict(status="excluded", reason="no_relevance_labels")


def test_only_zero_grades_is_excluded():
    result = build({"type": "recall", "k": 2}).read(view(RANKING, [{"doc_id": "d1", "grade": 0}]))
    assert result == Verdict(status="excluded", reason="no_relevant_units")


def test_no_retrieval_is_excluded():
    case = CaseView(case_id="c", input="q", expected={"relevant": LABELS}, metadata={}, output="x")
    assert build({"type": "mrr", "k": 2}).read(case) == Verdict(status="excluded", reason="no_retrieval")


def test_empty_retrieval_scores_zero():
    assert score({"type": "hit_rate", "k": 3}, view([], LABELS)) == 0.0
    assert score({"type": "ndcg", "k": 3}, view([], LABELS)) == 0.0


@pytest.mark.parametrize("k", [0, -1, "two"])
def test_k_must_be_a_positive_integer(k):
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "hit_rate", "k": k}], rag=True)
    assert raised.value.field == "evaluators.0.k"


def test_k_is_required_and_relevance_unit_is_checked():
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "ndcg"}], rag=True)
    assert (raised.value.field, raised.value.message) == ("evaluators.0.k", "required option of ndcg is missing")
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "ndcg", "k": 3, "relevance_unit": "passage"}], rag=True)
    assert raised.value.field == "evaluators.0.relevance_unit"


def test_retrieval_evaluators_need_a_rag_system():
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([{"type": "contains"}, {"type": "recall", "k": 2}], rag=False)
    assert (raised.value.field, raised.value.message) == (
        "evaluators.1.type",
        "recall reads the retrieval; it needs a @rag_system (or an agent with a context tool)",
    )
