"""Comparing runs with repeats: cases paired by id, each side its case's mean over repeats."""

from __future__ import annotations

import numpy as np
import pytest

from oloproof import stats
from oloproof.comparison._pairing import pair_metric, paired_line_values


def _rows(case_id: str, values: list[float | None], status: str = "observed") -> list[dict]:
    return [{"case_id": case_id, "criterion": "answer_correct", "status": status if v is not None else "missing",
             "outcome": "completed" if v is not None else "error", "value": v, "repeat": r}
            for r, v in enumerate(values)]  # fmt: skip


def test_each_case_is_paired_once_on_the_means_of_its_repeats():
    candidate = _rows("a", [1.0, 1.0, 0.0]) + _rows("b", [0.0, 1.0, 1.0]) + _rows("c", [None, None])
    baseline = _rows("a", [0.0, 1.0]) + _rows("b", [1.0, 1.0, 1.0]) + _rows("c", [1.0])
    pairing = pair_metric(candidate, baseline, "answer_correct")
    assert pairing["pairs"] == [("a", pytest.approx(2 / 3), 0.5), ("b", pytest.approx(2 / 3), 1.0)]
    assert (pairing["paired"], pairing["missing"], pairing["judge_errors"]) == (2, 1, 1)


def test_rows_of_runs_made_before_repeats_are_one_sample_a_case():
    old = [{k: v for k, v in row.items() if k != "repeat"} for row in _rows("a", [1.0]) + _rows("b", [0.0])]
    pairing = pair_metric(old, old, "answer_correct")
    assert pairing["pairs"] == [("a", 1.0, 1.0), ("b", 0.0, 0.0)]


def _false_alarms(rng: np.random.Generator, cases: int, repeats: int, runs: int) -> tuple[float, float]:
    """Two runs of one sampled system: how often the paired interval excludes 0 over cases
    (the product's), and over repeats paired as if they were cases (the naive one)."""
    alarms = naive = 0
    for run in range(runs):
        rates = rng.beta(0.4, 0.4, size=cases)
        a, b = (rng.random((cases, repeats)) < rates[:, None] for _ in range(2))
        candidate = [row for i in range(cases) for row in _rows(f"c{i}", [float(v) for v in a[i]])]
        baseline = [row for i in range(cases) for row in _rows(f"c{i}", [float(v) for v in b[i]])]
        line = paired_line_values(pair_metric(candidate, baseline, "answer_correct"), 0.95, seed=run)
        alarms += not (line["low"] <= 0.0 <= line["high"])  # type: ignore[operator]
        flat = stats.paired_interval(a.ravel().astype(float).tolist(), b.ravel().astype(float).tolist(), 0.95)
        naive += not (flat.low <= 0.0 <= flat.high)
    return alarms / runs, naive / runs


@pytest.mark.slow
def test_two_runs_of_one_sampled_system_are_told_apart_at_most_at_the_stated_rate():
    alarms, naive = _false_alarms(np.random.default_rng(27), cases=20, repeats=5, runs=400)
    # 400 comparisons of a system with itself: 5% is the most a 95% interval may err (SE about 1.1 points).
    assert alarms <= 0.07
    assert naive <= 0.10  # pairing samples as cases is no safer here; its width is the cost elsewhere
