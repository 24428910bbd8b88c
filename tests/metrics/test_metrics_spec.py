"""Parsing metric names: ``name@k``, ``name_at_k`` and bare names."""

from __future__ import annotations

import dataclasses

import pytest

from oloproof import metrics
from oloproof._exceptions import ConfigError
from oloproof.metrics import METRIC_NAMES, MetricSpec, parse_metric


@pytest.mark.parametrize(
    ("text", "name", "k"),
    [
        ("ndcg@10", "ndcg", 10),
        ("hit_rate@2", "hit_rate", 2),
        ("recall@5", "recall", 5),
        ("mrr@10", "mrr", 10),
        ("precision@3", "precision", 3),
        ("map@10", "map", 10),
        ("map_at_5", "map", 5),
        ("r_precision", "r_precision", None),
        ("ndcg_at_10", "ndcg", 10),
        ("hit_rate_at_2", "hit_rate", 2),
        ("xdcg@3", "xdcg", 3),
        ("max_relevance_at_3", "max_relevance", 3),
        ("top3_max_relevance", "max_relevance", 3),
        ("  NDCG@10 ", "ndcg", 10),
        ("fidelity", "fidelity", None),
        ("holes", "holes", None),
        ("holes_ratio", "holes_ratio", None),
        ("top1_relevance", "top1_relevance", None),
    ],
)
def test_parses(text: str, name: str, k: int | None) -> None:
    assert parse_metric(text) == MetricSpec(name, k)


@pytest.mark.parametrize(
    ("text", "rendered", "criterion"),
    [
        ("ndcg@10", "ndcg@10", "ndcg_at_10"),
        ("ndcg_at_10", "ndcg@10", "ndcg_at_10"),
        ("hit_rate_at_2", "hit_rate@2", "hit_rate_at_2"),
        ("holes_ratio", "holes_ratio", "holes_ratio"),
    ],
)
def test_renders_both_forms(text: str, rendered: str, criterion: str) -> None:
    spec = parse_metric(text)
    assert str(spec) == rendered
    assert spec.criterion == criterion
    assert parse_metric(spec.criterion) == spec == parse_metric(str(spec))


def test_spec_is_frozen() -> None:
    spec = parse_metric("ndcg@10")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.k = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    ["ndcg@0", "ndcg@-1", "ndcg@1.5", "ndcg@", "ndcg@ten", "ndcg_at_0", "ndcg", "recall",
     "fidelity@3", "holes_at_2", "top0_max_relevance", "map", "r_precision@5", "r_precision_at_3"],
)
def test_bad_cutoffs_name_the_text(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_metric(text)
    assert info.value.field == "k"
    assert repr(text) in str(info.value)


@pytest.mark.parametrize("text", ["ndgc@10", "bleu@10", "", "@10", "ndcg#10", "_at_3", "rprec"])
def test_unknown_names_list_the_known_ones(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_metric(text)
    assert info.value.field == "name"
    for name in METRIC_NAMES:
        assert name in str(info.value)


def test_rejects_non_strings() -> None:
    with pytest.raises(ConfigError):
        parse_metric(10)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "k"),
    [("ndcg", 0), ("ndcg", True), ("ndcg", 2.0), ("ndcg", None), ("fidelity", 3), ("bleu", 3)],
)
def test_constructor_validates_too(name: str, k: object) -> None:
    with pytest.raises(ConfigError):
        MetricSpec(name, k)  # type: ignore[arg-type]


def test_public_names_are_sorted_and_exist() -> None:
    assert metrics.__all__ == sorted(metrics.__all__)
    for name in metrics.__all__:
        assert getattr(metrics, name).__doc__ or name.isupper()
