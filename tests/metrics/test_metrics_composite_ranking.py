"""``rank_documents`` and the composite's refusal to convert what is not a number."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics import document_retrieval
from oloproof.metrics._composite import MAX_LABEL, rank_documents


def test_ranking_is_by_descending_score_with_ties_in_input_order() -> None:
    ranked = rank_documents([("a", 1), ("b", 2)], [("h", 1.0), ("a", 3), ("b", 1), ("c", 1.0)])
    assert ranked.ids == ("a", "h", "b", "c")
    np.testing.assert_array_equal(ranked.labels, [1.0, np.nan, 2.0, np.nan])
    np.testing.assert_array_equal(ranked.truth, [1.0, 2.0])


def test_a_document_listed_twice_counts_once() -> None:
    ranked = rank_documents(
        [("a", 1), ("b", 0), ("a", 3)],
        [("b", 0.5), ("h", 0.1), ("a", 0.2), ("h", 0.9), ("a", 0.2)],
    )
    assert ranked.ids == ("h", "b", "a")  # each at its highest score
    np.testing.assert_array_equal(ranked.truth, [3.0, 0.0])  # "a" with its highest label
    result = document_retrieval(ranked.labels, ranked.truth)
    assert result["holes"] == 1 and result["total_retrieved_documents"] == 3
    assert result["total_ground_truth_documents"] == 2


def test_scores_compare_exactly() -> None:
    ranked = rank_documents([], [("a", 2**53), ("b", 2**53 + 1), ("c", float(2**53))])
    assert ranked.ids == ("b", "a", "c")


def test_an_empty_ranking() -> None:
    ranked = rank_documents([("a", 2)], [])
    assert ranked.ids == () and ranked.labels.shape == (0,)


@pytest.mark.parametrize("label", [2.0, True, "2", None, np.bool_(True), 2**60])
def test_labels_must_be_integers(label: object) -> None:
    with pytest.raises(StatsError, match="integer"):
        rank_documents([("a", label)], [("a", 1.0)])


def test_numpy_integers_are_labels() -> None:
    assert rank_documents([("a", np.int64(3))], [("a", np.float32(0.5))]).truth.tolist() == [3.0]


@pytest.mark.parametrize("score", [True, "1", None, math.nan, math.inf, -math.inf])
def test_scores_must_be_finite_numbers(score: object) -> None:
    with pytest.raises(StatsError, match="finite number"):
        rank_documents([("a", 1)], [("a", score)])


@pytest.mark.parametrize(
    ("retrieved", "truth", "scores"),
    [
        (["2"], [2], None),
        ([True], [1], None),
        (np.array([True]), [1], None),
        ([1.0], ["1"], None),
        ([1.0], np.array(["1"]), None),
        ([1.0], [True], None),
        ([1.0], [1], ["0.5"]),
        ([1.0], [1], [False]),
        ([1.0], [1], [[0.5]]),
        ([1.0], [10**400], None),
    ],
)
def test_the_composite_converts_no_string_and_no_boolean(retrieved: object, truth: object, scores: object) -> None:
    with pytest.raises(StatsError):
        document_retrieval(retrieved, truth, scores=scores)


def test_the_composite_takes_numbers_in_lists_and_arrays() -> None:
    as_lists = document_retrieval([2.0, float("nan")], [4, 2], scores=[1, 2.5])
    as_arrays = document_retrieval(np.array([2.0, np.nan]), np.array([4, 2]), scores=np.array([1, 2.5]))
    assert as_lists == pytest.approx(as_arrays, nan_ok=True)
    assert as_lists["holes"] == 1 and as_lists["top1_relevance"] == 0


def test_the_label_range_has_a_ceiling() -> None:
    document_retrieval([float(MAX_LABEL)], [MAX_LABEL], ground_truth_label_max=MAX_LABEL)
    with pytest.raises(ConfigError) as info:
        document_retrieval([1.0], [1], ground_truth_label_max=MAX_LABEL + 1)
    assert info.value.field == "ground_truth_label_max"
