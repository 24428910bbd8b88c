"""Judge metrics that carry the judge's own error: prediction-powered inference
over a run's judgments and a uniform sample of human labels."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from oloproof import stats
from oloproof.judging._records import HumanLabel, SampleRecord
from oloproof.judging._sample import judge_threshold
from oloproof.judging._validate import consensus
from oloproof.records import EstimateLine, JudgeEstimate, StoredJudgment, StoredManifest

__all__ = ["judge_estimates"]


def _human_value(labels: list[HumanLabel], threshold: float | None) -> float | None:
    agreed = consensus(labels, threshold)
    if agreed is None:
        return None
    passed, score = agreed
    if threshold is None:
        return None if score is None else (score - 1) / 4
    return 1.0 if passed else 0.0


def _estimate(criterion: str, sample: SampleRecord, labels: list[HumanLabel], judged: dict[str, float],
              threshold: float | None, confidence: float) -> JudgeEstimate:
    by_case: dict[str, list[HumanLabel]] = defaultdict(list)
    for label in labels:
        by_case[label.case_id].append(label)
    values = {case_id: _human_value(labs, threshold) for case_id, labs in by_case.items()}
    human = {case_id: value for case_id, value in values.items() if value is not None}
    labelled = sorted(c for c in human if c in judged)
    unlabelled = sorted(set(judged) - set(labelled))
    result = stats.ppi_mean_interval(
        [human[c] for c in labelled], [judged[c] for c in labelled], [judged[c] for c in unlabelled],
        confidence=confidence,
    )  # fmt: skip
    kind = "proportion" if threshold is not None else "mean"
    pairs = [(human[c], judged[c]) for c in labelled]
    passes = sum(1 for h, _ in pairs if h == 1.0)
    return {
        "criterion": criterion, "kind": kind, "sample_id": sample.sample_id, "confidence": confidence,
        "labelled": len(labelled), "judged": len(judged), "drawn": sample.size,
        "uniform": sample.stratify is None, "lam": result.lam, "fallback": result.fallback,
        "method": result.method, "disagreements": sum(1 for h, j in pairs if h != j),
        "human_passes": passes, "human_failures": len(pairs) - passes,
        "min_disagreements": stats.DEFAULT_MIN_DISAGREEMENTS, "min_labels": stats.DEFAULT_MIN_LABELS,
        "rows": [
            _bounds("judge only", len(judged), result.judge_only_estimate, result.judge_only),
            _bounds("human only", len(labelled), result.human_only_estimate, result.human_only),
            _bounds("ppi", len(labelled), result.estimate, result.interval),
        ],
    }  # fmt: skip


def _bounds(basis: str, n: int, estimate: float, interval: stats.Interval) -> EstimateLine:
    return {"basis": basis, "n": n, "estimate": estimate, "low": interval.low, "high": interval.high,
            "method": interval.method}


def judge_estimates(manifest: StoredManifest, judgments: Sequence[StoredJudgment],
                    labelled: list[tuple[SampleRecord, list[HumanLabel]]]) -> list[JudgeEstimate]:
    """One entry per judge criterion of the run with a uniformly drawn, labelled sample.

    Where several samples of one criterion are labelled, the one with the most labels
    counts. Stratified samples and labels given without a draw are left out: PPI
    needs a uniform one.

    Args:
        manifest: The run's manifest.
        judgments: The run's judgment rows.
        labelled: The run's samples that have human labels, with their labels.
    """
    entries = {e["criterion"]: e for e in manifest.get("evaluators", []) if e.get("llm_judge") and e.get("judge")}
    best: dict[str, tuple[SampleRecord, list[HumanLabel]]] = {}
    for sample, labels in sorted(labelled, key=lambda pair: pair[0].sample_id):
        if sample.kind != "drawn" or sample.stratify is not None or sample.criterion not in entries:
            continue
        if sample.criterion not in best or len(labels) > len(best[sample.criterion][1]):
            best[sample.criterion] = (sample, labels)
    out = []
    for criterion, (sample, labels) in sorted(best.items()):
        judged = {r["case_id"]: float(value) for r in judgments
                  if r["criterion"] == criterion and r["status"] == "observed" and (value := r["value"]) is not None}
        if judged:
            out.append(_estimate(criterion, sample, labels, judged, judge_threshold(entries[criterion]),
                                 manifest.get("confidence", 0.95)))  # fmt: skip
    return out
