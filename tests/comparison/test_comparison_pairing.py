"""Pairing two runs' judgments case by case: nothing is dropped silently."""

from __future__ import annotations

import pytest

from oloproof import stats
from oloproof.comparison import pair_metric, paired_line_values


def row(case_id: str, status: str = "observed", value: float | None = 1.0, criterion: str = "answer_correct"):
    if status != "observed":
        value = None
    return {"case_id": case_id, "criterion": criterion, "status": status, "value": value}


def test_observed_in_both_runs_are_paired_in_case_order():
    candidate = [row("b", value=1.0), row("a", value=0.0)]
    baseline = [row("a", value=1.0), row("b", value=1.0)]
    pairing = pair_metric(candidate, baseline, "answer_correct")
    assert pairing["pairs"] == [("a", 0.0, 1.0), ("b", 1.0, 1.0)]
    assert (pairing["paired"], pairing["missing"], pairing["excluded"], pairing["unpaired"]) == (2, 0, 0, 0)
    assert pairing["criterion"] == "answer_correct"


@pytest.mark.parametrize(
    ("mine", "theirs", "bucket"),
    [
        ("missing", "observed", "missing"),
        ("observed", "missing", "missing"),
        ("missing", "missing", "missing"),
        ("excluded", "observed", "excluded"),
        ("observed", "excluded", "excluded"),
        ("excluded", "excluded", "excluded"),
        # A failed system stage outweighs an exclusion: the case could not be judged.
        ("missing", "excluded", "missing"),
        ("excluded", "missing", "missing"),
        ("observed", None, "unpaired"),
        (None, "observed", "unpaired"),
        ("missing", None, "unpaired"),
        (None, "excluded", "unpaired"),
    ],
)
def test_each_case_lands_in_exactly_one_bucket(mine, theirs, bucket):
    candidate = [row("x", mine)] if mine else []
    baseline = [row("x", theirs)] if theirs else []
    pairing = pair_metric(candidate + [row("y")], baseline + [row("y")], "answer_correct")
    counts = {k: pairing[k] for k in ("missing", "excluded", "unpaired")}
    assert counts == {k: int(k == bucket) for k in counts}
    assert pairing["paired"] == 1 and pairing["pairs"] == [("y", 1.0, 1.0)]


def test_nothing_is_dropped_silently():
    # 3 paired, 2 missing, 2 excluded, 3 unpaired: all 10 distinct cases accounted for.
    candidate = [
        row("p1"), row("p2", value=0.0), row("p3", value=0.5),
        row("m1", "missing"), row("m2"),
        row("e1", "excluded"), row("e2"),
        row("only-candidate-1"), row("only-candidate-2", "missing"),
    ]
    baseline = [
        row("p1"), row("p2"), row("p3", value=0.25),
        row("m1"), row("m2", "missing"),
        row("e1"), row("e2", "excluded"),
        row("only-baseline", "excluded"),
    ]
    pairing = pair_metric(candidate, baseline, "answer_correct")
    assert (pairing["paired"], pairing["missing"], pairing["excluded"], pairing["unpaired"]) == (3, 2, 2, 3)
    every_case = {r["case_id"] for r in candidate + baseline}
    assert sum(pairing[k] for k in ("paired", "missing", "excluded", "unpaired")) == len(every_case) == 10
    assert [case for case, _, _ in pairing["pairs"]] == ["p1", "p2", "p3"]


def test_other_criteria_are_ignored():
    candidate = [row("a"), row("a", criterion="citations_valid", value=0.0), row("b", criterion="citations_valid")]
    baseline = [row("a", value=0.0)]
    pairing = pair_metric(candidate, baseline, "answer_correct")
    assert pairing["pairs"] == [("a", 1.0, 0.0)]
    assert pairing["unpaired"] == 0
    citations = pair_metric(candidate, baseline, "citations_valid")
    assert (citations["paired"], citations["unpaired"]) == (0, 2)


def test_no_pairs_give_no_difference():
    pairing = pair_metric([row("a", "missing")], [row("a")], "answer_correct")
    line = paired_line_values(pairing, 0.95)
    assert line == {"difference": None, "low": None, "high": None, "method": stats.PAIRED_METHOD}


def test_line_values_are_candidate_minus_baseline_in_points():
    candidate = [row(f"c{i:02d}", value=1.0) for i in range(20)]
    baseline = [row(f"c{i:02d}", value=float(i < 15)) for i in range(20)]
    line = paired_line_values(pair_metric(candidate, baseline, "answer_correct"), 0.95)
    assert line["difference"] == pytest.approx(25.0)
    assert line["low"] < 25.0 < line["high"] <= 100.0
    # Pass/fail values: the paired pass/fail interval of the 2x2 counts (15 both, 5 candidate only).
    direct = stats.paired_binary_interval(15, 5, 0, 0, 0.95)
    assert (line["low"], line["high"]) == pytest.approx((direct.low * 100, direct.high * 100))
    assert line["method"] == stats.PAIRED_BINARY_METHOD
    # The opposite comparison mirrors it.
    mirror = paired_line_values(pair_metric(baseline, candidate, "answer_correct"), 0.95)
    assert mirror["difference"] == pytest.approx(-25.0)
    assert (mirror["low"], mirror["high"]) == pytest.approx((-line["high"], -line["low"]), abs=1e-5)


def test_score_values_get_the_score_interval():
    candidate = [row(f"c{i:02d}", value=0.5 + 0.025 * (i % 3)) for i in range(20)]
    baseline = [row(f"c{i:02d}", value=0.5) for i in range(20)]
    line = paired_line_values(pair_metric(candidate, baseline, "answer_correct"), 0.95)
    direct = stats.paired_difference_interval([0.5 + 0.025 * (i % 3) for i in range(20)], [0.5] * 20, 0.95)
    assert (line["low"], line["high"]) == pytest.approx((direct.low * 100, direct.high * 100))
    assert line["method"] == stats.PAIRED_METHOD


def test_line_values_are_deterministic():
    candidate = [row(f"c{i:02d}", value=float(i % 3 == 0)) for i in range(30)]
    baseline = [row(f"c{i:02d}", value=float(i % 2 == 0)) for i in range(30)]
    pairing = pair_metric(candidate, baseline, "answer_correct")
    assert paired_line_values(pairing, 0.95) == paired_line_values(pairing, 0.95)
    # A higher confidence never gives a narrower interval.
    wide = paired_line_values(pairing, 0.99)
    narrow = paired_line_values(pairing, 0.8)
    assert wide["low"] <= paired_line_values(pairing, 0.95)["low"] <= narrow["low"]
    assert wide["high"] >= paired_line_values(pairing, 0.95)["high"] >= narrow["high"]
