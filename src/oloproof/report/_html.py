"""The self-contained HTML report: one file, no network, every text escaped.

The page is a Jinja2 template with autoescaping; its stylesheet and script are the
package's own files, inlined. The cases travel as one JSON document, gzipped and in
base64 (no character of it can end the ``<script type="application/octet-stream">``
element holding it; a passage retrieved for many cases is stored once), which the
page's script inflates with the browser's own ``DecompressionStream`` and pages
through, building 50 rows at a time with ``textContent`` only. A
Content-Security-Policy allows no request at all and no script but the page's own
(by its hash): whatever a case or an answer contains stays text.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files
from typing import Any

import jinja2
from markupsafe import Markup

from oloproof.diagnosis import render_label_lines
from oloproof.diagnosis._render import intervention_name
from oloproof.records import ComparisonRecord, DiagnosisRecord, MetricSummary
from oloproof.report._funnel import Funnel
from oloproof.report._page import ReportPage, TrendRow, case_views
from oloproof.report._render import basis_text, estimate_text, flaky_lines, interval_text, judges_line

__all__ = ["pack_cases", "read_report_cases", "render_html"]

_FUNNEL_WIDTH = 460.0
_BAR = 220.0
_DIFF = 260.0


@cache
def _asset(name: str) -> str:
    return (files("oloproof.report") / "templates" / name).read_text(encoding="utf-8")


@cache
def _template() -> jinja2.Template:
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                                     lstrip_blocks=True)  # fmt: skip
    return environment.from_string(_asset("report.html.j2"))


def pack_cases(value: object) -> str:
    """The case data as the page carries it: JSON, gzipped, in base64."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")


def read_report_cases(html: str) -> dict[str, Any]:
    """The case data of a report as its page reads it (``cases`` and the ``texts`` they share).

    Raises:
        ValueError: The page holds no case data.
    """
    found = re.search(r'<script type="application/octet-stream" id="oloproof-cases">([A-Za-z0-9+/=]*)</script>', html)
    if found is None:
        raise ValueError("not an Oloproof report: no case data")
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(found.group(1))).decode("utf-8"))
    return data


def _funnel_view(funnel: Funnel) -> dict[str, Any]:
    total = max(funnel.steps[0].count, 1)
    bars = [{"y": 4 + 30 * i, "width": round(_FUNNEL_WIDTH * step.count / total, 1), "count": step.count,
             "title": step.title, "opacity": round(1.0 - 0.12 * i, 2), "lost": len(step.lost),
             "losses": ", ".join(f"{label} {n}" for label, n in sorted(step.labels.items()))}
            for i, step in enumerate(funnel.steps)]  # fmt: skip
    return {"criterion": funnel.criterion, "counts": [str(c) for c in funnel.counts], "bars": bars,
            "height": 30 * len(bars) + 8, "steps": funnel.steps[1:], "passed_elsewhere": funnel.passed_elsewhere}


def _metric_view(row: MetricSummary) -> dict[str, Any]:
    bar = None
    if row["estimate"] is not None and row["low"] is not None and row["high"] is not None:
        low, high = max(0.0, float(row["low"])), min(1.0, float(row["high"]))
        bar = {"low": round(low * _BAR, 1), "width": round(max(high - low, 0.0) * _BAR, 1),
               "point": round(min(max(float(row["estimate"]), 0.0), 1.0) * _BAR - 1, 1)}  # fmt: skip
    label = row["slice"] and f"{row['slice']} = {row['slice_value']}"
    return {"criterion": row["criterion"], "estimate": estimate_text(row), "interval": interval_text(row),
            "basis": basis_text(row), "bar": bar, "slice": label, "scored": row["scored"]}  # fmt: skip


def _comparison_view(record: ComparisonRecord) -> dict[str, Any]:
    margins: dict[str, list[float]] = {}
    for decision in record["decisions"]:
        sign = [-1.0] if decision["kind"] == "non-inferiority" else [1.0] if decision["kind"] == "superiority" \
            else [-1.0, 1.0]
        margins.setdefault(decision["criterion"], []).extend(s * float(decision["margin"]) for s in sign)
    lines = list(record["metrics"])
    extent = max([abs(float(v)) for m in lines for v in (m["low"], m["high"]) if v is not None]
                 + [abs(v) for vs in margins.values() for v in vs] + [10.0])  # fmt: skip
    axis = float(min(100.0, extent * 1.1))

    def x(points: float) -> float:
        return round((max(-axis, min(axis, points)) + axis) / (2 * axis) * _DIFF, 1)

    rows = []
    for line in lines:
        bar = None
        if line["difference"] is not None and line["low"] is not None and line["high"] is not None:
            bar = {"low": x(line["low"]), "width": round(x(line["high"]) - x(line["low"]), 1),
                   "point": x(line["difference"]) - 1, "zero": x(0.0),
                   "margins": [x(m) for m in margins.get(line["criterion"], [])]}  # fmt: skip
        difference = line["difference"]
        rows.append({"criterion": line["criterion"],
                     "difference": "n/a" if difference is None else f"{difference:+.1f} points",
                     "interval": "" if line["low"] is None else f"[{line['low']:+.1f}, {line['high']:+.1f}]",
                     "bar": bar, "counts": f"{line['paired']} paired · {line['missing']} missing"})  # fmt: skip
    return {"id": record["comparison_id"], "rows": rows, "axis": f"{axis:.0f}",
            "head": f"{record['candidate_run_id']} against {record['baseline_run_id']} · "
                    f"{record['paired_cases']} paired cases",
            "decisions": record.get("decisions") or [], "gate": record.get("gate")}  # fmt: skip


def _diagnosis_view(record: DiagnosisRecord) -> dict[str, Any]:
    lines = [f"Recovered under {intervention_name(record)}: {record.recovered} of {len(record.cases)}",
             *render_label_lines(record.cases)]  # fmt: skip
    if record.implicated is not None:
        lines.append(f"Implicated: {record.implicated.factor}, in {record.implicated.count} of "
                     f"{record.implicated.among}. A hypothesis to test, not an established cause.")
    return {"id": record.diagnosis_id, "intervention": intervention_name(record), "criterion": record.criterion,
            "lines": lines}  # fmt: skip


def _trend_view(rows: Sequence[TrendRow]) -> list[dict[str, Any]]:
    views = []
    for row in rows:
        against = ""
        if row.difference is not None:
            told = "distinguishable" if row.distinguishable else "not distinguishable"
            against = (f"{row.difference:+.1f} points [{row.difference_low:+.1f}, {row.difference_high:+.1f}] "
                       f"over {row.paired} shared cases · {told}")
        views.append({"run_id": row.run_id, "created_at": row.created_at, "version": row.version,
                      "index_version": row.index_version or "none", "changed": row.changed,
                      "estimate": row.shown, "interval": row.shown_interval,
                      "against": against})  # fmt: skip
    return views


def _run_view(report: Mapping[str, Any]) -> dict[str, Any]:
    system = report.get("system") or {}
    return {"run_id": report["run_id"], "system_name": system.get("name") or report.get("system_name"),
            "system_version": system.get("version"), "index_version": system.get("index_version"),
            "cases": report.get("case_count"), "repeats": report.get("repeats") or 1,
            "created_at": report.get("created_at"), "dataset": report.get("dataset"),
            "confidence": f"{float(report.get('confidence') or 0.95):.0%}", "child": _child_text(report)}  # fmt: skip


def _child_text(report: Mapping[str, Any]) -> str | None:
    """What a child run was run for, e.g. ``a re-execution (gold context) of run_… for a diagnosis``."""
    kind, parent = report.get("kind") or "run", report.get("parent") or {}
    if kind == "run":
        return None
    what = {"diagnosis_child": "a diagnosis", "sweep_child": "a sweep"}.get(kind, kind)
    role = f" ({parent['role']})" if parent.get("role") else ""
    return f"A re-execution{role} of run {parent.get('run_id', '?')} for {what}: not a run of its own."


def render_html(page: ReportPage) -> str:
    """The report of ``page`` as one self-contained HTML document."""
    metrics: list[MetricSummary] = list(page.report.get("metrics") or [])
    overall = [row for row in metrics if row["slice"] is None]
    script = _asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return _template().render(
        run=_run_view(page.report),
        funnels=[_funnel_view(funnel) for funnel in page.funnels],
        metrics=[_metric_view(row) for row in overall],
        flaky=flaky_lines(overall),
        slices=[_metric_view(row) for row in metrics if row["slice"] is not None],
        min_support=page.report.get("min_slice_support"),
        judge_lines=judges_line(page.report.get("judges") or []),
        judges=page.judges,
        diagnosis=_diagnosis_view(page.diagnosis) if page.diagnosis is not None else None,
        comparison=_comparison_view(page.comparison) if page.comparison is not None else None,
        trend=_trend_view(page.trend), trend_criterion=page.trend_criterion,
        cases_data=pack_cases(case_views(page)),
        css=Markup(_asset("report.css")),  # the package's own stylesheet
        script=Markup(script),  # the package's own script
        script_hash=f"sha256-{digest}",
    )
