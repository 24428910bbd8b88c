"""The ``document_retrieval`` composite on hand-worked examples and edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics import (
    DOCUMENT_RETRIEVAL_LOWER_IS_BETTER,
    DOCUMENT_RETRIEVAL_THRESHOLDS,
    document_retrieval,
    document_retrieval_key,
    document_retrieval_thresholds,
    parse_metric,
)

NAN = float("nan")
KEYS = {
    "ndcg@3", "xdcg@3", "fidelity", "top1_relevance", "top3_max_relevance", "holes",
    "holes_ratio", "total_retrieved_documents", "total_ground_truth_documents",
}


def _labels_of(
    retrieved: list[tuple[str, float]], truth: dict[str, int]
) -> tuple[list[float], list[float]]:
    return [float(truth.get(doc, NAN)) for doc, _ in retrieved], [score for _, score in retrieved]


def test_sdk_sample() -> None:
    """The SDK's own sample: five judged documents, five retrieved, two of them holes."""
    truth = {"1": 4, "2": 2, "3": 3, "4": 1, "5": 0}
    retrieved = [("2", 45.1), ("6", 35.8), ("3", 29.2), ("5", 25.4), ("7", 18.8)]
    labels, scores = _labels_of(retrieved, truth)
    result = document_retrieval(labels, list(truth.values()), scores=scores)

    # ranked labels 2, hole, 3, 0, hole; ideal labels 4, 3, 2, 1, 0
    dcg = (2**2 - 1) / 1 + 0 + (2**3 - 1) / 2
    idcg = (2**4 - 1) / 1 + (2**3 - 1) / math.log2(3) + (2**2 - 1) / 2
    assert set(result) == KEYS
    assert result["ndcg@3"] == pytest.approx(dcg / idcg)
    assert result["ndcg@3"] == pytest.approx(0.3107593253)
    assert result["xdcg@3"] == pytest.approx(25 * (2 + 0.6 * 0 + 0.36 * 3) / (1 + 0.6 + 0.36))
    assert result["fidelity"] == pytest.approx((7 + 15) / (31 + 15 + 7 + 3))
    assert result["top1_relevance"] == 2
    assert result["top3_max_relevance"] == 3
    assert result["holes"] == 2
    assert result["holes_ratio"] == pytest.approx(0.4)
    assert result["total_retrieved_documents"] == 5
    assert result["total_ground_truth_documents"] == 5


def test_spec_example_with_labels_one_to_five() -> None:
    """ground truth {"1": 4, "2": 2}, retrieved [("2", 45.1), ("6", 35.8)], labels 1..5."""
    truth = {"1": 4, "2": 2}
    labels, scores = _labels_of([("2", 45.1), ("6", 35.8)], truth)
    result = document_retrieval(
        labels, list(truth.values()), scores=scores,
        ground_truth_label_min=1, ground_truth_label_max=5,
    )
    assert result["ndcg@3"] == pytest.approx(3 / (15 + 3 / math.log2(3)))
    # xDCG divides by all three rank weights though only two documents came back.
    assert result["xdcg@3"] == pytest.approx(25 * 2 / 1.96)
    # Labels above the minimum 1 weigh 2**(l+1) - 1: retrieved {2}, ground truth {4, 2}.
    assert result["fidelity"] == pytest.approx(7 / (31 + 7))
    assert result["top1_relevance"] == 2
    assert result["top3_max_relevance"] == 2
    assert result["holes"] == 1
    assert result["holes_ratio"] == 0.5


def test_fidelity_ignores_labels_at_the_minimum() -> None:
    low0 = document_retrieval([1.0, 2.0], [1, 2, 3])
    low1 = document_retrieval([1.0, 2.0], [1, 2, 3], ground_truth_label_min=1)
    assert low0["fidelity"] == pytest.approx((3 + 7) / (3 + 7 + 15))
    assert low1["fidelity"] == pytest.approx(7 / (7 + 15))
    assert low0["ndcg@3"] == low1["ndcg@3"]


def test_fidelity_weighs_two_digit_labels_by_value() -> None:
    result = document_retrieval([10.0], [10, 2], ground_truth_label_max=10)
    assert result["fidelity"] == pytest.approx((2**11 - 1) / (2**11 - 1 + 2**3 - 1))


def test_fidelity_is_nan_when_no_label_is_above_the_minimum() -> None:
    result = document_retrieval([1.0], [1, 1], ground_truth_label_min=1)
    assert math.isnan(result["fidelity"])
    assert result["ndcg@3"] == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_scores_set_the_order_with_stable_ties() -> None:
    truth = [4, 2, 3]
    in_order = document_retrieval([3.0, NAN, 2.0], truth)
    shuffled = document_retrieval([2.0, 3.0, NAN], truth, scores=[1.0, 9.0, 5.0])
    assert shuffled == pytest.approx(in_order, nan_ok=True)
    tied = document_retrieval([2.0, 3.0], truth, scores=[1.0, 1.0])
    assert tied["top1_relevance"] == 2


def test_the_cutoff_renames_outputs_and_limits_the_top() -> None:
    result = document_retrieval([0.0, 0.0, 0.0, 3.0], [3, 0, 0, 0], k=4)
    assert {"ndcg@4", "xdcg@4", "top4_max_relevance"} <= set(result)
    assert result["top4_max_relevance"] == 3
    assert result["ndcg@4"] == pytest.approx((7 / math.log2(5)) / 7)
    at_3 = document_retrieval([0.0, 0.0, 0.0, 3.0], [3, 0, 0, 0])
    assert at_3["ndcg@3"] == 0 and at_3["top3_max_relevance"] == 0
    assert at_3["fidelity"] == 1.0  # fidelity looks past the cutoff


def test_empty_ranking_is_all_zero() -> None:
    result = document_retrieval([], [4, 2])
    totals = {"total_retrieved_documents", "total_ground_truth_documents"}
    assert {key: result[key] for key in KEYS - totals} == dict.fromkeys(KEYS - totals, 0.0)
    assert result["total_ground_truth_documents"] == 2


def test_only_holes_and_zeros_report_holes_only() -> None:
    result = document_retrieval([NAN, 0.0, NAN], [4, 0])
    assert result["holes"] == 2
    assert result["holes_ratio"] == pytest.approx(2 / 3)
    for key in ("ndcg@3", "xdcg@3", "fidelity", "top1_relevance", "top3_max_relevance"):
        assert result[key] == 0.0


def test_all_values_are_floats() -> None:
    result = document_retrieval(np.array([2.0, NAN]), np.array([4, 2]))
    assert all(type(value) is float for value in result.values())


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"k": 0}, "k"),
        ({"k": True}, "k"),
        ({"ground_truth_label_min": 4, "ground_truth_label_max": 4}, "ground_truth_label_max"),
        ({"ground_truth_label_min": 3, "ground_truth_label_max": 1}, "ground_truth_label_max"),
        ({"ground_truth_label_min": 0.5}, "ground_truth_label_min"),
        ({"ground_truth_label_min": -1}, "ground_truth_label_min"),
        ({"ground_truth_label_max": "4"}, "ground_truth_label_max"),
    ],
)
def test_bad_parameters(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        document_retrieval([1.0], [1], **kwargs)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("retrieved", "truth", "kwargs"),
    [
        ([1.0], [], {}),  # no ground truth
        ([1.0], [5], {}),  # above the maximum
        ([1.0], [1, 0], {"ground_truth_label_min": 1}),  # below the minimum
        ([1.5], [1.5], {}),  # not an integer
        ([1.0], [NAN], {}),  # NaN in the ground truth
        ([3.0], [1, 2], {}),  # a retrieved label the ground truth lacks
        ([2.0, 2.0], [2, 1], {}),  # one label-2 document retrieved twice
        ([1.0, 2.0], [1, 2], {"scores": [1.0]}),  # scores of the wrong length
        ([1.0], [1], {"scores": [NAN]}),
        ([[1.0]], [1], {}),
    ],
)
def test_bad_input(retrieved: list, truth: list, kwargs: dict) -> None:
    with pytest.raises(StatsError):
        document_retrieval(retrieved, truth, **kwargs)


def test_default_thresholds_are_the_sdk_ones() -> None:
    assert DOCUMENT_RETRIEVAL_THRESHOLDS == {
        "ndcg@3": 0.5, "xdcg@3": 50.0, "fidelity": 0.5, "top1_relevance": 50.0,
        "top3_max_relevance": 50.0, "total_retrieved_documents": 50.0,
        "total_ground_truth_documents": 50.0, "holes": 0.0, "holes_ratio": 0.0,
    }
    assert set(DOCUMENT_RETRIEVAL_THRESHOLDS) == KEYS
    assert DOCUMENT_RETRIEVAL_LOWER_IS_BETTER == {"holes", "holes_ratio"}
    with pytest.raises(TypeError):
        DOCUMENT_RETRIEVAL_THRESHOLDS["holes"] = 1.0  # type: ignore[index]
    at_5 = document_retrieval_thresholds(5)
    assert set(at_5) == set(document_retrieval([1.0], [1], k=5))
    assert at_5["top5_max_relevance"] == 50.0 and at_5["ndcg@5"] == 0.5


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("ndcg@3", "ndcg@3"),
        ("xdcg_at_5", "xdcg@5"),
        ("max_relevance@3", "top3_max_relevance"),
        ("top1_relevance", "top1_relevance"),
        ("holes_ratio", "holes_ratio"),
        ("fidelity", "fidelity"),
    ],
)
def test_keys_of_specs(text: str, key: str) -> None:
    assert document_retrieval_key(parse_metric(text)) == key


def test_non_composite_specs_have_no_key() -> None:
    with pytest.raises(ConfigError):
        document_retrieval_key(parse_metric("recall@3"))


def test_many_ties_keep_input_order() -> None:
    rng = np.random.default_rng(7)
    truth = [int(g) for g in rng.integers(0, 5, size=60)]
    labels = [float(g) for g in truth]
    scores = [float(s) for s in rng.integers(0, 3, size=60)]
    pairs = sorted(zip(labels, scores, strict=True), key=lambda pair: pair[1], reverse=True)
    ranked = [label for label, _ in pairs]
    by_scores = document_retrieval(labels, truth, scores=scores, k=60)
    in_order = document_retrieval(ranked, truth, k=60)
    assert by_scores == pytest.approx(in_order)
