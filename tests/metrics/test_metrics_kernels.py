"""Units to gains, and each ranking kernel on hand-computed examples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics import (
    best_relevant_position,
    dcg_at_k,
    hit_rate_at_k,
    ndcg_at_k,
    parse_metric,
    precision_at_k,
    ranked_metric,
    recall_at_k,
    reciprocal_rank_at_k,
    relevance_gains,
)

KERNELS = [hit_rate_at_k, recall_at_k, precision_at_k, reciprocal_rank_at_k, ndcg_at_k]


# relevance_gains ----------------------------------------------------------------


def test_gains_follow_the_ranking_and_ideal_holds_every_relevant_unit() -> None:
    gains, ideal = relevance_gains(["a", "x", "b", "c"], {"a": 1, "b": 3, "c": 0, "d": 2})
    assert gains.tolist() == [1.0, 0.0, 3.0, 0.0]
    assert ideal.tolist() == [3.0, 2.0, 1.0]  # d was never retrieved; c is judged 0
    assert gains.dtype == ideal.dtype == np.float64


def test_a_repeated_unit_counts_only_at_its_first_position() -> None:
    # Two chunks of document "a" mapped to the document unit.
    gains, ideal = relevance_gains(["x", "a", "a", "b", "a"], {"a": 2, "b": 1})
    assert gains.tolist() == [0.0, 2.0, 0.0, 1.0, 0.0]
    assert recall_at_k(gains, ideal, 5) == 1.0
    assert precision_at_k(gains, ideal, 5) == pytest.approx(2 / 5)
    assert ndcg_at_k(gains, ideal, 5) <= 1.0


def test_chunk_units_are_judged_one_by_one() -> None:
    grades = {"doc1#c2": 2, "doc2#c1": 1}
    gains, ideal = relevance_gains(["doc1#c1", "doc1#c2", "doc2#c1"], grades)
    assert gains.tolist() == [0.0, 2.0, 1.0]
    assert ideal.tolist() == [2.0, 1.0]


def test_no_relevant_unit_gives_an_empty_ideal() -> None:
    gains, ideal = relevance_gains(["a"], {"a": 0, "b": -1})
    assert gains.tolist() == [0.0]
    assert ideal.size == 0
    gains, ideal = relevance_gains([], {})
    assert gains.size == 0 and ideal.size == 0


@pytest.mark.parametrize(
    "grades", [{"a": float("nan")}, {"a": float("inf")}, {"a": "2"}, {"a": True}]
)
def test_bad_grades_are_refused(grades: dict) -> None:
    with pytest.raises(StatsError):
        relevance_gains(["a"], grades)


def test_a_single_string_is_not_a_ranking() -> None:
    with pytest.raises(StatsError):
        relevance_gains("abc", {"a": 1})


def test_best_relevant_position() -> None:
    assert best_relevant_position([0.0, 0.0, 2.0, 1.0]) == 3
    assert best_relevant_position([1.0]) == 1
    assert best_relevant_position([0.0, 0.0]) is None
    assert best_relevant_position([]) is None
    with pytest.raises(StatsError):
        best_relevant_position([[1.0]])


# kernels ------------------------------------------------------------------------

# Ranking: rel 0, rel 3, rel 0, rel 1; a grade-2 unit was never retrieved.
GAINS = [0.0, 3.0, 0.0, 1.0]
IDEAL = [1.0, 3.0, 2.0]


@pytest.mark.parametrize(("k", "expected"), [(1, 0.0), (2, 1.0), (10, 1.0)])
def test_hit_rate(k: int, expected: float) -> None:
    assert hit_rate_at_k(GAINS, IDEAL, k) == expected


@pytest.mark.parametrize(("k", "expected"), [(1, 0.0), (2, 1 / 3), (4, 2 / 3), (20, 2 / 3)])
def test_recall(k: int, expected: float) -> None:
    assert recall_at_k(GAINS, IDEAL, k) == pytest.approx(expected)


@pytest.mark.parametrize(("k", "expected"), [(1, 0.0), (2, 1 / 2), (4, 2 / 4), (10, 2 / 10)])
def test_precision_divides_by_k(k: int, expected: float) -> None:
    assert precision_at_k(GAINS, IDEAL, k) == pytest.approx(expected)


@pytest.mark.parametrize(("k", "expected"), [(1, 0.0), (2, 0.5), (10, 0.5)])
def test_reciprocal_rank(k: int, expected: float) -> None:
    assert reciprocal_rank_at_k(GAINS, IDEAL, k) == pytest.approx(expected)


def test_ndcg_uses_linear_gain_and_all_judged_units_for_the_ideal() -> None:
    dcg = 3 / math.log2(3) + 1 / math.log2(5)
    idcg_3 = 3 / 1 + 2 / math.log2(3) + 1 / 2
    assert ndcg_at_k(GAINS, IDEAL, 3) == pytest.approx((3 / math.log2(3)) / idcg_3)
    assert ndcg_at_k(GAINS, IDEAL, 4) == pytest.approx(dcg / idcg_3)
    assert ndcg_at_k(GAINS, IDEAL, 1) == 0.0
    # Exponential gain would give a different number here.
    exp_dcg = 7 / math.log2(3) + 1 / math.log2(5)
    exp_idcg = 7 + 3 / math.log2(3) + 1 / 2
    assert ndcg_at_k(GAINS, IDEAL, 4) != pytest.approx(exp_dcg / exp_idcg)


def test_ndcg_of_the_ideal_ranking_is_one() -> None:
    assert ndcg_at_k([3.0, 2.0, 1.0], [1.0, 2.0, 3.0], 3) == pytest.approx(1.0)
    assert ndcg_at_k([2.0], [2.0], 1) == 1.0


def test_dcg() -> None:
    assert dcg_at_k([3.0, 0.0, 2.0], 3) == pytest.approx(3.0 + 2.0 / 2.0)
    assert dcg_at_k([3.0, 0.0, 2.0], 1) == 3.0
    assert dcg_at_k([], 5) == 0.0


@pytest.mark.parametrize("kernel", KERNELS)
def test_short_and_empty_rankings_are_fine(kernel) -> None:
    assert kernel([], [1.0], 5) == 0.0
    assert kernel([1.0], [1.0], 5) == pytest.approx(
        {hit_rate_at_k: 1.0, recall_at_k: 1.0, precision_at_k: 0.2,
         reciprocal_rank_at_k: 1.0, ndcg_at_k: 1.0}[kernel]
    )


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("ideal", [[], [0.0, 0.0]])
def test_no_relevant_unit_is_undefined(kernel, ideal: list[float]) -> None:
    with pytest.raises(StatsError, match="no_relevance_labels"):
        kernel([0.0, 0.0], ideal, 3)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("k", [0, -1, 2.0, True, None])
def test_bad_cutoffs(kernel, k: object) -> None:
    with pytest.raises(ConfigError) as info:
        kernel(GAINS, IDEAL, k)
    assert info.value.field == "k"


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize(
    ("gains", "ideal"),
    [
        ([[1.0]], [1.0]),
        ([float("nan")], [1.0]),
        ([-1.0], [1.0]),
        (["a"], [1.0]),
        ([1.0, 1.0], [1.0]),  # one relevant unit earned twice
        ([3.0], [1.0]),  # a grade that is not among the judged ones
    ],
)
def test_invalid_arrays(kernel, gains: list, ideal: list) -> None:
    with pytest.raises(StatsError):
        kernel(gains, ideal, 3)


def test_ranked_metric_dispatches_by_spec() -> None:
    assert ranked_metric(parse_metric("mrr@10"), GAINS, IDEAL) == pytest.approx(0.5)
    assert ranked_metric(parse_metric("ndcg_at_4"), GAINS, IDEAL) == ndcg_at_k(GAINS, IDEAL, 4)
    assert ranked_metric(parse_metric("recall@2"), GAINS, IDEAL) == pytest.approx(1 / 3)
    with pytest.raises(ConfigError):
        ranked_metric(parse_metric("xdcg@3"), GAINS, IDEAL)
    with pytest.raises(ConfigError):
        ranked_metric(parse_metric("fidelity"), GAINS, IDEAL)
