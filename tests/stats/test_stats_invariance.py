"""Every interval is a function of the multiset of (paired) values.

The same cases in another order, or under other ids, must print the same bits:
a decision that moves when a results file is re-sorted is not a decision.
Intervals are compared bound by bound through ``float.hex``, so even a last-bit
difference (or 0.0 against -0.0) fails.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof import stats
from oloproof.records import JudgmentRow
from oloproof.report import summarize_criterion

# Graded scores with ties (the atoms of nDCG at small k) mixed with arbitrary
# values in [0, 1], so both the tied and the continuous paths are exercised.
SCORE = st.one_of(
    st.sampled_from([0.0, 0.39, 0.5, 0.63, 1.0]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)
SCORES = st.lists(SCORE, min_size=1, max_size=60)
PAIRS = st.lists(st.tuples(SCORE, SCORE), min_size=1, max_size=60)
PASS_FAIL_PAIRS = st.lists(
    st.tuples(st.sampled_from([0.0, 1.0]), st.sampled_from([0.0, 1.0])), min_size=1, max_size=60
)
LEVEL = st.sampled_from([0.8, 0.9, 0.95, 0.99])
EXAMPLES = settings(max_examples=40, deadline=None)


def _bits(interval: stats.Interval) -> tuple[str, str, str, str]:
    return (interval.low.hex(), interval.high.hex(), interval.confidence.hex(), interval.method)


def _orders(data: st.DataObject, items: list) -> list[list]:
    """The items as given, reversed, and in a drawn permutation."""
    return [items, items[::-1], data.draw(st.permutations(items))]


@EXAMPLES
@given(values=SCORES, level=LEVEL, data=st.data())
def test_mean_interval_ignores_order(values: list[float], level: float, data: st.DataObject) -> None:
    results = {_bits(stats.mean_interval(order, level)) for order in _orders(data, values)}
    assert len(results) == 1
    # A numpy array in another order is the same multiset too.
    shuffled = np.random.default_rng(len(values)).permutation(np.array(values))
    assert _bits(stats.mean_interval(shuffled, level)) in results


@EXAMPLES
@given(values=SCORES, data=st.data())
def test_betting_interval_ignores_order(values: list[float], data: st.DataObject) -> None:
    results = {_bits(stats.betting_mean_interval(order, orderings=2)) for order in _orders(data, values)}
    assert len(results) == 1


@pytest.mark.slow
@EXAMPLES
@given(pairs=PAIRS, level=LEVEL, data=st.data())
def test_paired_mean_interval_ignores_order(
    pairs: list[tuple[float, float]], level: float, data: st.DataObject
) -> None:
    difference, dispatched = set(), set()
    for order in _orders(data, pairs):
        candidate, baseline = [c for c, _ in order], [b for _, b in order]
        difference.add(_bits(stats.paired_difference_interval(candidate, baseline, level)))
        dispatched.add(_bits(stats.paired_interval(candidate, baseline, level)))
    assert len(difference) == 1
    assert len(dispatched) == 1


@pytest.mark.slow
@EXAMPLES
@given(pairs=PASS_FAIL_PAIRS, level=LEVEL, data=st.data())
def test_paired_pass_fail_interval_ignores_order(
    pairs: list[tuple[float, float]], level: float, data: st.DataObject
) -> None:
    results = set()
    for order in _orders(data, pairs):
        candidate, baseline = [c for c, _ in order], [b for _, b in order]
        counts = stats.paired_counts(np.array(candidate), np.array(baseline))
        results.add(_bits(stats.paired_binary_interval(*counts, level)))
        results.add(_bits(stats.paired_interval(candidate, baseline, level)))
    assert len(results) == 1


def _row(case_id: str, value: float) -> JudgmentRow:
    return JudgmentRow(
        run_id="run_1", case_id=case_id, criterion="ndcg_at_6", evaluator="ndcg", spec_hash="h",
        status="observed", outcome="completed", reason=None, value=value,
        passed=None if value not in (0.0, 1.0) else value == 1.0, detail={}, hit=False,
    )


@EXAMPLES
@given(values=SCORES, data=st.data())
def test_report_row_ignores_order_and_case_ids(values: list[float], data: st.DataObject) -> None:
    summaries = []
    for index, order in enumerate(_orders(data, values)):
        # Other ids for each ordering: the ids must not matter either.
        rows = [_row(f"case-{index}-{position:03d}", value) for position, value in enumerate(order)]
        summary = summarize_criterion(rows, kind="auto", confidence=0.95)
        summaries.append({key: (value.hex() if isinstance(value, float) else value)
                          for key, value in summary.items()})
    assert summaries[0] == summaries[1] == summaries[2]
