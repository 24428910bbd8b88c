"""What the HTML report shows, gathered into one value before anything is rendered.

`ReportPage` holds a run's records and, where asked for, a diagnosis of it and a
comparison involving it; `case_views` turns its cases into the rows the page's
case browser pages through. The page itself is `oloproof.report.render_html`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from oloproof.records import (
    ComparisonRecord,
    DiagnosisRecord,
    StoredCase,
    StoredJudgment,
    StoredRetrieval,
)
from oloproof.report._facts import first_repeats, slice_values
from oloproof.report._funnel import Funnel

__all__ = ["JudgeStatus", "ReportPage", "TrendRow", "case_views", "question_text"]


@dataclass(frozen=True)
class JudgeStatus:
    """Whether an LLM judge criterion of the run is validated against human labels."""

    criterion: str
    """The judge's criterion."""
    status: str
    """``validated``, ``failed validation`` or ``not validated``."""
    detail: str = ""
    """What the validation measured, e.g. ``accuracy 92.0% on 50 labels``."""


@dataclass(frozen=True)
class TrendRow:
    """One run of a criterion's history across a project's runs."""

    run_id: str
    """The run."""
    created_at: str
    """When it ran."""
    version: str
    """The system's version."""
    index_version: str | None
    """The index's version."""
    observed: int
    """Observed cases of the criterion."""
    estimate: float | None
    """The run's estimate."""
    low: float | None
    """Its interval's lower bound."""
    high: float | None
    """Its interval's upper bound."""
    shown: str = ""
    """The estimate as the run's report prints it, e.g. ``69.2%``."""
    shown_interval: str = ""
    """The interval as the run's report prints it, e.g. ``[38.5%, 91.0%]``."""
    changed: bool = False
    """Whether the ``--by`` key changed from the previous run."""
    difference: float | None = None
    """Against the previous run, paired over shared cases, in points."""
    difference_low: float | None = None
    """The paired interval's lower bound, in points."""
    difference_high: float | None = None
    """The paired interval's upper bound, in points."""
    paired: int = 0
    """The cases the two runs share."""

    @property
    def distinguishable(self) -> bool | None:
        """Whether the paired interval excludes 0 (``None``: nothing paired)."""
        if self.difference_low is None or self.difference_high is None:
            return None
        return self.difference_low > 0 or self.difference_high < 0


@dataclass(frozen=True)
class ReportPage:
    """Everything one report shows."""

    report: Mapping[str, Any]
    """The run's report: its manifest with ``metrics`` (as ``oloproof show`` reads it)."""
    cases: Sequence[StoredCase]
    """Its ``cases`` rows."""
    judgments: Sequence[StoredJudgment]
    """Its ``judgments`` rows."""
    retrievals: Sequence[StoredRetrieval]
    """Its ``retrievals`` rows."""
    funnels: Sequence[Funnel]
    """One funnel per pass/fail criterion."""
    diagnosis: DiagnosisRecord | None = None
    """A diagnosis of the run."""
    comparison: ComparisonRecord | None = None
    """A comparison involving the run."""
    judges: Sequence[JudgeStatus] = ()
    """The run's LLM judges' validation status."""
    trend: Sequence[TrendRow] = ()
    """The criterion's history across the project's runs."""
    trend_criterion: str | None = None
    """The criterion of ``trend``."""
    slices: Sequence[str] = field(default_factory=list)
    """The slices the run's metrics are broken down by."""
    questions: Mapping[str, str] | None = None
    """Each case's input as the page shows it (`question_text`), by case id, made as the
    ``cases`` rows were read (they then hold no ``input``); ``None``: shown from ``cases``."""


def question_text(value: JsonValue) -> str:
    """A case's input or output as the page shows it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), str):
        return str(next(iter(value.values())))
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def case_views(page: ReportPage) -> dict[str, Any]:
    """The page's case browser data: ``cases``, one row per case in case-id order (what
    it asked, what was retrieved with positions, kept and dropped and why, the answer,
    every verdict with its reason), and ``texts``, each passage text once (a candidate's
    ``text`` is its index there: a passage retrieved for many cases is carried once)."""
    texts: dict[str, int] = {}

    def text_index(text: str | None) -> int | None:
        return None if text is None else texts.setdefault(text, len(texts))

    candidates: dict[str, list[StoredRetrieval]] = defaultdict(list)
    for candidate in page.retrievals:
        if not candidate.get("repeat"):  # each repeat's own retrieval shows the first's
            candidates[candidate["case_id"]].append(candidate)
    verdicts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in page.judgments:
        verdicts[row["case_id"]].append({
            "criterion": row["criterion"], "status": row["status"], "passed": row.get("passed"),
            "value": row.get("value"), "reason": row.get("reason"), "repeat": row.get("repeat") or 0,
        })  # fmt: skip
    labels = {case.case_id: case.label for case in page.diagnosis.cases} if page.diagnosis else {}
    slices = {name: slice_values(page.cases, name) for name in page.slices}
    first = first_repeats(page.cases)
    views = []
    for case_id in sorted(first):
        case = first[case_id]
        dropped = {entry["position"]: entry["reason"] for entry in case.get("dropped") or []}
        views.append({
            "id": case_id,
            "status": case.get("status"),
            "error": case.get("error"),
            "question": page.questions[case_id] if page.questions is not None else question_text(case.get("input")),
            "answer": None if case.get("output") is None else question_text(case.get("output")),
            "label": labels.get(case_id),
            "slices": {name: values[case_id] for name, values in slices.items() if case_id in values},
            "candidates": [
                {"position": c["position"], "doc_id": c["doc_id"], "text": text_index(c.get("text")),
                 "in_context": bool(c.get("in_context")), "dropped": dropped.get(c["position"])}
                for c in sorted(candidates[case_id], key=lambda c: c["position"])
            ],
            "verdicts": verdicts[case_id],
        })  # fmt: skip
    return {"cases": views, "texts": list(texts)}
