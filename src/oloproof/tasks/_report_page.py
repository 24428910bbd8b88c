"""Reading what an HTML report shows from the store, checked before anything is written."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, cast

from oloproof._exceptions import NotFoundError, UsageError
from oloproof.records import ComparisonRecord, DiagnosisRecord, StoredCase, StoredJudgment, StoredRetrieval
from oloproof.report import JudgeStatus, ReportPage, TrendRow, failure_funnel, question_text, render_html
from oloproof.store import ResultsStore, diagnosis_manifest, run_manifest, run_table
from oloproof.tasks._compare import find_comparison

__all__ = ["PAGE_JUDGMENT_COLUMNS", "build_report_page", "report_html"]

PAGE_JUDGMENT_COLUMNS = ("case_id", "repeat", "criterion", "status", "passed", "value", "reason")
"""What the page reads of a judgment row (its verdicts, the funnels): a row's call
accounting, detail and raw reply are most of its bytes and never shown."""


def _read_run(store: ResultsStore, run_id: str) -> dict[str, Any]:
    if not store.exists(run_manifest(run_id)):
        raise NotFoundError(f"no complete run {run_id!r} in the store", path=store.url)
    return {**store.read_json(run_manifest(run_id)), "metrics": store.read_table(run_table(run_id, "metrics"))}


def _diagnosis(store: ResultsStore, run_id: str, diagnosis_id: str | None) -> DiagnosisRecord | None:
    if diagnosis_id is None:
        return None
    hexid = diagnosis_id.removeprefix("sha256:")
    if not store.exists(diagnosis_manifest(hexid)):
        raise NotFoundError(f"no diagnosis {diagnosis_id} in the store", path=store.url, field="--diagnosis")
    record = DiagnosisRecord.model_validate(store.read_json(diagnosis_manifest(hexid)))
    if record.parent_run_id != run_id:
        raise UsageError(f"diagnosis {diagnosis_id} is of run {record.parent_run_id}, not {run_id}",
                         field="--diagnosis")  # fmt: skip
    return record


def _comparison(store: ResultsStore, run_id: str, comparison_id: str | None) -> ComparisonRecord | None:
    if comparison_id is None:
        return None
    record = find_comparison.fn(store, comparison_id)
    if record is None:
        raise NotFoundError(f"no comparison {comparison_id} in the store", path=store.url, field="--comparison")
    if run_id not in (record.get("candidate_run_id"), record.get("baseline_run_id")):
        raise UsageError(f"comparison {comparison_id} is of {record.get('candidate_run_id')} against "
                         f"{record.get('baseline_run_id')}: it does not involve run {run_id}",
                         field="--comparison")  # fmt: skip
    return record


def _judge_statuses(store: ResultsStore, manifest: dict[str, Any]) -> list[JudgeStatus]:
    """Each LLM judge criterion of the run, and whether that very judge was validated."""
    from oloproof.judging import read_validations

    judges = [e for e in manifest.get("evaluators", []) if e.get("llm_judge")]
    if not judges:
        return []
    validations = {(v.criterion, v.judge_id): v for v in read_validations(store)}
    statuses = []
    for entry in judges:
        found = validations.get((entry["criterion"], entry.get("judge_id")))
        if found is None:
            statuses.append(JudgeStatus(entry["criterion"], "not validated", "no human labels of this judge"))
        else:
            accuracy = "n/a" if found.accuracy.value is None else f"{found.accuracy.value:.1%}"
            detail = f"accuracy {accuracy} on {found.labels} labels (run {found.run_id})"
            statuses.append(JudgeStatus(entry["criterion"], "validated" if found.passed else "failed validation",
                                        detail))  # fmt: skip
    return statuses


def _pass_fail(judgments: list[StoredJudgment]) -> list[str]:
    """The criteria whose observed verdicts are pass/fail, in order of first appearance."""
    seen: dict[str, bool] = {}
    for row in judgments:
        if row["status"] == "observed":
            seen[row["criterion"]] = seen.get(row["criterion"], True) and row.get("passed") is not None
    return [criterion for criterion, pass_fail in seen.items() if pass_fail]


def _cases(store: ResultsStore, run_id: str) -> tuple[list[StoredCase], dict[str, str]]:
    """The run's ``cases`` rows less their ``input``, and each case's input as the page
    shows it: decoded a row at a time, so a run of recorded rows (each row its case's
    whole input) never holds every row's decoded value at once."""
    rows = store.read_table(run_table(run_id, "cases"), as_text=("input",))
    questions: dict[str, str] = {}
    for row in rows:
        text = row.pop("input", None)
        if row["case_id"] not in questions:  # a case's repeats share its input
            questions[row["case_id"]] = question_text(None if text is None else json.loads(text))
    return cast("list[StoredCase]", rows), questions


def build_report_page(store: ResultsStore, run_id: str, *, diagnosis_id: str | None = None,
                      comparison_id: str | None = None, trend: list[TrendRow] | None = None,
                      trend_criterion: str | None = None) -> ReportPage:  # fmt: skip
    """Everything a run's report shows.

    Raises:
        NotFoundError: No such run, diagnosis or comparison.
        UsageError: The diagnosis is of another run, or the comparison does not involve it.
    """
    report = _read_run(store, run_id)
    diagnosis = _diagnosis(store, run_id, diagnosis_id)
    comparison = _comparison(store, run_id, comparison_id)
    cases, questions = _cases(store, run_id)
    judgments = cast("list[StoredJudgment]", store.read_table(run_table(run_id, "judgments"), PAGE_JUDGMENT_COLUMNS))
    retrievals = cast("list[StoredRetrieval]", store.read_table(run_table(run_id, "retrievals")))
    system = report.get("system") or {}
    labels = {case.case_id: case.label for case in diagnosis.cases} if diagnosis is not None else {}
    criteria = _pass_fail(judgments)
    thresholds: dict[str, float | None] = {}
    if diagnosis is not None:  # the diagnosed criterion's funnel first, a score at the diagnosis's threshold
        if diagnosis.criterion in criteria:
            criteria.remove(diagnosis.criterion)
        criteria.insert(0, diagnosis.criterion)
        thresholds[diagnosis.criterion] = diagnosis.threshold
    # A re-execution from the gold context did not retrieve what it answered from: no evidence funnel.
    gold = (report.get("variant") or {}).get("context_source") == "gold"
    # Each funnel reads its own criterion's rows: a composite evaluator reports many criteria.
    by_criterion: dict[str, list[StoredJudgment]] = defaultdict(list)
    for row in [] if gold else judgments:
        by_criterion[row["criterion"]].append(row)
    funnels = [] if gold else [
        failure_funnel(cases, by_criterion[criterion], criterion, depth=system.get("depth"), top_k=system.get("top_k"),
                       threshold=thresholds.get(criterion),
                       labels=labels if diagnosis and criterion == diagnosis.criterion else None)
        for criterion in criteria]  # fmt: skip
    return ReportPage(report=report, cases=cases, judgments=judgments, retrievals=retrievals, funnels=funnels,
                      diagnosis=diagnosis, comparison=comparison, judges=_judge_statuses(store, report),
                      trend=trend or (), trend_criterion=trend_criterion, slices=list(report.get("slices") or []),
                      questions=questions)


def report_html(store: ResultsStore, run_id: str, **options: Any) -> str:
    """The run's HTML report (see `build_report_page` for ``options`` and what it raises)."""
    return render_html(build_report_page(store, run_id, **options))
