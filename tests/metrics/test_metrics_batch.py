"""The batch kernels equal the per-query kernels bit for bit, on random batches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof._exceptions import ConfigError, StatsError
from oloproof.metrics import (
    GainBatch,
    average_precision_at_k,
    average_precision_at_k_batch,
    gain_batch,
    hit_rate_at_k,
    hit_rate_at_k_batch,
    ndcg_at_k,
    ndcg_at_k_batch,
    parse_metric,
    precision_at_k,
    precision_at_k_batch,
    r_precision,
    r_precision_batch,
    ranked_metric,
    ranked_metric_batch,
    recall_at_k,
    recall_at_k_batch,
    reciprocal_rank_at_k,
    reciprocal_rank_at_k_batch,
    relevance_gains,
    stack_gains,
)

BINARY = [
    (hit_rate_at_k, hit_rate_at_k_batch),
    (recall_at_k, recall_at_k_batch),
    (precision_at_k, precision_at_k_batch),
    (reciprocal_rank_at_k, reciprocal_rank_at_k_batch),
    (average_precision_at_k, average_precision_at_k_batch),
]

UNITS = [f"u{i}" for i in range(12)]
# Integer grades as in trec_eval, fractional ones, and arbitrary positive floats.
GRADE = st.one_of(
    st.integers(0, 4).map(float),
    st.sampled_from([0.25, 0.5, 1.5, 2.5]),
    st.floats(min_value=0.0, max_value=12.0, allow_nan=False),
)


@st.composite
def query(draw) -> tuple[list[str], dict[str, float]]:
    """A ranking (repeats and unjudged units allowed) and judgements with a relevant unit."""
    grades = draw(st.dictionaries(st.sampled_from(UNITS), GRADE, min_size=1, max_size=10))
    if not any(grade > 0 for grade in grades.values()):
        grades[next(iter(grades))] = draw(st.floats(min_value=0.1, max_value=5.0))
    ranking = draw(st.lists(st.sampled_from([*UNITS, "x1", "x2"]), max_size=16))
    return ranking, grades


QUERIES = st.lists(query(), min_size=1, max_size=25)


def _per_query(kernel, queries, *args, **options) -> np.ndarray:
    return np.array([kernel(*relevance_gains(r, g), *args, **options) for r, g in queries])


def _relevant_at(queries, level: float | None):
    if level is None:
        return queries
    return [(r, g) for r, g in queries if any(grade >= level for grade in g.values())]


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(QUERIES, st.integers(1, 18), st.sampled_from([None, 1.0, 2.0, 0.5, 2.5]))
def test_binary_batches_equal_the_per_query_kernels(queries, k, level) -> None:
    queries = _relevant_at(queries, level)
    if not queries:
        return
    batch = gain_batch([r for r, _ in queries], [g for _, g in queries])
    for kernel, batched in BINARY:
        expected = _per_query(kernel, queries, k, relevance_level=level)
        assert np.array_equal(batched(batch, k, relevance_level=level), expected), kernel.__name__
    expected = _per_query(r_precision, queries, relevance_level=level)
    assert np.array_equal(r_precision_batch(batch, relevance_level=level), expected)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(QUERIES, st.integers(1, 18), st.sampled_from(["linear", "exponential"]))
def test_ndcg_batches_equal_the_per_query_kernel(queries, k, gain) -> None:
    if gain == "exponential":  # grades whose 2**grade - 1 is 0: see the test below
        queries = [(r, g) for r, g in queries if np.exp2(max(g.values())) > 1.0]
    if not queries:
        return
    batch = gain_batch([r for r, _ in queries], [g for _, g in queries])
    expected = _per_query(ndcg_at_k, queries, k, gain=gain)
    assert np.array_equal(ndcg_at_k_batch(batch, k, gain=gain), expected)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(QUERIES, st.integers(1, 18))
def test_a_batch_cut_at_k_gives_the_same_values(queries, k) -> None:
    rankings, grades = [r for r, _ in queries], [g for _, g in queries]
    whole, cut = gain_batch(rankings, grades), gain_batch(rankings, grades, depth=k)
    assert cut.gains.shape[1] <= k
    for _, batched in BINARY:
        assert np.array_equal(batched(cut, k), batched(whole, k))
    assert np.array_equal(ndcg_at_k_batch(cut, k), ndcg_at_k_batch(whole, k))


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(QUERIES)
def test_units_and_stacked_arrays_give_the_same_batch(queries) -> None:
    from_units = gain_batch([r for r, _ in queries], [g for _, g in queries])
    stacked = stack_gains(relevance_gains(r, g) for r, g in queries)
    assert np.array_equal(from_units.gains, stacked.gains)
    assert np.array_equal(from_units.ideal_values, stacked.ideal_values)
    assert np.array_equal(from_units.ideal_lengths, stacked.ideal_lengths)
    for (ranking, grades), row, ideal_top in zip(queries, from_units.gains, from_units.ideal_top(30), strict=True):
        gains, ideal = relevance_gains(ranking, grades)
        assert row[: gains.size].tolist() == gains.tolist() and not row[gains.size :].any()
        assert ideal_top[: ideal.size].tolist() == ideal.tolist()


@pytest.mark.parametrize(
    "text", ["hit_rate@3", "recall@5", "precision@2", "mrr@4", "map@6", "ndcg@3", "r_precision"]
)
def test_ranked_metric_batch_dispatches_as_ranked_metric(text) -> None:
    queries = [(["a", "b", "c", "a"], {"a": 2.0, "c": 1.0, "d": 3.0}), (["x"], {"x": 1.0}), ([], {"y": 2.0})]
    spec = parse_metric(text)
    batch = gain_batch([r for r, _ in queries], [g for _, g in queries])
    expected = [ranked_metric(spec, *relevance_gains(r, g)) for r, g in queries]
    assert ranked_metric_batch(spec, batch).tolist() == expected


def test_exponential_gains_do_not_depend_on_the_other_rows() -> None:
    # numpy's exp2 of 2.173781663346087 differs in the last bit depending on its
    # neighbours in the array; this batch once gave 1 - 2**-52 for the last row.
    queries = [
        (["u0", "u0", "x2"], {"u0": 1.0}), (["u0", "x2", "u0"], {"u0": 0.0, "u2": 1.0}),
        (["u0", "u0"], {"u0": 0.0, "u4": 0.25}), (["u0"], {"u5": 1.0}), (["x1"], {"u5": 1.0}),
        (["u0"], {"u8": 1.0}), ([], {"u0": 0.1, "u1": 0.0}), ([], {"u0": 1.0}), (["u0", "u0"], {"u9": 1.0}),
        (["u5"], {"u5": 2.173781663346087}),
    ]  # fmt: skip
    batch = gain_batch([r for r, _ in queries], [g for _, g in queries])
    expected = [ndcg_at_k(*relevance_gains(r, g), 1, gain="exponential") for r, g in queries]
    assert ndcg_at_k_batch(batch, 1, gain="exponential").tolist() == expected
    assert expected[-1] == 1.0


def test_exponential_gains_that_underflow_are_undefined_in_both() -> None:
    grades = {"a": 1e-17, "b": 0.0}
    with pytest.raises(StatsError, match="exponential gain"):
        ndcg_at_k(*relevance_gains(["a"], grades), 3, gain="exponential")
    batch = gain_batch([["a"], ["a"]], [{"a": 1.0}, grades])
    with pytest.raises(StatsError, match="query 1 of the batch.*exponential gain"):
        ndcg_at_k_batch(batch, 3, gain="exponential")
    assert ndcg_at_k_batch(batch, 3).tolist() == [1.0, 1.0]


def test_a_row_without_a_relevant_unit_is_named() -> None:
    batch = gain_batch([["a"], ["b"], ["c"]], [{"a": 1.0}, {"b": 0.0}, {"c": 1.0}])
    for _, batched in BINARY:
        with pytest.raises(StatsError, match="query 1 of the batch"):
            batched(batch, 3)
    with pytest.raises(StatsError, match="query 1 of the batch"):
        ndcg_at_k_batch(batch, 3)
    with pytest.raises(StatsError, match="relevance_level 2"):
        recall_at_k_batch(gain_batch([["a"]], [{"a": 1.0}]), 3, relevance_level=2)


def test_a_cut_batch_refuses_deeper_cutoffs() -> None:
    batch = gain_batch([["a", "b", "c"]], [{"a": 1.0, "b": 1.0, "c": 1.0}], depth=2)
    assert precision_at_k_batch(batch, 2).tolist() == [1.0]
    with pytest.raises(ConfigError) as info:
        precision_at_k_batch(batch, 3)
    assert info.value.field == "k"
    with pytest.raises(ConfigError):
        r_precision_batch(batch)  # R = 3 > depth 2
    shallow = gain_batch([["a", "b", "c"]], [{"a": 1.0, "b": 2.0, "c": 1.0}], depth=2)
    assert r_precision_batch(shallow, relevance_level=2.0).tolist() == [0.0]  # R = 1


@pytest.mark.parametrize(
    "grades", [{"a": float("nan")}, {"a": float("-inf")}, {"a": "2"}, {"a": True}]
)
def test_bad_grades_are_refused_as_relevance_gains_does(grades) -> None:
    with pytest.raises(StatsError) as batched:
        gain_batch([["a"], ["a"]], [{"a": 1.0}, grades])
    with pytest.raises(StatsError) as single:
        relevance_gains(["a"], grades)
    assert str(batched.value) == str(single.value)


def test_malformed_batches_are_refused() -> None:
    with pytest.raises(StatsError):
        gain_batch(["abc"], [{"a": 1.0}])
    with pytest.raises(StatsError):
        gain_batch([["a"]], [{"a": 1.0}, {"b": 1.0}])
    with pytest.raises(StatsError, match="query 1"):
        stack_gains([([1.0], [1.0]), ([3.0], [1.0])])
    with pytest.raises(ConfigError):
        gain_batch([["a"]], [{"a": 1.0}], depth=0)
    with pytest.raises(ConfigError) as info:
        ndcg_at_k_batch(gain_batch([["a"]], [{"a": 1.0}]), 2, gain="cubic")  # type: ignore[arg-type]
    assert info.value.field == "gain"


def test_empty_batches_and_empty_rankings() -> None:
    empty = gain_batch([], [])
    assert len(empty) == 0 and hit_rate_at_k_batch(empty, 3).size == 0
    assert ndcg_at_k_batch(empty, 3).size == 0 and r_precision_batch(empty).size == 0
    nothing_retrieved = gain_batch([[], []], [{"a": 1.0}, {"b": 2.0}])
    for _, batched in BINARY:
        assert batched(nothing_retrieved, 4).tolist() == [0.0, 0.0]
    assert ndcg_at_k_batch(nothing_retrieved, 4).tolist() == [0.0, 0.0]
    assert isinstance(stack_gains([]), GainBatch)


def test_a_large_batch_equals_the_loop() -> None:
    rng = np.random.default_rng(3)
    rankings = [[f"d{d}" for d in rng.choice(200, 50, replace=False)] for _ in range(2_000)]
    grades = [{f"d{d}": float(g) for d, g in zip(rng.choice(200, 20, replace=False), rng.integers(1, 4, 20))}
              for _ in range(2_000)]  # fmt: skip
    batch = gain_batch(rankings, grades, depth=10)
    assert np.array_equal(
        ndcg_at_k_batch(batch, 10),
        np.array([ndcg_at_k(*relevance_gains(r[:10], g), 10) for r, g in zip(rankings, grades, strict=True)]),
    )
