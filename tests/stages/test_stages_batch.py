"""Batch planning: per-case tasks for small runs, bounded batches for large ones."""

from __future__ import annotations

import pytest

from oloproof.stages._batch import MAX_BATCH, PER_CASE_LIMIT, TARGET_BATCHES, Batch, group_batches, plan_batches


def ids(n: int) -> list[str]:
    return [f"c{i:06d}" for i in range(n)]


def test_small_runs_get_one_case_per_batch_and_readable_labels():
    batches = plan_batches(ids(13))
    assert [len(b.case_ids) for b in batches] == [1] * 13
    assert batches[0].label == "c000000"


@pytest.mark.parametrize("n", [PER_CASE_LIMIT + 1, 2000, 7999])
def test_medium_runs_get_about_the_target_number_of_batches(n):
    batches = plan_batches(ids(n))
    assert len(batches) <= TARGET_BATCHES
    assert [c for b in batches for c in b.case_ids] == ids(n)


def test_large_runs_are_split_into_bounded_batches():
    batches = plan_batches(ids(100_000))
    assert max(len(b.case_ids) for b in batches) == MAX_BATCH
    assert len(batches) == 100
    assert batches[1].label == f"c001000 … c001999 ({MAX_BATCH} cases)"


def test_an_explicit_batch_size_wins():
    assert [len(b.case_ids) for b in plan_batches(ids(5), batch_size=2)] == [2, 2, 1]
    assert plan_batches([]) == []


def test_small_batches_are_grouped_and_large_ones_stay_apart():
    (group,) = group_batches(plan_batches(ids(13)))  # thirteen one-case batches: one group
    batches, spanning = group
    assert [b.index for b in batches] == list(range(13))
    assert spanning == Batch(0, tuple(ids(13)))
    large = plan_batches(ids(2000))  # 8 batches of 250
    assert [(len(g), s.index) for g, s in group_batches(large)] == [(1, b.index) for b in large]


def test_groups_cover_every_case_once_in_order():
    cases = ids(100)
    for size in (1, 7, 31, 32, 33, 100):
        groups = group_batches(plan_batches(cases, size))
        assert [c for _, spanning in groups for c in spanning.case_ids] == cases
        assert all(len(s.case_ids) >= PER_CASE_LIMIT for _, s in groups[:-1])
        assert [b for batches, _ in groups for b in batches] == plan_batches(cases, size)
