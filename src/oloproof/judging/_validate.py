"""A judge's agreement with human labels, and whether it may gate."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from oloproof import stats
from oloproof._exceptions import LabelError
from oloproof.judging._labels import LabelSet
from oloproof.judging._records import (
    Check,
    Disagreement,
    Estimate,
    HumanLabel,
    JudgeRequirements,
    ValidationRecord,
)
from oloproof.judging._sample import judge_entry, judge_threshold
from oloproof.records import StoredRun

__all__ = ["check_requirements", "consensus", "validate_judge"]

MAX_DISAGREEMENTS = 10
ONE_VERDICT = "no interval: a rater gave one verdict on every labelled case"
SCORES = [1, 2, 3, 4, 5]


def _passes(label: str | int, threshold: float | None) -> bool | None:
    if isinstance(label, str):
        return label == "pass"
    return None if threshold is None else label >= threshold


def consensus(labels: list[HumanLabel], threshold: float | None) -> tuple[bool | None, int | None] | None:
    """One case's labels as one: the majority verdict and the median score.

    Returns:
        ``(passed, score)``: ``score`` is ``None`` unless every label is on the 1-5
        scale, ``passed`` is ``None`` for a mean-score judge. ``None`` when the
        annotators split evenly (the case is a tie and left out).
    """
    score = None
    if all(isinstance(label.label, int) for label in labels):
        middle = statistics.median(int(label.label) for label in labels)
        if middle != int(middle):
            return None
        score = int(middle)
    if threshold is None:
        return None, score
    votes = [_passes(label.label, threshold) for label in labels]
    yes = sum(1 for vote in votes if vote)
    if 2 * yes == len(votes):
        return None
    return 2 * yes > len(votes), score


def _rate(successes: int, n: int, confidence: float) -> Estimate:
    if n == 0:
        return Estimate(value=None, n=0)
    interval = stats.clopper_pearson(successes, n, confidence)
    return Estimate(value=successes / n, low=interval.low, high=interval.high, n=n, method=interval.method)


def _kappa(judge: list[int], human: list[int], categories: list[int], weights: str | None,
           confidence: float, seed: int) -> Estimate:
    value = stats.cohen_kappa(judge, human, categories=categories, weights=weights)
    if math.isnan(value):  # undefined: both raters gave one verdict throughout
        return Estimate(value=None, n=len(judge), method=ONE_VERDICT)
    if len(set(judge)) == 1 or len(set(human)) == 1:
        # κ is 0 by its definition and the items bound nothing else: no interval, so no pass.
        return Estimate(value=value, n=len(judge), method=ONE_VERDICT)
    interval = stats.kappa_interval(judge, human, categories=categories, weights=weights,
                                    confidence=confidence, seed=seed)  # fmt: skip
    return Estimate(value=value, low=interval.low, high=interval.high, n=len(judge), method=interval.method)


def check_requirements(record: ValidationRecord, requirements: JudgeRequirements) -> list[Check]:
    """The pass criteria of ``requirements`` as ``record`` measured them.

    The gate checks a record against its own policy's requirements, so a record
    validated under laxer ones never passes a stricter gate.
    """
    mean_judge = record.judge.get("threshold") is None
    kappa = record.weighted_kappa if mean_judge else record.kappa
    low = None if kappa is None else kappa.low
    return [
        Check(name="labels", required=requirements.min_labels, measured=record.labels,
              ok=record.labels >= requirements.min_labels),
        Check(name="weighted_kappa_low" if mean_judge else "kappa_low", required=requirements.min_kappa_low,
              measured=low, ok=low is not None and low >= requirements.min_kappa_low),
        Check(name="confidence", required=requirements.confidence, measured=record.confidence,
              ok=record.confidence >= requirements.confidence),
    ]  # fmt: skip


def validate_judge(run: StoredRun, labels: LabelSet, requirements: JudgeRequirements,
                   *, seed: int = 0) -> ValidationRecord:
    """Compare the run's judge verdicts with the human labels.

    Raises:
        LabelError: No labelled case is left to compare (all ties, or the judge
            scored none of them).
    """
    sample = labels.sample
    entry = judge_entry(run["manifest"], sample.criterion)
    threshold = judge_threshold(entry)
    judged = {r["case_id"]: r for r in run["judgments"]
              if r["criterion"] == sample.criterion and r["status"] == "observed"}  # fmt: skip
    by_case: dict[str, list[HumanLabel]] = defaultdict(list)
    for label in labels.labels:
        by_case[label.case_id].append(label)
    rows, ties = [], 0
    for case_id in sorted(by_case):
        agreed = consensus(by_case[case_id], threshold)
        if agreed is None:
            ties += 1
        elif case_id in judged:
            rows.append((case_id, agreed, judged[case_id], by_case[case_id]))
    if not rows:
        raise LabelError(f"no labelled case left to compare ({ties} ties between annotators)", path=labels.path)
    human_scores = [agreed[1] for _, agreed, _, _ in rows if agreed[1] is not None]
    scale: Literal["pass_fail", "score"] = "score" if len(human_scores) == len(rows) else "pass_fail"
    confidence = requirements.confidence
    weighted = None
    if scale == "score":
        # An observed judge row always holds its 1-5 score.
        weighted = _kappa([int(j["score"] or 0) for _, _, j, _ in rows], human_scores,
                          SCORES, "quadratic", confidence, seed)  # fmt: skip
    if threshold is None:  # a mean-score judge: verdicts are the scores themselves
        judge_v = [int(j["score"] or 0) for _, _, j, _ in rows]
        human_v = human_scores  # a mean-score criterion takes scores only: every case has one
        kappa = _kappa(judge_v, human_v, SCORES, None, confidence, seed)
        agree = [jv == hv for jv, hv in zip(judge_v, human_v)]
        tpr = fpr = Estimate(value=None, n=0)
        judge_rate = human_rate = None
    else:
        judge_p = [bool(j["passed"]) for _, _, j, _ in rows]
        human_p = [bool(a[0]) for _, a, _, _ in rows]
        kappa = _kappa([int(v) for v in judge_p], [int(v) for v in human_p], [0, 1], None, confidence, seed)
        agree = [jp == hp for jp, hp in zip(judge_p, human_p)]
        positives = [jp for jp, hp in zip(judge_p, human_p) if hp]
        negatives = [jp for jp, hp in zip(judge_p, human_p) if not hp]
        tpr = _rate(sum(positives), len(positives), confidence)
        fpr = _rate(sum(negatives), len(negatives), confidence)
        judge_rate, human_rate = sum(judge_p) / len(rows), sum(human_p) / len(rows)
    disagreements = [
        Disagreement(case_id=case_id, judge_score=j.get("score"), judge_passed=j.get("passed"),
                     human=(agreed[1] if agreed[1] is not None else ("pass" if agreed[0] else "fail")),
                     judge_reason=j.get("reason"),
                     note="; ".join(lab.note for lab in labs if lab.note) or None)
        for (case_id, agreed, j, labs), same in zip(rows, agree) if not same
    ][:MAX_DISAGREEMENTS]  # fmt: skip
    record = ValidationRecord(
        judge_id=entry.get("judge_id") or "", judge=entry.get("judge") or {}, criterion=sample.criterion, run_id=sample.run_id,
        sample_id=sample.sample_id, labels_file=Path(labels.path).name, labels_sha256=labels.sha256,
        scale=scale, labels=len(rows), annotators=len({lab.annotator for lab in labels.labels}), ties=ties,
        accuracy=_rate(sum(agree), len(agree), confidence), kappa=kappa, weighted_kappa=weighted,
        true_positive_rate=tpr, false_positive_rate=fpr, judge_pass_rate=judge_rate, human_pass_rate=human_rate,
        disagreements=disagreements, requirements=requirements, checks=[], passed=False, confidence=confidence,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )  # fmt: skip
    checks = check_requirements(record, requirements)
    return record.model_copy(update={"checks": checks, "passed": all(c.ok for c in checks)})
