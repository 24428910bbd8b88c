"""The per-query functions, a batch of one, against a plain per-query reference.

The reference is the per-query arithmetic the stored metric values were made with
before each metric had one kernel: one query at a time, summed rank by rank in a
Python loop. The values must stay the same bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof._exceptions import StatsError
from oloproof.metrics import (
    average_precision_at_k,
    dcg_at_k,
    gain_batch,
    hit_rate_at_k,
    ndcg_at_k,
    ndcg_at_k_batch,
    precision_at_k,
    r_precision,
    recall_at_k,
    recall_at_k_batch,
    reciprocal_rank_at_k,
    relevance_gains,
)

UNITS = [f"u{i}" for i in range(10)]
GRADE = st.one_of(
    st.integers(0, 4).map(float),
    st.sampled_from([0.25, 0.5, 1.5, 2.5, 2.173781663346087]),
    st.floats(min_value=0.0, max_value=12.0, allow_nan=False),
)
LOG2 = np.log2(np.arange(2, 258, dtype=np.float64))


def _sum(values) -> float:
    total = 0.0
    for value in np.asarray(values, dtype=np.float64).tolist():
        total += value
    return total


def _exp(grades) -> np.ndarray:
    return np.array([2.0**g - 1.0 for g in np.asarray(grades).tolist()], dtype=np.float64)


def reference(gains: np.ndarray, ideal: np.ndarray, k: int, level: float | None, gain: str) -> dict[str, float]:
    """Every metric of one query, computed the way it was computed per query."""
    relevant = gains > 0.0 if level is None else gains >= level
    total = ideal.size if level is None else int(np.count_nonzero(ideal >= level))
    top = relevant[:k]
    hits = np.flatnonzero(top)
    ranks = np.arange(1, top.size + 1, dtype=np.float64)
    precisions = np.where(top, np.cumsum(top, dtype=np.float64) / ranks, 0.0)
    found, best = gains[:k], ideal[:k]
    if gain == "exponential":
        found, best = _exp(found), _exp(best)
    return {
        "hit_rate": 1.0 if top.any() else 0.0,
        "recall": float(np.count_nonzero(top)) / float(total),
        "precision": float(np.count_nonzero(top)) / float(k),
        "mrr": 1.0 / float(hits[0] + 1) if hits.size else 0.0,
        "map": _sum(precisions) / float(total),
        "r_precision": float(np.count_nonzero(relevant[:total])) / float(total),
        "ndcg": _sum(found / LOG2[: found.size]) / _sum(best / LOG2[: best.size]),
        "dcg": _sum(found / LOG2[: found.size]),
    }


def computed(gains: np.ndarray, ideal: np.ndarray, k: int, level: float | None, gain: str) -> dict[str, float]:
    options = {"relevance_level": level}
    return {
        "hit_rate": hit_rate_at_k(gains, ideal, k, **options),
        "recall": recall_at_k(gains, ideal, k, **options),
        "precision": precision_at_k(gains, ideal, k, **options),
        "mrr": reciprocal_rank_at_k(gains, ideal, k, **options),
        "map": average_precision_at_k(gains, ideal, k, **options),
        "r_precision": r_precision(gains, ideal, **options),
        "ndcg": ndcg_at_k(gains, ideal, k, gain=gain),  # type: ignore[arg-type]
        "dcg": dcg_at_k(gains, k, gain=gain),  # type: ignore[arg-type]
    }


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from([*UNITS, "x"]), max_size=16),
    st.dictionaries(st.sampled_from(UNITS), GRADE, min_size=1, max_size=8),
    st.integers(1, 18),
    st.sampled_from([None, 0.5, 1.0, 2.0]),
    st.sampled_from(["linear", "exponential"]),
)
def test_each_metric_of_one_query_is_the_reference_bit_for_bit(ranking, grades, k, level, gain) -> None:
    gains, ideal = relevance_gains(ranking, grades)
    if ideal.size == 0 or (level is not None and not (ideal >= level).any()):
        return
    if gain == "exponential" and _sum(_exp(ideal[:k])) == 0.0:
        return
    expected, got = reference(gains, ideal, k, level, gain), computed(gains, ideal, k, level, gain)
    assert {name: np.float64(v).tobytes() for name, v in got.items()} == {
        name: np.float64(v).tobytes() for name, v in expected.items()
    }
    assert all(type(value) is float for value in got.values())


def test_one_query_errors_read_as_that_query_s() -> None:
    with pytest.raises(StatsError) as single:
        recall_at_k([1.0], [1.0], 3, relevance_level=2)
    assert "query 0" not in str(single.value) and "none reaches relevance_level 2" in str(single.value)
    with pytest.raises(StatsError) as underflow:
        ndcg_at_k([1e-17], [1e-17], 3, gain="exponential")
    assert str(underflow.value).startswith("every relevant grade")
    batch = gain_batch([["a"], ["a"]], [{"a": 1.0}, {"a": 1e-17}])
    with pytest.raises(StatsError, match="^query 1 of the batch: every relevant grade"):
        ndcg_at_k_batch(batch, 3, gain="exponential")
    with pytest.raises(StatsError, match=r"^query 0 of the batch \(2 in all\)"):
        recall_at_k_batch(batch, 3, relevance_level=2)
