"""``document_retrieval_batch``: each query's values are those of the per-query composite."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics import document_retrieval, document_retrieval_batch
from oloproof.metrics._composite import RankedDocuments, rank_documents

NAN = float("nan")


def ranked(retrieved: list[float], truth: list[float]) -> RankedDocuments:
    ids = tuple(f"d{i}" for i in range(len(retrieved)))
    return RankedDocuments(ids=ids, labels=np.array(retrieved, dtype=np.float64),
                           truth=np.array(truth, dtype=np.float64))  # fmt: skip


def one_by_one(rankings: list[RankedDocuments], **options: int) -> list[dict[str, float]]:
    return [document_retrieval(r.labels, r.truth, **options) for r in rankings]


def assert_same(batch: dict[str, np.ndarray], singles: list[dict[str, float]]) -> None:
    assert set(batch) == set(singles[0]) if singles else True
    for index, single in enumerate(singles):
        for key, value in single.items():
            got = float(batch[key][index])
            assert (math.isnan(got) and math.isnan(value)) or got == pytest.approx(value, rel=1e-12, abs=1e-12), (
                index, key, got, value)  # fmt: skip


@st.composite
def queries(draw: st.DrawFn, low: int, high: int) -> RankedDocuments:
    # A query's documents with labels; a ranking of some of them plus unlabelled ones.
    labelled = draw(st.lists(st.integers(low, high), min_size=1, max_size=12))
    truth = [(f"d{i}", label) for i, label in enumerate(labelled)]
    shown = draw(st.lists(st.sampled_from([*(doc for doc, _ in truth), "x1", "x2", "x3"]), max_size=15))
    scores = draw(st.lists(st.integers(0, 5), min_size=len(shown), max_size=len(shown)))
    return rank_documents(truth, list(zip(shown, scores, strict=True)))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), high=st.integers(1, 12), k=st.integers(1, 6))
def test_each_query_equals_the_per_query_composite(data: st.DataObject, high: int, k: int) -> None:
    low = data.draw(st.integers(0, high - 1))
    rankings = data.draw(st.lists(queries(low, high), max_size=20))
    options = {"k": k, "ground_truth_label_min": low, "ground_truth_label_max": high}
    batch = document_retrieval_batch(rankings, **options)
    assert all(array.shape == (len(rankings),) for array in batch.values())
    assert_same(batch, one_by_one(rankings, **options))


def test_edge_queries_side_by_side() -> None:
    rankings = [
        ranked([], [3.0]),  # an empty ranking
        ranked([NAN, 0.0, NAN], [0.0, 2.0]),  # holes and zeros only
        ranked([4.0, 3.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0, 4.0]),  # the ideal ranking
        ranked([0.0] * 3 + [4.0], [4.0, 0.0, 0.0, 0.0]),  # the relevant one past k
    ]
    batch = document_retrieval_batch(rankings)
    assert_same(batch, one_by_one(rankings))
    assert batch["ndcg@3"][2] == 1.0
    assert batch["top3_max_relevance"][3] == 0.0 and batch["fidelity"][3] == 1.0
    assert batch["holes"].tolist() == [0.0, 2.0, 0.0, 0.0]


def test_fidelity_is_nan_when_nothing_is_above_the_minimum() -> None:
    rankings = [ranked([1.0, NAN], [1.0, 1.0]), ranked([2.0], [2.0, 1.0])]
    batch = document_retrieval_batch(rankings, ground_truth_label_min=1)
    assert_same(batch, one_by_one(rankings, ground_truth_label_min=1))
    assert math.isnan(batch["fidelity"][0]) and batch["fidelity"][1] == 1.0


def test_a_query_is_computed_alike_whatever_its_neighbours() -> None:
    alone = document_retrieval_batch([ranked([2.0, NAN], [2.0, 1.0])])
    among = document_retrieval_batch([ranked([NAN] * 50, [4.0] * 30), ranked([2.0, NAN], [2.0, 1.0])])
    assert {key: value[0] for key, value in alone.items()} == {key: value[1] for key, value in among.items()}


def test_no_query_gives_empty_outputs() -> None:
    batch = document_retrieval_batch([], k=5)
    assert "ndcg@5" in batch and all(array.size == 0 for array in batch.values())


@pytest.mark.parametrize(
    ("rankings", "message"),
    [
        ([ranked([1.0], [1.0]), ranked([], [])], "query 1: ground_truth_labels is empty"),
        ([ranked([1.0], [1.0]), ranked([5.0], [5.0])], r"query 1: ground_truth_labels must be integers in .*got 5"),
        ([ranked([1.5], [1.0, 2.0])], r"query 0: retrieved_labels must be integers"),
        ([ranked([], [NAN])], "query 0: ground_truth_labels must be integers"),
        ([ranked([2.0], [1.0]), ranked([2.0, 2.0], [2.0, 1.0])], r"query 0: 1 retrieved documents have label 2"),
        ([ranked([1.0], [1.0]), ranked([2.0, 2.0], [2.0, 1.0])], r"query 1: 2 retrieved documents have label 2"),
    ],
)
def test_invalid_queries_are_named_by_index(rankings: list[RankedDocuments], message: str) -> None:
    with pytest.raises(StatsError, match=message):
        document_retrieval_batch(rankings)


@pytest.mark.parametrize(
    ("options", "field"),
    [({"k": 0}, "k"), ({"ground_truth_label_min": -1}, "ground_truth_label_min"),
     ({"ground_truth_label_max": 101}, "ground_truth_label_max"), ({"ground_truth_label_min": True}, "ground_truth_label_min")],
)  # fmt: skip
def test_bad_parameters_name_their_field(options: dict[str, int], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        document_retrieval_batch([ranked([1.0], [1.0])], **options)
    assert info.value.field == field
