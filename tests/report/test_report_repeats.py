"""Repeats: a case's samples summarized as one case, and intervals over cases that hold.

With repeats a run has a judgment row per case and sample. The case is the interval's
unit: each case contributes the mean of its samples. Counting every sample as a case
makes the interval as narrow as if there were repeats × as many cases, which
under-covers when cases differ (they do: some are easy, some hard). The simulation
below shows both numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from oloproof import stats
from oloproof.records import JudgmentBrief, JudgmentRow
from oloproof.records._samples import flaky_cases, judge_disagreement
from oloproof.report import summarize_criterion


def _row(case_id: str, value: float | None, repeat: int = 0, judge_repeat: int = 0, status: str = "observed",
         outcome: str = "completed") -> JudgmentRow:  # fmt: skip
    return JudgmentRow(run_id="run_1", case_id=case_id, criterion="answer_correct", evaluator="contains",
                       spec_hash="h", status=status, outcome=outcome, value=value, detail={}, hit=False,
                       repeat=repeat, judge_repeat=judge_repeat)  # fmt: skip


def test_each_case_is_the_mean_of_its_samples_and_the_interval_is_over_cases():
    rows = [_row("a", v, r) for r, v in enumerate([1.0, 1.0, 0.0])] + [_row("b", v, r) for r, v in enumerate([0.0] * 3)]
    rows += [_row("c", 1.0, r) for r in range(3)]
    summary = summarize_criterion(rows, kind="proportion", confidence=0.95)
    assert (summary["observed"], summary["samples"], summary["repeats"], summary["flaky"]) == (3, 9, 3, 1)
    assert summary["estimate"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    interval = stats.mean_interval([2 / 3, 0.0, 1.0], 0.95, seed=0)
    assert (summary["low"], summary["high"], summary["method"]) == (interval.low, interval.high, interval.method)
    assert summary["kind"] == "proportion" and summary["successes"] is None


def test_cases_whose_samples_agree_keep_the_exact_interval():
    rows = [_row(case, value, r) for case, value in (("a", 1.0), ("b", 0.0), ("c", 1.0)) for r in range(4)]
    summary = summarize_criterion(rows, kind="proportion", confidence=0.95)
    interval = stats.clopper_pearson(2, 3, 0.95)
    assert (summary["successes"], summary["low"], summary["high"]) == (2, interval.low, interval.high)
    assert summary["flaky"] == 0


def test_a_case_is_missing_only_when_no_sample_is_observed():
    rows = [_row("a", 1.0, 0), _row("a", None, 1, status="missing", outcome="skipped")]
    rows += [_row("b", None, r, status="missing", outcome="error") for r in range(2)]
    rows += [_row("c", None, r, status="excluded", outcome="skipped") for r in range(2)]
    summary = summarize_criterion(rows, kind="proportion", confidence=0.95)
    assert (summary["observed"], summary["samples"], summary["missing"], summary["judge_errors"],
            summary["excluded"]) == (1, 1, 1, 1, 1)  # fmt: skip


def test_the_judges_own_disagreement_is_the_share_of_samples_its_repeats_split():
    rows = [_row("a", 1.0, 0, 0), _row("a", 0.0, 0, 1), _row("b", 1.0, 0, 0), _row("b", 1.0, 0, 1)]
    assert judge_disagreement(rows) == 0.5
    assert judge_disagreement([JudgmentBrief.of(row) for row in rows]) == 0.5
    assert judge_disagreement(rows[:1]) is None
    assert flaky_cases(rows) == {"a": "flaky", "b": "stable"}


def _coverage(rng: np.random.Generator, cases: int, repeats: int, sweeps: int) -> tuple[float, float]:
    """How often each interval holds the true pass rate: over cases (the product's),
    and over every sample as if independent (the naive one)."""
    truth = 0.5
    held = naive = 0
    for sweep in range(sweeps):
        rates = rng.beta(0.4, 0.4, size=cases)  # cases differ a lot: most near always or never
        passes = rng.binomial(repeats, rates)
        rows = [_row(f"c{i}", 1.0 if s < passes[i] else 0.0, s) for i in range(cases) for s in range(repeats)]
        summary = summarize_criterion(rows, kind="proportion", confidence=0.95, seed=sweep)
        held += summary["low"] <= truth <= summary["high"]
        flat = stats.clopper_pearson(int(passes.sum()), cases * repeats, 0.95)
        naive += flat.low <= truth <= flat.high
    return held / sweeps, naive / sweeps


@pytest.mark.slow
def test_intervals_over_cases_hold_their_coverage_where_counting_samples_does_not():
    covered, naive = _coverage(np.random.default_rng(20261204), cases=20, repeats=5, sweeps=1000)
    # 1,000 sweeps: a 95% interval's coverage is measured to about ±1.4 points (one standard error 0.7).
    assert covered >= 0.93
    assert naive <= 0.85
