"""Comparing two recorded runs: metric lines, exploratory probes and rule decisions."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from oloproof import stats
from oloproof._exceptions import ConfigError, UsageError
from oloproof.comparison._pairing import pair_metric, paired_line_values
from oloproof.comparison._policy import Policy, Rule
from oloproof.config._yaml import load_yaml_with_lines, locate, read_config_text
from oloproof.records._comparisons import (
    ComparisonRecord,
    ComparisonScope,
    DecisionEntry,
    MetricLine,
    PairedValues,
    Pairing,
    ProbeLine,
)
from oloproof.records._stored import StoredEvaluator, StoredManifest, StoredRun
from oloproof.report import slice_values

__all__ = ["check_comparable", "compare_runs", "policy_error"]

def _line(pairing: Pairing, values: PairedValues | None) -> MetricLine:
    """How a metric's cases were paired, as each line reports it, and its difference."""
    line: MetricLine = {"paired": pairing["paired"], "missing": pairing["missing"],
                        "judge_errors": pairing["judge_errors"], "excluded": pairing["excluded"],
                        "unpaired": pairing["unpaired"]}  # fmt: skip
    if values is not None:
        line.update(values)
    return line


def _specs(manifest: StoredManifest) -> dict[str, StoredEvaluator]:
    return {entry["criterion"]: entry for entry in manifest["evaluators"]}


def check_comparable(candidate: StoredRun, baseline: StoredRun, *, allow_partial: bool,
                     policy: Policy | None, policy_path: str | None = None) -> ComparisonScope:
    """Refuse comparisons that would mislead; return what a partial comparison leaves out."""
    a, b = candidate["manifest"], baseline["manifest"]
    if a["run_id"] == b["run_id"]:
        raise UsageError(f"cannot compare run {a['run_id']} with itself")
    specs_a, specs_b = _specs(a), _specs(b)
    if policy is not None:
        for index, rule in enumerate(policy.rules):
            if rule.metric not in specs_a and rule.metric not in specs_b:
                raise policy_error(
                    f"rule {rule.name!r} names metric {rule.metric!r}, which neither run has",
                    policy_path, ("rules", index, "metric"),
                )
    different = sorted(c for c in set(specs_a) & set(specs_b) if specs_a[c]["spec_hash"] != specs_b[c]["spec_hash"])
    one_sided = sorted(set(specs_a) ^ set(specs_b))
    recorded = all((m.get("system") or {}).get("kind") == "recorded" for m in (a, b))
    if recorded:  # two logs of one set of rows differ in content by design: pair by row id
        same_dataset = {r["case_id"] for r in candidate["cases"]} == {r["case_id"] for r in baseline["cases"]}
    else:
        same_dataset = a["dataset_sha256"] == b["dataset_sha256"]
    if not allow_partial:
        if not same_dataset:
            what = "recorded runs hold different row ids" if recorded else "runs are on different datasets"
            raise UsageError(f"the {what}; pass --allow-partial to pair what matches")
        if different:
            raise UsageError(f"the runs judge {different[0]} with different evaluator specs; "
                             "pass --allow-partial to compare the rest")
    return {"different_specs": different, "one_sided": one_sided, "same_dataset": same_dataset}


def policy_error(message: str, path: str | None, location: tuple[str | int, ...]) -> ConfigError:
    """A ConfigError pointing at ``location`` in the policy file (when there is one)."""
    field = ".".join(str(part) for part in location)
    if path is None or not Path(path).is_file():
        return ConfigError(message, field=field)
    _, lines = load_yaml_with_lines(read_config_text(path, "policy file"), path=path)
    return ConfigError(message, path=path, line=locate(lines, location), field=field)


def _probes(candidate: StoredRun, baseline: StoredRun, criteria: list[str], confidence: float) -> list[ProbeLine]:
    manifest = baseline["manifest"]
    probes: list[ProbeLine] = []
    for name in manifest.get("slices", []):
        groups: dict[str, set[str]] = defaultdict(set)
        for case_id, value in slice_values(baseline["cases"], name).items():
            groups[value].add(case_id)
        for criterion in criteria:
            for value in sorted(groups):
                keep = groups[value]
                pairing = pair_metric([r for r in candidate["judgments"] if r["case_id"] in keep],
                                      [r for r in baseline["judgments"] if r["case_id"] in keep], criterion)
                scored = pairing["paired"] >= manifest.get("min_slice_support", 1)
                probe: ProbeLine = {"slice": name, "slice_value": value, "criterion": criterion, "scored": scored}
                probe.update(_line(pairing, paired_line_values(pairing, confidence) if scored else None))
                probes.append(probe)
    return probes


def _decide(rule: Rule, metric: MetricLine | None, judge_validated: bool) -> DecisionEntry:
    decision: DecisionEntry = {"rule": rule.name, "criterion": rule.metric, "kind": rule.kind, "margin": rule.margin}
    # A difference always comes with its interval (paired_line_values).
    if metric is None or metric["difference"] is None or metric["low"] is None or metric["high"] is None:
        return {**decision, "verdict": "INSUFFICIENT_EVIDENCE", "reason": "no_pairs"}
    low, high = metric["low"], metric["high"]
    decision.update({"difference": metric["difference"], "low": low, "high": high, "paired": metric["paired"]})
    if not judge_validated:
        return {**decision, "verdict": "INSUFFICIENT_EVIDENCE", "reason": "judge_not_validated"}
    if metric["paired"] < rule.min_pairs:
        return {**decision, "verdict": "INSUFFICIENT_EVIDENCE", "reason": "too_few_pairs"}
    interval = stats.Interval(low=low / 100, high=high / 100,
                              confidence=metric["confidence"], method=metric["method"])
    verdict, reason = stats.decide_rule(interval, kind=rule.kind, margin=rule.margin / 100)
    return {**decision, "verdict": verdict, "reason": reason}


def _judge_validated(entry_a: StoredEvaluator | None, entry_b: StoredEvaluator | None, validated: set[str]) -> bool:
    # Both runs' judges must be validated: the same spec may still differ in prompt text
    # or provider type, which the judge id covers and the spec hash does not.
    entries = [entry for entry in (entry_a, entry_b) if entry is not None]
    if not any(entry.get("llm_judge") for entry in entries):
        return True
    return all(entry.get("judge_id") in validated for entry in entries)


def compare_runs(candidate: StoredRun, baseline: StoredRun, *, policy: Policy | None,
                 scope: ComparisonScope, validated_judges: set[str]) -> ComparisonRecord:
    """The comparison's content: metric lines, probes, decisions and the gate."""
    confidence = policy.confidence if policy is not None else 0.95
    specs_a, specs_b = _specs(candidate["manifest"]), _specs(baseline["manifest"])
    criteria = [c for c in specs_b if c in specs_a and c not in scope["different_specs"]]
    metrics: list[MetricLine] = []
    for criterion in criteria:
        pairing = pair_metric(candidate["judgments"], baseline["judgments"], criterion)
        metric: MetricLine = {"criterion": criterion, "confidence": confidence}
        metric.update(_line(pairing, paired_line_values(pairing, confidence)))
        metrics.append(metric)
    by_criterion = {m["criterion"]: m for m in metrics}
    decisions: list[DecisionEntry] = []
    for rule in policy.rules if policy is not None else []:
        validated = _judge_validated(specs_a.get(rule.metric), specs_b.get(rule.metric), validated_judges)
        decisions.append({**_decide(rule, by_criterion.get(rule.metric), validated), "confidence": confidence})
    gate = None
    if policy is not None:
        gate = "PASS" if all(d["verdict"] == "PASS" for d in decisions) else "BLOCK"
    candidate_ids = {row["case_id"] for row in candidate["cases"]}
    return {
        "candidate_run_id": candidate["manifest"]["run_id"],
        "baseline_run_id": baseline["manifest"]["run_id"],
        # A case run with repeats has a row per repeat: cases are counted, not rows.
        "paired_cases": len({row["case_id"] for row in baseline["cases"]} & candidate_ids),
        "confidence": confidence,
        # Each metric line names its own interval; this says how they were chosen.
        "method": f"pass/fail metrics: {stats.PAIRED_BINARY_METHOD}; scores: {stats.PAIRED_METHOD}",
        "metrics": metrics,
        "probes": _probes(candidate, baseline, criteria, confidence),
        "decisions": decisions,
        "gate": gate,
        "policy": None if policy is None else policy.model_dump(mode="json"),
        "scope": scope,
    }
