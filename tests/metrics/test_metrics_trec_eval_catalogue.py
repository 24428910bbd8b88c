"""P@k, AP@k, R-precision and relevance levels against trec_eval (through pytrec_eval).

Graded qrels (0..4) at every relevance level 1..4 (trec_eval's ``-l``, pytrec_eval's
``relevance_level``): a unit is relevant when its grade reaches the level, both in
the run and in the count of relevant units. Exponential-gain nDCG has no trec_eval
measure; its reference is trec_eval's ``ndcg_cut`` on qrels whose grades are
replaced by ``2**grade - 1`` (trec_eval's gain is the grade itself), and a hand
computation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics import (
    MetricSpec,
    average_precision_at_k,
    hit_rate_at_k,
    ndcg_at_k,
    parse_metric,
    precision_at_k,
    r_precision,
    ranked_metric,
    recall_at_k,
    reciprocal_rank_at_k,
    relevance_gains,
)

pytrec_eval = pytest.importorskip("pytrec_eval")
from test_metrics_trec_eval import random_collection, scored

CUTOFFS = (1, 3, 5, 10, 20)
LEVELS = (1, 2, 3, 4)
TOLERANCE = 1e-12
N_QUERIES = 300


@pytest.fixture(scope="module")
def collection() -> tuple[dict, dict]:
    return random_collection(20240612, queries=N_QUERIES, top_grade=4, max_depth=25, min_pool=3)


@pytest.fixture(scope="module")
def trec(collection) -> dict[int, dict[str, dict[str, float]]]:
    """trec_eval's measures at every relevance level."""
    qrels, runs = collection
    cut = ",".join(str(k) for k in CUTOFFS)
    measures = {f"P.{cut}", f"map_cut.{cut}", f"recall.{cut}", f"success.{cut}", "Rprec"}
    run = {q: scored(r) for q, r in runs.items()}
    return {
        level: pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)
        for level in LEVELS
    }


def _queries_at(collection, level: int):
    """``(query, gains, ideal)`` of the queries with a unit of grade >= ``level``."""
    qrels, runs = collection
    for q, ranking in runs.items():
        gains, ideal = relevance_gains(ranking, qrels[q])
        if np.any(ideal >= level):
            yield q, gains, ideal


def test_every_level_has_queries_and_the_levels_differ(collection, trec) -> None:
    counts = {level: sum(1 for _ in _queries_at(collection, level)) for level in LEVELS}
    assert all(count > N_QUERIES // 4 for count in counts.values()), counts
    differing = sum(1 for q in trec[1] if trec[1][q]["P_10"] != trec[3][q]["P_10"])
    assert differing > N_QUERIES // 4


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("k", CUTOFFS)
@pytest.mark.parametrize(
    ("kernel", "measure"),
    [
        (precision_at_k, "P"),
        (average_precision_at_k, "map_cut"),
        (recall_at_k, "recall"),
        (hit_rate_at_k, "success"),
    ],
)
def test_binary_metrics_match_trec_eval_at_each_level(collection, trec, kernel, measure, k, level) -> None:
    for q, gains, ideal in _queries_at(collection, level):
        ours = kernel(gains, ideal, k, relevance_level=level)
        assert ours == pytest.approx(trec[level][q][f"{measure}_{k}"], abs=TOLERANCE), (q, measure, k, level)


@pytest.mark.parametrize("level", LEVELS)
def test_r_precision_matches_trec_eval_at_each_level(collection, trec, level) -> None:
    for q, gains, ideal in _queries_at(collection, level):
        ours = r_precision(gains, ideal, relevance_level=level)
        assert ours == pytest.approx(trec[level][q]["Rprec"], abs=TOLERANCE), (q, level)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("k", CUTOFFS)
def test_reciprocal_rank_matches_trec_eval_on_the_cut_run_at_each_level(collection, level, k) -> None:
    qrels, runs = collection
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=level)
    trec = evaluator.evaluate({q: scored(r[:k]) for q, r in runs.items()})
    for q, gains, ideal in _queries_at(collection, level):
        ours = reciprocal_rank_at_k(gains, ideal, k, relevance_level=level)
        assert ours == pytest.approx(trec[q]["recip_rank"], abs=TOLERANCE), (q, k, level)


def test_the_default_level_is_trec_evals_default_on_integer_grades(collection, trec) -> None:
    for q, gains, ideal in _queries_at(collection, 1):
        assert precision_at_k(gains, ideal, 5) == precision_at_k(gains, ideal, 5, relevance_level=1)
        assert average_precision_at_k(gains, ideal, 10) == pytest.approx(trec[1][q]["map_cut_10"], abs=TOLERANCE)
        assert r_precision(gains, ideal) == pytest.approx(trec[1][q]["Rprec"], abs=TOLERANCE)


@pytest.mark.parametrize("k", CUTOFFS)
def test_exponential_ndcg_is_trec_evals_ndcg_on_exponential_grades(collection, k) -> None:
    qrels, runs = collection
    exponential_qrels = {q: {d: 2**g - 1 for d, g in grades.items()} for q, grades in qrels.items()}
    trec = pytrec_eval.RelevanceEvaluator(exponential_qrels, {f"ndcg_cut.{k}"}).evaluate(
        {q: scored(r) for q, r in runs.items()}
    )
    linear = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"}).evaluate(
        {q: scored(r) for q, r in runs.items()}
    )
    differing = 0
    for q, gains, ideal in _queries_at(collection, 1):
        ours = ndcg_at_k(gains, ideal, k, gain="exponential")
        assert ours == pytest.approx(trec[q][f"ndcg_cut_{k}"], abs=TOLERANCE), (q, k)
        assert ndcg_at_k(gains, ideal, k) == pytest.approx(linear[q][f"ndcg_cut_{k}"], abs=TOLERANCE), (q, k)
        differing += abs(ours - linear[q][f"ndcg_cut_{k}"]) > 1e-6
    assert differing > N_QUERIES // 10


# Hand-computed examples ------------------------------------------------------------

# Ranking: grade 0, 3, 0, 1, 2; judged relevant: 3, 2, 1 and a never-retrieved 2.
GAINS = [0.0, 3.0, 0.0, 1.0, 2.0]
IDEAL = [3.0, 2.0, 2.0, 1.0]


def test_average_precision_by_hand() -> None:
    # Relevant at ranks 2, 4, 5: precisions 1/2, 2/4, 3/5, over R = 4 relevant units.
    assert average_precision_at_k(GAINS, IDEAL, 5) == pytest.approx((1 / 2 + 2 / 4 + 3 / 5) / 4)
    assert average_precision_at_k(GAINS, IDEAL, 3) == pytest.approx((1 / 2) / 4)
    assert average_precision_at_k(GAINS, IDEAL, 1) == 0.0
    # At level 2: relevant at ranks 2 and 5, R = 3.
    assert average_precision_at_k(GAINS, IDEAL, 5, relevance_level=2) == pytest.approx((1 / 2 + 2 / 5) / 3)
    assert average_precision_at_k([2.0, 1.0], [2.0, 1.0], 2) == 1.0


def test_r_precision_by_hand() -> None:
    # R = 4: ranks 1-4 hold two relevant units.
    assert r_precision(GAINS, IDEAL) == pytest.approx(2 / 4)
    # Level 2: R = 3; ranks 1-3 hold one (grade 3).
    assert r_precision(GAINS, IDEAL, relevance_level=2) == pytest.approx(1 / 3)
    # Level 3: R = 1; rank 1 holds a 0.
    assert r_precision(GAINS, IDEAL, relevance_level=3) == 0.0
    # A run shorter than R still divides by R; the ideal ranking scores 1.
    assert r_precision([3.0], IDEAL) == pytest.approx(1 / 4)
    assert r_precision([3.0, 2.0, 2.0, 1.0, 0.0], IDEAL) == 1.0


def test_relevance_level_by_hand() -> None:
    assert hit_rate_at_k(GAINS, IDEAL, 4) == 1.0
    assert hit_rate_at_k([0.0, 1.0], [2.0, 1.0], 2, relevance_level=2) == 0.0
    assert recall_at_k(GAINS, IDEAL, 4, relevance_level=2) == pytest.approx(1 / 3)
    assert precision_at_k(GAINS, IDEAL, 4, relevance_level=3) == pytest.approx(1 / 4)
    assert reciprocal_rank_at_k(GAINS, IDEAL, 5, relevance_level=2) == pytest.approx(1 / 2)
    assert reciprocal_rank_at_k([1.0, 0.0, 2.0], [2.0, 1.0], 3, relevance_level=2) == pytest.approx(1 / 3)


def test_fractional_grades_count_by_default_and_not_below_an_explicit_level() -> None:
    gains, ideal = relevance_gains(["a", "b"], {"a": 0.5, "b": 1.0})
    assert recall_at_k(gains, ideal, 1) == 0.5
    assert recall_at_k(gains, ideal, 1, relevance_level=1) == 0.0
    assert recall_at_k(gains, ideal, 2, relevance_level=1) == 1.0
    assert precision_at_k(gains, ideal, 2, relevance_level=0.5) == 1.0


@pytest.mark.parametrize(
    "kernel",
    [hit_rate_at_k, recall_at_k, precision_at_k, reciprocal_rank_at_k, average_precision_at_k],
)
def test_no_unit_at_the_level_is_undefined(kernel) -> None:
    with pytest.raises(StatsError, match="no_relevance_labels"):
        kernel([1.0, 2.0], [2.0, 1.0], 3, relevance_level=3)
    with pytest.raises(StatsError):
        r_precision([1.0], [1.0], relevance_level=1.5)


@pytest.mark.parametrize("level", [0, -1, True, float("nan"), float("inf"), "2"])
def test_bad_relevance_levels(level) -> None:
    with pytest.raises(ConfigError) as info:
        precision_at_k(GAINS, IDEAL, 3, relevance_level=level)
    assert info.value.field == "relevance_level"
    with pytest.raises(ConfigError):
        r_precision(GAINS, IDEAL, relevance_level=level)


def test_exponential_ndcg_by_hand() -> None:
    dcg = (2**3 - 1) / math.log2(3) + (2**1 - 1) / math.log2(5) + (2**2 - 1) / math.log2(6)
    idcg = (2**3 - 1) / 1 + (2**2 - 1) / math.log2(3) + (2**2 - 1) / 2 + (2**1 - 1) / math.log2(5)
    assert ndcg_at_k(GAINS, IDEAL, 5, gain="exponential") == pytest.approx(dcg / idcg, abs=1e-15)
    assert ndcg_at_k([3.0, 2.0, 2.0, 1.0], IDEAL, 4, gain="exponential") == 1.0
    with pytest.raises(ConfigError) as info:
        ndcg_at_k(GAINS, IDEAL, 5, gain="quadratic")  # type: ignore[arg-type]
    assert info.value.field == "gain"


def test_binary_grades_give_the_same_ndcg_either_way() -> None:
    assert ndcg_at_k([0.0, 1.0, 1.0], [1.0, 1.0, 1.0], 3, gain="exponential") == ndcg_at_k(
        [0.0, 1.0, 1.0], [1.0, 1.0, 1.0], 3
    )


def test_ranked_metric_dispatches_the_new_metrics_and_options() -> None:
    assert ranked_metric(parse_metric("precision@4"), GAINS, IDEAL) == pytest.approx(2 / 4)
    assert ranked_metric(parse_metric("map@5"), GAINS, IDEAL, relevance_level=2) == pytest.approx((1 / 2 + 2 / 5) / 3)
    assert ranked_metric(parse_metric("r_precision"), GAINS, IDEAL) == pytest.approx(2 / 4)
    assert ranked_metric(parse_metric("ndcg@5"), GAINS, IDEAL, gain="exponential") == ndcg_at_k(
        GAINS, IDEAL, 5, gain="exponential"
    )
    with pytest.raises(ConfigError) as info:
        ranked_metric(parse_metric("ndcg@5"), GAINS, IDEAL, relevance_level=2)
    assert info.value.field == "relevance_level"
    with pytest.raises(ConfigError) as info:
        ranked_metric(parse_metric("recall@5"), GAINS, IDEAL, gain="exponential")
    assert info.value.field == "gain"
    with pytest.raises(ConfigError):
        ranked_metric(MetricSpec("holes", None), GAINS, IDEAL)
