"""Validation: agreement figures, consensus of annotators, the pass criteria."""

from __future__ import annotations

import json

import pytest
from judged_runs import judged_run

from oloproof import stats
from oloproof.judging import (
    HumanLabel,
    JudgeRequirements,
    case_texts,
    check_requirements,
    consensus,
    load_labels,
    validate_judge,
)

SCORES = [5, 1, 4, 2] * 15  # 30 passes, 30 failures at threshold 3


def _labels(tmp_path, run, labels):
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps({"case_id": c, "criterion": "relevance", "label": label,
                                        **({"annotator": who} if who else {})}) + "\n"
                            for c, label, who in labels), encoding="utf-8")  # fmt: skip
    return load_labels(str(path), run=run, criterion="relevance", texts=case_texts(run, "relevance", {}),
                       find_sample=lambda _: None)


def _ids(run):
    return [case["case_id"] for case in run["cases"]]


def test_a_faithful_judge_passes_the_defaults(tmp_path):
    run = judged_run("run_A", SCORES)
    labels = _labels(tmp_path, run, [(c, "pass" if s >= 3 else "fail", None) for c, s in zip(_ids(run), SCORES)])
    record = validate_judge(run, labels, JudgeRequirements())
    assert record.labels == 60 and record.accuracy.value == 1.0 and record.kappa.value == 1.0
    assert record.kappa.method == stats.KAPPA_NO_DISAGREEMENT_METHOD
    # Perfect agreement still leaves an interval that admits real disagreement.
    assert 0.6 < record.kappa.low < 1.0 and record.kappa.high == 1.0
    assert record.true_positive_rate.value == 1.0 and record.false_positive_rate.value == 0.0
    assert record.true_positive_rate.n == record.false_positive_rate.n == 30
    assert record.accuracy.low == pytest.approx(stats.clopper_pearson(60, 60).low)
    assert record.scale == "pass_fail" and record.weighted_kappa is None
    assert record.passed and [c.name for c in record.checks] == ["labels", "kappa_low", "confidence"]
    assert record.judge_id == "judge-1" and record.judge["threshold"] == 3.0


def test_a_lenient_judge_fails_and_its_errors_are_shown(tmp_path):
    run = judged_run("run_L", [5] * 60)
    labels = _labels(tmp_path, run, [(c, "pass" if s >= 3 else "fail", "ana") for c, s in zip(_ids(run), SCORES)])
    record = validate_judge(run, labels, JudgeRequirements())
    assert record.kappa.value == 0.0 and record.kappa.low is None  # one verdict throughout: no interval
    assert record.false_positive_rate.value == 1.0 and record.accuracy.value == 0.5
    assert not record.passed
    assert {c.name: c.ok for c in record.checks} == {"labels": True, "kappa_low": False, "confidence": True}
    assert len(record.disagreements) == 10 and all(d.human == "fail" and d.judge_passed for d in record.disagreements)


def test_scale_labels_add_weighted_kappa(tmp_path):
    run = judged_run("run_W", SCORES)
    near = {5: 4, 1: 2, 4: 4, 2: 1}
    labels = _labels(tmp_path, run, [(c, near[s], None) for c, s in zip(_ids(run), SCORES)])
    record = validate_judge(run, labels, JudgeRequirements())
    assert record.scale == "score" and record.weighted_kappa is not None
    expected = stats.cohen_kappa(SCORES, [near[s] for s in SCORES], categories=[1, 2, 3, 4, 5], weights="quadratic")
    assert record.weighted_kappa.value == pytest.approx(expected)
    assert record.kappa.value == 1.0  # the verdicts at threshold 3 still agree


def test_too_few_labels_fail_whatever_the_agreement(tmp_path):
    run = judged_run("run_F", SCORES)
    labels = _labels(tmp_path, run, [(c, "pass" if s >= 3 else "fail", None) for c, s in zip(_ids(run), SCORES)][:20])
    record = validate_judge(run, labels, JudgeRequirements())
    assert not record.passed and record.checks[0].measured == 20 and not record.checks[0].ok
    assert validate_judge(run, labels, JudgeRequirements(min_labels=20, min_kappa_low=0.3)).passed


def test_the_gate_rechecks_a_record_against_its_own_requirements(tmp_path):
    run = judged_run("run_G", SCORES)
    labels = _labels(tmp_path, run, [(c, "pass" if s >= 3 else "fail", None) for c, s in zip(_ids(run), SCORES)])
    record = validate_judge(run, labels, JudgeRequirements(confidence=0.9))
    assert record.passed
    assert not all(c.ok for c in check_requirements(record, JudgeRequirements(confidence=0.95)))
    assert not all(c.ok for c in check_requirements(record, JudgeRequirements(confidence=0.9, min_labels=61)))


def _label(value, who=None):
    return HumanLabel(case_id="c", label=value, annotator=who, line=1)


@pytest.mark.parametrize("labels, threshold, expected", [
    (["pass"], 3.0, (True, None)),
    (["pass", "fail", "fail"], 3.0, (False, None)),
    (["pass", "fail"], 3.0, None),  # an even split is a tie: left out
    ([4, 5, 2], 3.0, (True, 4)),
    ([2, 4], 3.0, None),  # the median 3.0 is a score but the votes split evenly
    ([2, 5], None, None),  # median 3.5: no score
    ([1, 2, 2], None, (None, 2)),
])
def test_consensus(labels, threshold, expected):
    assert consensus([_label(v, f"a{i}") for i, v in enumerate(labels)], threshold) == expected


def test_ties_are_counted_and_left_out(tmp_path):
    run = judged_run("run_T", SCORES)
    rows = [(c, "pass" if s >= 3 else "fail", "ana") for c, s in zip(_ids(run), SCORES)]
    rows.append((_ids(run)[0], "fail", "ben"))  # ana says pass: a tie
    record = validate_judge(run, _labels(tmp_path, run, rows), JudgeRequirements())
    assert (record.labels, record.ties, record.annotators) == (59, 1, 2)
