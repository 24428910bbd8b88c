"""The ranking kernels against trec_eval (through pytrec_eval) on random queries."""

from __future__ import annotations

import numpy as np
import pytest

from oloproof.metrics import (
    hit_rate_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
    relevance_gains,
)

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = (1, 3, 5, 10)
TOLERANCE = 1e-6
N_QUERIES = 200


def random_collection(seed: int, *, queries: int = N_QUERIES, top_grade: int = 3, max_depth: int = 20,
                      min_pool: int = 5) -> tuple[dict, dict]:
    """Graded qrels (0..``top_grade``, with judged non-relevant 0s) and runs of depth
    1..``max_depth``.

    Every query has at least one relevant document; many have relevant documents
    that the run never retrieves, and some retrieve no relevant document at all.
    """
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, list[str]] = {}
    for q in range(queries):
        pool = [f"d{i}" for i in range(int(rng.integers(min_pool, 40)))]
        judged = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
        grades = {str(doc): int(rng.integers(0, top_grade + 1)) for doc in judged}
        if not any(g > 0 for g in grades.values()):
            grades[str(judged[0])] = int(rng.integers(1, top_grade + 1))
        depth = int(rng.integers(1, max_depth + 1))
        if q % 10 == 0:
            candidates = [doc for doc in pool if grades.get(doc, 0) == 0] or [f"unjudged{i}" for i in range(depth)]
            ranking = [str(d) for d in rng.permutation(candidates)[:depth]]
        else:
            ranking = [str(d) for d in rng.permutation(pool)[:depth]]
        qrels[f"q{q}"] = grades
        runs[f"q{q}"] = ranking
    return qrels, runs


def scored(ranking: list[str]) -> dict[str, float]:
    """A run as trec_eval reads it: strictly decreasing scores, so its order is the run's."""
    return {doc: float(len(ranking) - rank) for rank, doc in enumerate(ranking)}


@pytest.fixture(scope="module")
def collection() -> tuple[dict, dict]:
    return random_collection(20240611)


@pytest.fixture(scope="module")
def trec(collection: tuple[dict, dict]) -> dict[str, dict[str, float]]:
    qrels, runs = collection
    cut = ",".join(str(k) for k in CUTOFFS)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {f"ndcg_cut.{cut}", f"recall.{cut}", f"P.{cut}", f"success.{cut}"}
    )
    return evaluator.evaluate({q: scored(r) for q, r in runs.items()})


def test_collection_covers_the_edge_cases(collection: tuple[dict, dict]) -> None:
    qrels, runs = collection
    missed = [
        q for q in qrels
        if any(g > 0 and d not in runs[q] for d, g in qrels[q].items())
    ]
    empty_handed = [q for q in qrels if not any(qrels[q].get(d, 0) > 0 for d in runs[q])]
    judged_zero = [q for q in qrels if 0 in qrels[q].values()]
    short = [q for q in runs if len(runs[q]) < max(CUTOFFS)]
    assert len(missed) > N_QUERIES // 2
    assert len(empty_handed) >= N_QUERIES // 10
    assert len(judged_zero) > N_QUERIES // 2
    assert len(short) > 10


@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize(
    ("kernel", "measure"),
    [
        (ndcg_at_k, "ndcg_cut"),
        (recall_at_k, "recall"),
        (precision_at_k, "P"),
        (hit_rate_at_k, "success"),
    ],
)
def test_matches_trec_eval(collection, trec, kernel, measure: str, k: int) -> None:
    qrels, runs = collection
    for q, ranking in runs.items():
        gains, ideal = relevance_gains(ranking, qrels[q])
        ours = kernel(gains, ideal, k)
        assert ours == pytest.approx(trec[q][f"{measure}_{k}"], abs=TOLERANCE), (q, measure, k)


@pytest.mark.parametrize("k", CUTOFFS)
def test_reciprocal_rank_matches_trec_eval_on_the_cut_run(collection, k: int) -> None:
    qrels, runs = collection
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"})
    trec = evaluator.evaluate({q: scored(r[:k]) for q, r in runs.items()})
    for q, ranking in runs.items():
        gains, ideal = relevance_gains(ranking, qrels[q])
        assert reciprocal_rank_at_k(gains, ideal, k) == pytest.approx(
            trec[q]["recip_rank"], abs=TOLERANCE
        ), q


def test_the_reference_can_tell_linear_from_exponential_gain(collection, trec) -> None:
    """Guards the comparison itself: the exponential variant must disagree somewhere."""
    qrels, runs = collection
    disagreements = 0
    for q, ranking in runs.items():
        gains, ideal = relevance_gains(ranking, qrels[q])
        exp_gains, exp_ideal = np.exp2(gains) - 1.0, np.exp2(ideal) - 1.0
        if abs(ndcg_at_k(exp_gains, exp_ideal, 10) - trec[q]["ndcg_cut_10"]) > TOLERANCE:
            disagreements += 1
    assert disagreements > N_QUERIES // 4
