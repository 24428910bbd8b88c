"""The context assembly rule: top-k cut-off, then a running token budget in rank order."""

from __future__ import annotations

from oloproof.stages._assemble import assemble_context


def _candidates(n: int) -> list[dict]:
    return [
        {"doc_id": f"d{i}", "chunk_id": None if i % 2 else f"c{i}", "text": f"text {i}", "score": 1.0 / i}
        for i in range(1, n + 1)
    ]


def _ids(entries):
    return [entry["doc_id"] for entry in entries]


def test_without_budget_top_k_are_kept_and_the_rest_dropped_beyond_top_k():
    kept, dropped = assemble_context(_candidates(4), top_k=2, token_budget=None, token_counts=None)
    assert kept == [
        {"position": 1, "doc_id": "d1", "chunk_id": None, "text": "text 1", "tokens": None},
        {"position": 2, "doc_id": "d2", "chunk_id": "c2", "text": "text 2", "tokens": None},
    ]
    assert dropped == [
        {"position": 3, "doc_id": "d3", "chunk_id": None, "text": "text 3", "reason": "beyond_top_k", "tokens": None},
        {"position": 4, "doc_id": "d4", "chunk_id": "c4", "text": "text 4", "reason": "beyond_top_k", "tokens": None},
    ]


def test_top_k_larger_than_the_retrieval_keeps_everything():
    kept, dropped = assemble_context(_candidates(2), top_k=5, token_budget=None, token_counts=None)
    assert [k["position"] for k in kept] == [1, 2]
    assert dropped == []


def test_empty_retrieval_gives_an_empty_context():
    assert assemble_context([], top_k=3, token_budget=10, token_counts=[]) == ([], [])


def test_budget_is_a_running_total_in_rank_order_and_a_later_fitting_passage_is_kept():
    # 6 fits (6), 5 does not (11 > 10), 4 fits (10): the later smaller one is kept.
    kept, dropped = assemble_context(_candidates(4), top_k=3, token_budget=10, token_counts=[6, 5, 4])
    assert [(k["position"], k["doc_id"], k["tokens"]) for k in kept] == [(1, "d1", 6), (3, "d3", 4)]
    assert [(d["position"], d["reason"], d["tokens"]) for d in dropped] == [
        (2, "token_budget", 5),
        (4, "beyond_top_k", None),
    ]


def test_exact_fit_is_kept():
    kept, dropped = assemble_context(_candidates(2), top_k=2, token_budget=10, token_counts=[4, 6])
    assert _ids(kept) == ["d1", "d2"] and dropped == []


def test_a_passage_larger_than_the_whole_budget_is_dropped_and_later_ones_still_fit():
    kept, dropped = assemble_context(_candidates(3), top_k=3, token_budget=10, token_counts=[11, 3, 7])
    assert [(k["position"], k["tokens"]) for k in kept] == [(2, 3), (3, 7)]
    assert dropped == [
        {"position": 1, "doc_id": "d1", "chunk_id": None, "text": "text 1", "reason": "token_budget", "tokens": 11}
    ]


def test_passages_are_never_reordered_or_truncated():
    candidates = _candidates(5)
    kept, dropped = assemble_context(candidates, top_k=5, token_budget=9, token_counts=[2, 8, 3, 1, 4])
    assert [k["position"] for k in kept] == [1, 3, 4]  # 2, 2+3, 2+3+1; then 4 would make 10
    assert [k["text"] for k in kept] == ["text 1", "text 3", "text 4"]
    assert [d["position"] for d in dropped] == [2, 5]
    assert all(d["reason"] == "token_budget" for d in dropped)
    # Positions are 1-based ranks in the retriever's order, across kept and dropped.
    assert sorted(e["position"] for e in kept + dropped) == [1, 2, 3, 4, 5]


def test_zero_token_passages_always_fit():
    kept, dropped = assemble_context(_candidates(3), top_k=3, token_budget=1, token_counts=[0, 2, 0])
    assert [k["position"] for k in kept] == [1, 3]
    assert [d["position"] for d in dropped] == [2]


def test_the_score_is_not_copied_into_the_context():
    kept, _ = assemble_context(_candidates(1), top_k=1, token_budget=None, token_counts=None)
    assert "score" not in kept[0]
