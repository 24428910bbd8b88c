"""Rule decisions: ``decide_rule`` for each kind, and what ``compare_runs`` decides before it.

Run records are built by hand in the shape ``load_run_records`` returns: a manifest
(run id, dataset hash, evaluator entries with ``spec_hash`` and ``llm_judge``),
cases and judgment rows.
"""

from __future__ import annotations

import pytest

from oloproof import stats
from oloproof._exceptions import ConfigError, StatsError, UsageError
from oloproof.comparison import Policy, Rule, check_comparable, compare_runs, render_comparison


def interval(low: float, high: float) -> stats.Interval:
    return stats.Interval(low=low, high=high, confidence=0.95, method="test")


# (kind, margin, low, high) -> (verdict, reason); fractions, not points.
DECIDE_TABLE = [
    # non-inferiority: PASS when low > -margin, FAIL when high < -margin.
    ("non-inferiority", 0.05, -0.04, 0.20, "PASS", "interval_above_margin"),
    ("non-inferiority", 0.05, -0.05, 0.20, "INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
    ("non-inferiority", 0.05, -0.30, 0.30, "INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
    ("non-inferiority", 0.05, -0.30, -0.05, "INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
    ("non-inferiority", 0.05, -0.30, -0.06, "FAIL", "interval_below_margin"),
    ("non-inferiority", 0.0, 0.001, 0.1, "PASS", "interval_above_margin"),
    ("non-inferiority", 0.0, -0.1, -0.001, "FAIL", "interval_below_margin"),
    # superiority: PASS when low > margin, FAIL when high <= margin.
    ("superiority", 0.02, 0.03, 0.10, "PASS", "interval_above_margin"),
    ("superiority", 0.02, 0.02, 0.10, "INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
    ("superiority", 0.02, -0.10, 0.10, "INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
    ("superiority", 0.02, -0.10, 0.02, "FAIL", "interval_below_margin"),
    ("superiority", 0.02, -0.10, 0.01, "FAIL", "interval_below_margin"),
    ("superiority", 0.0, -0.10, 0.0, "FAIL", "interval_below_margin"),
    # equivalence: PASS inside (-margin, margin), FAIL entirely outside.
    ("equivalence", 0.05, -0.04, 0.04, "PASS", "interval_within_margin"),
    ("equivalence", 0.05, -0.05, 0.04, "INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
    ("equivalence", 0.05, -0.04, 0.05, "INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
    ("equivalence", 0.05, -0.10, 0.10, "INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
    ("equivalence", 0.05, 0.05, 0.20, "FAIL", "interval_outside_margin"),
    ("equivalence", 0.05, -0.20, -0.05, "FAIL", "interval_outside_margin"),
    ("equivalence", 0.05, 0.10, 0.20, "FAIL", "interval_outside_margin"),
]


@pytest.mark.parametrize(("kind", "margin", "low", "high", "verdict", "reason"), DECIDE_TABLE)
def test_decide_rule(kind, margin, low, high, verdict, reason):
    assert stats.decide_rule(interval(low, high), kind=kind, margin=margin) == (verdict, reason)


@pytest.mark.parametrize(("kind", "margin"), [("better", 0.05), ("non-inferiority", -0.01),
                                              ("equivalence", float("nan")), ("superiority", float("inf"))])
def test_decide_rule_refuses_bad_arguments(kind, margin):
    with pytest.raises(StatsError):
        stats.decide_rule(interval(-0.1, 0.1), kind=kind, margin=margin)


# -- hand-built runs ------------------------------------------------------------


def make_run(run_id: str, values: dict[str, list[float | None]], *, llm: frozenset[str] = frozenset(),
             dataset: str = "dataset-1", spec: str = "v1") -> dict:
    """A run whose criterion ``c`` has ``values[c][i]`` on case ``case-<i>`` (None: missing)."""
    count = max(len(v) for v in values.values())
    evaluators = [{"criterion": c, "kind": "proportion", "llm_judge": c in llm, "spec_hash": f"{c}-{spec}",
                   "judge_id": f"{c}-{spec}" if c in llm else None} for c in values]
    judgments = [
        {"case_id": f"case-{i:03d}", "criterion": c, "status": "missing" if v is None else "observed", "value": v}
        for c, column in values.items() for i, v in enumerate(column)
    ]
    return {
        "manifest": {"run_id": run_id, "dataset_sha256": dataset, "evaluators": evaluators, "slices": [],
                     "min_slice_support": 1},
        "cases": [{"case_id": f"case-{i:03d}", "metadata": {}} for i in range(count)],
        "judgments": judgments,
    }


def policy(*rules: Rule) -> Policy:
    return Policy(rules=list(rules))


def decide(candidate, baseline, *rules, validated=frozenset(), allow_partial=False):
    rules_policy = policy(*rules)
    scope = check_comparable(candidate, baseline, allow_partial=allow_partial, policy=rules_policy)
    return compare_runs(candidate, baseline, policy=rules_policy, scope=scope, validated_judges=set(validated))


BETTER = [1.0] * 40
WORSE = [0.0] * 40


def test_too_few_pairs_even_for_a_huge_effect():
    candidate = make_run("run_c", {"answer_correct": [1.0] * 9})
    baseline = make_run("run_b", {"answer_correct": [0.0] * 9})
    record = decide(candidate, baseline, Rule(name="r", metric="answer_correct", kind="superiority", margin=5))
    (decision,) = record["decisions"]
    assert (decision["verdict"], decision["reason"], decision["paired"]) == (
        "INSUFFICIENT_EVIDENCE", "too_few_pairs", 9)
    assert record["gate"] == "BLOCK"
    # With min_pairs lowered to the 9 pairs there are, the interval decides.
    record = decide(candidate, baseline,
                    Rule(name="r", metric="answer_correct", kind="superiority", margin=5, min_pairs=9))
    assert (record["decisions"][0]["verdict"], record["gate"]) == ("PASS", "PASS")


def test_missing_cases_do_not_count_towards_min_pairs():
    candidate = make_run("run_c", {"answer_correct": [1.0] * 9 + [None] * 3})
    baseline = make_run("run_b", {"answer_correct": [0.0] * 12})
    record = decide(candidate, baseline, Rule(name="r", metric="answer_correct", kind="superiority", margin=5))
    (metric,) = record["metrics"]
    assert (metric["paired"], metric["missing"]) == (9, 3)
    assert record["decisions"][0]["reason"] == "too_few_pairs"


def test_an_unvalidated_llm_judge_cannot_gate():
    candidate = make_run("run_c", {"grounded": BETTER, "answer_correct": BETTER}, llm=frozenset({"grounded"}))
    baseline = make_run("run_b", {"grounded": WORSE, "answer_correct": WORSE}, llm=frozenset({"grounded"}))
    rules = (Rule(name="grounded-not-worse", metric="grounded", kind="non-inferiority", margin=2),
             Rule(name="answers-not-worse", metric="answer_correct", kind="non-inferiority", margin=2))
    record = decide(candidate, baseline, *rules)
    verdicts = {d["rule"]: (d["verdict"], d["reason"]) for d in record["decisions"]}
    assert verdicts == {
        "grounded-not-worse": ("INSUFFICIENT_EVIDENCE", "judge_not_validated"),
        "answers-not-worse": ("PASS", "interval_above_margin"),
    }
    assert record["gate"] == "BLOCK"
    # The interval is still reported beside the refusal.
    grounded = record["decisions"][0]
    assert grounded["difference"] == pytest.approx(100.0) and grounded["paired"] == 40

    # Once a passing validation exists for that exact judge, it gates like any metric.
    record = decide(candidate, baseline, *rules, validated={"grounded-v1"})
    assert [d["verdict"] for d in record["decisions"]] == ["PASS", "PASS"]
    assert record["gate"] == "PASS"
    # A validation of another identity of the judge does not count.
    record = decide(candidate, baseline, *rules, validated={"grounded-v0"})
    assert record["decisions"][0]["reason"] == "judge_not_validated"


def test_judge_not_validated_when_the_baseline_marks_it():
    candidate = make_run("run_c", {"grounded": BETTER})
    baseline = make_run("run_b", {"grounded": WORSE}, llm=frozenset({"grounded"}))
    record = decide(candidate, baseline, Rule(name="g", metric="grounded", kind="non-inferiority"))
    # The baseline's evaluator entry says what the metric is.
    assert record["decisions"][0]["reason"] == "judge_not_validated"


def test_no_pairs():
    candidate = make_run("run_c", {"answer_correct": [None] * 20})
    baseline = make_run("run_b", {"answer_correct": BETTER[:20]})
    record = decide(candidate, baseline, Rule(name="r", metric="answer_correct", kind="non-inferiority"))
    assert (record["decisions"][0]["verdict"], record["decisions"][0]["reason"]) == (
        "INSUFFICIENT_EVIDENCE", "no_pairs")
    assert record["metrics"][0]["difference"] is None


def test_a_metric_only_one_run_has_is_not_paired():
    candidate = make_run("run_c", {"answer_correct": BETTER, "extra": BETTER})
    baseline = make_run("run_b", {"answer_correct": BETTER})
    record = decide(candidate, baseline, Rule(name="x", metric="extra", kind="non-inferiority"))
    assert [m["criterion"] for m in record["metrics"]] == ["answer_correct"]
    assert (record["decisions"][0]["verdict"], record["decisions"][0]["reason"]) == (
        "INSUFFICIENT_EVIDENCE", "no_pairs")
    assert record["scope"]["one_sided"] == ["extra"]


def test_margins_are_points():
    # 400 agreeing pass/fail pairs: the interval is +-z^2/(400 + z^2), +-0.95 points.
    candidate = make_run("run_c", {"answer_correct": [1.0, 0.0] * 200})
    baseline = make_run("run_b", {"answer_correct": [1.0, 0.0] * 200})
    record = decide(
        candidate, baseline,
        Rule(name="two", metric="answer_correct", kind="non-inferiority", margin=2),
        Rule(name="half", metric="answer_correct", kind="non-inferiority", margin=0.5),
        Rule(name="eq-two", metric="answer_correct", kind="equivalence", margin=2),
        Rule(name="sup-zero", metric="answer_correct", kind="superiority", margin=0),
    )
    metric = record["metrics"][0]
    assert 0.9 < metric["high"] < 1.0 and metric["low"] == pytest.approx(-metric["high"])
    assert metric["method"] == stats.PAIRED_BINARY_METHOD
    assert {d["rule"]: (d["verdict"], d["reason"]) for d in record["decisions"]} == {
        "two": ("PASS", "interval_above_margin"),
        "half": ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
        "eq-two": ("PASS", "interval_within_margin"),
        "sup-zero": ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
    }


def test_the_gate_passes_only_when_every_rule_passes():
    candidate = make_run("run_c", {"a": BETTER, "b": BETTER})
    baseline = make_run("run_b", {"a": WORSE, "b": BETTER})
    passing = Rule(name="a-better", metric="a", kind="superiority", margin=20)
    record = decide(candidate, baseline, passing)
    assert record["gate"] == "PASS"
    record = decide(candidate, baseline, passing, Rule(name="b-better", metric="b", kind="superiority", margin=20))
    assert [d["verdict"] for d in record["decisions"]] == ["PASS", "FAIL"]
    assert record["gate"] == "BLOCK"


def test_without_a_policy_there_is_no_gate():
    candidate = make_run("run_c", {"a": BETTER})
    baseline = make_run("run_b", {"a": WORSE})
    scope = check_comparable(candidate, baseline, allow_partial=False, policy=None)
    record = compare_runs(candidate, baseline, policy=None, scope=scope, validated_judges=set())
    assert (record["gate"], record["decisions"], record["policy"]) == (None, [], None)
    assert record["metrics"][0]["difference"] == pytest.approx(100.0)


# -- refusals -------------------------------------------------------------------


def test_a_run_cannot_be_compared_with_itself():
    run = make_run("run_same", {"a": BETTER})
    with pytest.raises(UsageError, match="cannot compare run run_same with itself"):
        check_comparable(run, run, allow_partial=True, policy=None)


def test_a_rule_naming_a_metric_neither_run_has():
    candidate = make_run("run_c", {"a": BETTER})
    baseline = make_run("run_b", {"a": BETTER})
    with pytest.raises(ConfigError) as caught:
        check_comparable(candidate, baseline, allow_partial=True,
                         policy=policy(Rule(name="typo", metric="aa", kind="superiority")))
    assert caught.value.field == "rules.0.metric"
    assert "'typo'" in caught.value.message and "'aa'" in caught.value.message


def test_different_datasets_need_allow_partial():
    candidate = make_run("run_c", {"a": BETTER[:30]}, dataset="d2")
    baseline = make_run("run_b", {"a": BETTER})
    with pytest.raises(UsageError, match="different datasets.*--allow-partial"):
        check_comparable(candidate, baseline, allow_partial=False, policy=None)
    scope = check_comparable(candidate, baseline, allow_partial=True, policy=None)
    assert scope["same_dataset"] is False
    record = compare_runs(candidate, baseline, policy=None, scope=scope, validated_judges=set())
    metric = record["metrics"][0]
    assert (metric["paired"], metric["unpaired"]) == (30, 10)
    assert record["paired_cases"] == 30
    assert render_comparison({**record, "comparison_id": "sha256:" + "0" * 64})[1].endswith(
        "· 30 paired · 0 missing · 0 excluded · 10 unpaired")


def test_different_evaluator_specs_need_allow_partial_and_are_left_out():
    candidate = make_run("run_c", {"a": BETTER, "b": BETTER}, spec="v2")
    candidate["manifest"]["evaluators"][0]["spec_hash"] = "a-v1"  # only b differs
    baseline = make_run("run_b", {"a": WORSE, "b": WORSE})
    with pytest.raises(UsageError, match="judge b with different evaluator specs"):
        check_comparable(candidate, baseline, allow_partial=False, policy=None)
    scope = check_comparable(candidate, baseline, allow_partial=True, policy=None)
    assert scope["different_specs"] == ["b"]
    record = compare_runs(candidate, baseline, policy=None, scope=scope, validated_judges=set())
    assert [m["criterion"] for m in record["metrics"]] == ["a"]
    lines = render_comparison({**record, "comparison_id": "sha256:" + "0" * 64})
    assert "Not compared (different evaluator specs): b" in lines
