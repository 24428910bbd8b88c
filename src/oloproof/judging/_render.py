"""Plain-text rendering of judge validations."""

from __future__ import annotations

from oloproof.judging._identity import judge_summary
from oloproof.judging._labels import LabelSet
from oloproof.judging._records import Estimate, ValidationRecord

__all__ = ["render_validation", "render_validations"]

_CHECK_NAMES = {"labels": "labelled cases", "kappa_low": "κ lower bound",
                "weighted_kappa_low": "weighted κ lower bound", "confidence": "interval confidence"}


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _rate(name: str, estimate: Estimate) -> str:
    if estimate.value is None:
        return f"  {name:<22} —  (no such labelled case)"
    return (f"  {name:<22} {_percent(estimate.value):>6}  [{_percent(estimate.low)}, {_percent(estimate.high)}]"
            f"  of {estimate.n}")


def _kappa(name: str, estimate: Estimate | None) -> list[str]:
    if estimate is None:
        return []
    if estimate.value is None:
        return [f"  {name:<22} undefined (both the judge and the humans gave one verdict throughout)"]
    if estimate.low is None or estimate.high is None:
        return [f"  {name:<22} {estimate.value:>6.3f}  {estimate.method}"]
    return [f"  {name:<22} {estimate.value:>6.3f}  [{estimate.low:.3f}, {estimate.high:.3f}]  {estimate.method}"]


def _measured(name: str, value: float | None) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3f}" if "kappa" in name or name == "confidence" else f"{value:g}"


def render_validation(record: ValidationRecord, labels: LabelSet | None = None, *, policy: str | None = None) -> list[str]:
    """The report of one validation, as ``oloproof judge validate`` prints it."""
    confidence = round(record.confidence * 100)
    annotators = f"{record.annotators} annotator{'s' if record.annotators != 1 else ''}"
    unlabelled = f", {labels.unlabelled} lines not labelled" if labels is not None and labels.unlabelled else ""
    lines = [
        f"Judge {judge_summary(record.judge)} (judge {record.judge_id[:12]})",
        (f"Labels: {record.labels} cases of sample {record.sample_id} of run {record.run_id} on {record.criterion}"
         f" ({record.scale.replace('_', '/')}; {annotators}, {record.ties} ties{unlabelled})"),
        f"Agreement ({confidence}% intervals)",
        _rate("accuracy", record.accuracy),
        *_kappa("Cohen's κ", record.kappa),
        *_kappa("weighted κ (1-5)", record.weighted_kappa),
        _rate("true-positive rate", record.true_positive_rate),
        _rate("false-positive rate", record.false_positive_rate),
    ]
    if record.judge_pass_rate is not None:
        lines.append(f"  pass rate: judge {_percent(record.judge_pass_rate)} · humans {_percent(record.human_pass_rate)}")
    lines.append(f"Requirements ({policy + ' judges:' if policy else 'defaults'})")
    for check in record.checks:
        name = _CHECK_NAMES.get(check.name, check.name)
        lines.append(f"  {name} ≥ {_measured(check.name, check.required)}: {_measured(check.name, check.measured)}"
                     f"  {'ok' if check.ok else 'NOT MET'}")
    if record.passed:
        lines.append(f"Validation: PASS — rules over {record.criterion} may gate while the judge stays this judge")
    else:
        lines.append(f"Validation: FAIL (exit 3) — rules over {record.criterion} stay INSUFFICIENT_EVIDENCE "
                     "judge_not_validated")
    if record.disagreements:
        lines.append(f"Disagreements ({len(record.disagreements)} shown)")
        for case in record.disagreements:
            verdict = "pass" if case.judge_passed else "fail"
            score = "" if case.judge_score is None else f"{case.judge_score:g} "
            reason = f"  judge: {case.judge_reason}" if case.judge_reason else ""
            note = f"  note: {case.note}" if case.note else ""
            lines.append(f"  {case.case_id}  judge {score}({verdict})  humans {case.human}{reason}{note}")
    lines.append(f"Recorded: validations/{record.judge_id}.json")
    return lines


def render_validations(records: list[ValidationRecord]) -> list[str]:
    """One line per judge, as ``oloproof judge validations`` prints them."""
    if not records:
        return ["No validation records (oloproof judge validate writes them)."]
    lines = []
    for record in sorted(records, key=lambda r: (r.criterion, r.created_at)):
        kappa = record.weighted_kappa if record.judge.get("threshold") is None else record.kappa
        if kappa is None or kappa.value is None:
            figure = "κ undefined"
        elif kappa.low is None or kappa.high is None:
            figure = f"κ {kappa.value:.3f} (no interval)"
        else:
            figure = f"κ {kappa.value:.3f} [{kappa.low:.3f}, {kappa.high:.3f}]"
        lines.append(
            f"{record.judge_id[:12]}  {'PASS' if record.passed else 'FAIL'}  {record.criterion}  "
            f"{judge_summary(record.judge)}  {record.labels} labels  {figure}  "
            f"accuracy {_percent(record.accuracy.value)}  run {record.run_id}  {record.created_at}"
        )
    return lines
