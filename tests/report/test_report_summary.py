"""Metric rows: one per criterion, then one per slice value.

Covers ``summarize_criterion`` (pass/fail criteria as proportions with the
Clopper–Pearson interval, binary scores read as proportions, other scores as means
with Gaffke's interval; missing and excluded rows counted, never observed; no
estimate without an observed value; the confidence level carried through) and
``summarize_metrics`` (report order, slice rows sorted by value, cases outside a
slice left out, slice values below ``min_slice_support`` listed but not scored,
slices kept on the overall row's scale).
"""

from __future__ import annotations

import pytest

from oloproof import stats
from oloproof.records import JudgmentRow
from oloproof.report import summarize_criterion, summarize_metrics

CP = "clopper-pearson"


def _row(case_id, value, criterion="answer_correct", status="observed", reason=None):
    passed = None if value is None or value not in (0.0, 1.0) else value == 1.0
    return JudgmentRow(run_id="run_1", case_id=case_id, criterion=criterion, evaluator="contains",
                       spec_hash="h", status=status, outcome={"observed": "completed", "missing": "skipped", "excluded": "skipped"}[status], reason=reason, value=value, passed=passed,
                       detail={}, hit=False)


def _pass_fail(passes, fails, criterion="answer_correct", start=0):
    values = [1.0] * passes + [0.0] * fails
    return [_row(f"c{start + i:02d}", v, criterion) for i, v in enumerate(values)]


def _missing(case_id, criterion="answer_correct"):
    return _row(case_id, None, criterion, status="missing", reason="generate_error")


def _excluded(case_id, criterion="answer_correct"):
    return _row(case_id, None, criterion, status="excluded", reason="no_relevance_labels")


def _bounds(successes, n, confidence=0.95):
    interval = stats.clopper_pearson(successes, n, confidence)
    return interval.low, interval.high


# -- summarize_criterion ----------------------------------------------------------


UNREPEATED = {"samples": None, "repeats": None, "flaky": None, "judge_disagreement": None}
"""A run without repeats: one sample a case, nothing to count of them."""


def test_pass_fail_criterion_is_a_proportion_with_the_exact_interval():
    summary = summarize_criterion(_pass_fail(9, 4), kind="proportion", confidence=0.95)
    low, high = _bounds(9, 13)
    assert summary == {"observed": 13, "missing": 0, "judge_errors": 0, "excluded": 0, "successes": 9,
                       "estimate": pytest.approx(9 / 13), "low": low, "high": high,
                       "confidence": 0.95, "method": CP, "kind": "proportion", **UNREPEATED}


def test_the_walkthrough_answer_row_bounds():
    summary = summarize_criterion(_pass_fail(9, 4), kind="proportion", confidence=0.95)
    assert summary["low"] == pytest.approx(0.38574, abs=1e-5)
    assert summary["high"] == pytest.approx(0.90908, abs=1e-5)


def test_missing_and_excluded_rows_are_counted_apart_from_observed():
    rows = _pass_fail(3, 1) + [_missing("m1"), _missing("m2"), _excluded("x1")]
    summary = summarize_criterion(rows, kind="proportion", confidence=0.95)
    low, high = _bounds(3, 4)
    assert (summary["observed"], summary["missing"], summary["excluded"]) == (4, 2, 1)
    assert summary["successes"] == 3
    assert summary["estimate"] == 0.75
    assert (summary["low"], summary["high"]) == (low, high)


@pytest.mark.parametrize("kind", ["proportion", "auto"])
def test_all_missing_gives_counts_and_no_estimate(kind):
    rows = [_missing("m1"), _missing("m2"), _excluded("x1")]
    summary = summarize_criterion(rows, kind=kind, confidence=0.95)
    assert summary == {"observed": 0, "missing": 2, "judge_errors": 0, "excluded": 1, "successes": None, "estimate": None,
                       "low": None, "high": None, "confidence": 0.95, "method": None, "kind": kind, **UNREPEATED}


def test_no_rows_at_all_give_zero_counts():
    summary = summarize_criterion([], kind="proportion", confidence=0.9)
    assert summary["observed"] == summary["missing"] == summary["excluded"] == 0
    assert summary["estimate"] is None and summary["confidence"] == 0.9


def test_zero_successes_is_an_estimate_of_zero_not_none():
    summary = summarize_criterion(_pass_fail(0, 4), kind="proportion", confidence=0.95)
    assert summary["successes"] == 0
    assert summary["estimate"] == 0.0
    assert summary["low"] == 0.0
    assert summary["high"] == pytest.approx(0.60236, abs=1e-5)


def test_all_passed_reaches_one():
    summary = summarize_criterion(_pass_fail(13, 0), kind="proportion", confidence=0.95)
    assert summary["estimate"] == 1.0 and summary["high"] == 1.0
    assert summary["low"] == pytest.approx(0.75295, abs=1e-5)


def test_binary_scores_are_read_as_a_proportion():
    rows = [_row(f"c{i}", v, "hit_rate_at_2") for i, v in enumerate([1.0, 1.0, 0.0, 1.0])]
    summary = summarize_criterion(rows, kind="auto", confidence=0.95)
    low, high = _bounds(3, 4)
    assert summary["kind"] == "proportion" and summary["successes"] == 3
    assert summary["method"] == CP
    assert (summary["low"], summary["high"]) == (low, high)


def test_graded_scores_are_a_mean_with_the_gaffke_interval():
    values = [0.2, 0.5, 0.8, 0.4]
    rows = [_row(f"c{i}", v, "ndcg_at_6") for i, v in enumerate(values)]
    summary = summarize_criterion(rows, kind="auto", confidence=0.95)
    interval = stats.mean_interval(values, 0.95, seed=0)
    assert summary["kind"] == "mean"
    assert summary["successes"] is None
    assert summary["estimate"] == pytest.approx(0.475)
    assert (summary["low"], summary["high"], summary["method"]) == (interval.low, interval.high, interval.method)
    assert summary["method"] == stats.MEAN_METHOD


def test_mean_kind_keeps_binary_values_a_mean():
    rows = [_row(f"c{i}", v, "hit_rate_at_2") for i, v in enumerate([1.0, 0.0, 1.0, 1.0])]
    summary = summarize_criterion(rows, kind="mean", confidence=0.95)
    assert summary["kind"] == "mean" and summary["successes"] is None
    assert summary["method"] == stats.MEAN_METHOD


def test_a_lower_confidence_gives_a_narrower_interval():
    wide = summarize_criterion(_pass_fail(9, 4), kind="proportion", confidence=0.95)
    narrow = summarize_criterion(_pass_fail(9, 4), kind="proportion", confidence=0.80)
    low, high = _bounds(9, 13, 0.80)
    assert narrow["confidence"] == 0.80
    assert (narrow["low"], narrow["high"]) == (low, high)
    assert wide["low"] < narrow["low"] < narrow["high"] < wide["high"]


# -- summarize_metrics ------------------------------------------------------------


def _metrics(judgments, criteria, slices=None, min_support=4, confidence=0.95):
    return summarize_metrics(judgments, criteria=criteria, slices=slices or {},
                             min_slice_support=min_support, confidence=confidence)


def test_one_overall_row_per_criterion_in_report_order():
    judgments = _pass_fail(2, 2, "answer_correct") + _pass_fail(4, 0, "citations_valid")
    metrics = _metrics(judgments, [("citations_valid", "proportion"), ("answer_correct", "proportion")])
    assert [(m["criterion"], m["slice"], m["slice_value"], m["scored"]) for m in metrics] == [
        ("citations_valid", None, None, True),
        ("answer_correct", None, None, True),
    ]
    assert [m["successes"] for m in metrics] == [4, 2]


def test_a_criterion_not_in_the_list_is_left_out():
    judgments = _pass_fail(2, 2, "answer_correct") + _pass_fail(1, 0, "other")
    metrics = _metrics(judgments, [("answer_correct", "proportion")])
    assert [m["criterion"] for m in metrics] == ["answer_correct"]


def test_a_criterion_without_judgments_has_an_empty_row_and_no_slices():
    metrics = _metrics([], [("answer_correct", "proportion")], slices={"metadata.topic": {"c00": "billing"}})
    assert len(metrics) == 1
    assert metrics[0]["observed"] == 0 and metrics[0]["estimate"] is None and metrics[0]["scored"] is True


def test_an_all_missing_score_criterion_keeps_auto_kind():
    judgments = [_missing("m1", "ndcg_at_6"), _missing("m2", "ndcg_at_6")]
    [row] = _metrics(judgments, [("ndcg_at_6", "mean")])
    assert (row["kind"], row["observed"], row["missing"], row["estimate"]) == ("auto", 0, 2, None)


def test_slice_rows_follow_their_overall_row_sorted_by_value():
    judgments = _pass_fail(3, 1, start=0) + _pass_fail(4, 0, start=4)
    topic = {f"c{i:02d}": ("security" if i < 4 else "billing") for i in range(8)}
    metrics = _metrics(judgments, [("answer_correct", "proportion")], slices={"metadata.topic": topic})
    assert [(m["slice"], m["slice_value"], m["observed"], m["successes"]) for m in metrics] == [
        (None, None, 8, 7),
        ("metadata.topic", "billing", 4, 4),
        ("metadata.topic", "security", 4, 3),
    ]
    low, high = _bounds(3, 4)
    security = metrics[2]
    assert security["scored"] is True
    assert (security["estimate"], security["low"], security["high"]) == (0.75, low, high)


def test_each_criterion_gets_its_own_slice_rows():
    judgments = _pass_fail(4, 0, "a") + _pass_fail(0, 4, "b")
    topic = {f"c{i:02d}": "billing" for i in range(4)}
    metrics = _metrics(judgments, [("a", "proportion"), ("b", "proportion")], slices={"metadata.topic": topic})
    assert [(m["criterion"], m["slice_value"], m["estimate"]) for m in metrics] == [
        ("a", None, 1.0), ("a", "billing", 1.0), ("b", None, 0.0), ("b", "billing", 0.0),
    ]


def test_several_slices_each_list_their_values():
    judgments = _pass_fail(4, 0)
    slices = {
        "relevant_position": {"c00": "1", "c01": "1", "c02": "2", "c03": "none"},
        "context_truncated": {"c00": "false", "c01": "false", "c02": "true", "c03": "false"},
    }
    metrics = _metrics(judgments, [("answer_correct", "proportion")], slices=slices, min_support=1)
    assert [(m["slice"], m["slice_value"], m["observed"]) for m in metrics[1:]] == [
        ("relevant_position", "1", 2), ("relevant_position", "2", 1), ("relevant_position", "none", 1),
        ("context_truncated", "false", 3), ("context_truncated", "true", 1),
    ]


def test_a_case_outside_a_slice_is_in_no_slice_row():
    judgments = _pass_fail(4, 0)
    topic = {"c00": "billing", "c01": None, "c02": "billing"}  # c03 has no entry at all
    metrics = _metrics(judgments, [("answer_correct", "proportion")], slices={"metadata.topic": topic},
                       min_support=1)
    assert [(m["slice_value"], m["observed"]) for m in metrics] == [(None, 4), ("billing", 2)]


def test_a_slice_value_below_min_support_is_listed_but_not_scored():
    judgments = _pass_fail(3, 1, start=0) + _pass_fail(1, 1, start=4)
    topic = {f"c{i:02d}": ("billing" if i < 4 else "security") for i in range(6)}
    metrics = _metrics(judgments, [("answer_correct", "proportion")], slices={"metadata.topic": topic})
    security = metrics[2]
    assert security["slice_value"] == "security"
    assert security["scored"] is False
    assert (security["observed"], security["missing"], security["excluded"]) == (2, 0, 0)
    assert security["estimate"] is security["low"] is security["high"] is None
    assert security["method"] is None and security["successes"] is None
    assert security["kind"] == "proportion" and security["confidence"] == 0.95
    assert metrics[1]["scored"] is True  # billing: exactly min support


def test_missing_rows_do_not_count_toward_slice_support():
    judgments = _pass_fail(3, 0) + [_missing("m1"), _missing("m2")]
    topic = {"c00": "billing", "c01": "billing", "c02": "billing", "m1": "billing", "m2": "billing"}
    metrics = _metrics(judgments, [("answer_correct", "proportion")], slices={"metadata.topic": topic})
    billing = metrics[1]
    assert (billing["observed"], billing["missing"], billing["scored"]) == (3, 2, False)


def test_an_all_missing_slice_value_is_not_scored_and_keeps_its_counts():
    judgments = _pass_fail(4, 0) + [_missing("m1"), _excluded("x1")]
    topic = {**{f"c{i:02d}": "billing" for i in range(4)}, "m1": "security", "x1": "security"}
    metrics = _metrics(judgments, [("answer_correct", "proportion")], slices={"metadata.topic": topic})
    security = metrics[2]
    assert (security["observed"], security["missing"], security["excluded"]) == (0, 1, 1)
    assert security["scored"] is False and security["estimate"] is None


def test_slices_stay_on_the_overall_scale_of_a_binary_score():
    # Overall every value is 0 or 1, so the score is a proportion; every slice is too.
    judgments = [_row(f"c{i}", v, "hit_rate_at_2") for i, v in enumerate([1.0, 1.0, 0.0, 1.0, 1.0])]
    slices = {"metadata.topic": {f"c{i}": "billing" for i in range(5)}}
    metrics = _metrics(judgments, [("hit_rate_at_2", "mean")], slices=slices)
    assert [(m["kind"], m["successes"], m["method"]) for m in metrics] == [
        ("proportion", 4, CP), ("proportion", 4, CP),
    ]


def test_a_binary_slice_of_a_graded_score_stays_a_mean():
    values = [1.0, 0.0, 1.0, 1.0, 0.4, 0.6, 0.5, 0.7]
    judgments = [_row(f"c{i}", v, "ndcg_at_6") for i, v in enumerate(values)]
    topic = {f"c{i}": ("binary" if i < 4 else "graded") for i in range(8)}
    metrics = _metrics(judgments, [("ndcg_at_6", "mean")], slices={"metadata.topic": topic})
    binary = metrics[1]
    assert metrics[0]["kind"] == "mean"
    assert binary["slice_value"] == "binary"
    assert (binary["kind"], binary["successes"], binary["method"]) == ("mean", None, stats.MEAN_METHOD)
    assert binary["estimate"] == 0.75


def test_every_row_carries_the_confidence_level():
    judgments = _pass_fail(4, 4)
    topic = {f"c{i:02d}": "billing" for i in range(8)}
    metrics = _metrics(judgments, [("answer_correct", "proportion")], slices={"metadata.topic": topic},
                       confidence=0.9)
    low, high = _bounds(4, 8, 0.9)
    assert [m["confidence"] for m in metrics] == [0.9, 0.9]
    assert (metrics[0]["low"], metrics[0]["high"]) == (low, high)
    assert (metrics[1]["low"], metrics[1]["high"]) == (low, high)
