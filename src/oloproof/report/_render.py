"""Plain-text rendering of run reports: the metrics table, the cache and judge lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from oloproof import stats
from oloproof.records import EstimateLine, JudgeEstimate, JudgeUsage, MetricLine, MetricSummary, RunReport
from oloproof.report._judge_errors import Judges, judge_error_lines, judge_usages

__all__ = [
    "basis_text",
    "cache_lines",
    "estimate_text",
    "interval_text",
    "judges_line",
    "missing_text",
    "render_judge_estimates",
    "render_run",
    "render_slices",
    "render_table",
]


def estimate_text(row: MetricSummary | EstimateLine) -> str:
    """``69.2%`` for proportions, ``0.866`` for means, ``—`` when unobserved."""
    if row["estimate"] is None:
        return "—"
    if row["kind"] == "proportion":
        return f"{row['estimate'] * 100:.1f}%"
    return f"{row['estimate']:.3f}"


def interval_text(row: MetricSummary | EstimateLine) -> str:
    """The interval rounded outward: ``[38.5%, 91.0%]`` or ``[0.506, 0.990]``."""
    if row["low"] is None or row["high"] is None:
        return "—"
    interval = stats.Interval(
        low=row["low"], high=row["high"], confidence=row["confidence"], method=row["method"] or ""
    )
    if row["kind"] == "proportion":
        return stats.format_percent_interval(interval)
    return stats.format_score_interval(interval)


def missing_text(row: MetricSummary | MetricLine) -> str:
    """``2 missing``, or ``2 missing (1 judge error)`` when judges failed on some."""
    errors = row.get("judge_errors") or 0
    if not errors:
        return f"{row['missing']} missing"
    return f"{row['missing']} missing ({errors} judge error{'s' if errors != 1 else ''})"


def basis_text(row: MetricSummary) -> str:
    """``9 / 13 observed · 0 missing · 0 excluded`` or ``mean of 13 observed · …``; with
    repeats, ``13 cases × 5 repeats (65 samples) · …``: the cases are the interval's unit."""
    counts = f" · {missing_text(row)} · {row['excluded']} excluded"
    if row.get("samples") is not None:
        cases = f"{row['observed']} case{'s' if row['observed'] != 1 else ''}"
        return f"{cases} ({row.get('samples')} samples){counts}"
    if row["kind"] == "proportion" and row["successes"] is not None:
        return f"{row['successes']} / {row['observed']} observed{counts}"
    if row["kind"] == "proportion":
        return f"{row['observed']} observed{counts}"
    return f"mean of {row['observed']} observed{counts}"


def judges_line(judges: Judges) -> list[str]:
    """``Judges: 65 judgments · 68 requests · 0 cached · 41,230 tokens · $0.12 · 3 retries · 0 errors``
    over every provider and model; nothing when the run had no LLM judge.

    Judgments are what the run judged (errors included), requests what it sent for
    them (retries and re-asks included). A manifest of an earlier version, which
    counted only ``calls``, shows them as judgments and each with its retries as requests.
    """
    usages = judge_usages(judges)
    if not usages:
        return []

    def counted(count: int, one: str, many: str) -> str:
        return f"{count:,} {one if count == 1 else many}"

    def judged(entry: JudgeUsage) -> int:
        return entry.calls if entry.judgments is None else entry.judgments

    def sent(entry: JudgeUsage) -> int:
        return entry.calls + entry.retries if entry.requests is None else entry.requests

    judgments = sum(judged(entry) for entry in usages)
    requests = sum(sent(entry) for entry in usages)
    costs = [entry.cost_usd for entry in usages if entry.cost_usd is not None]
    parts = [
        counted(judgments, "judgment", "judgments"),
        counted(requests, "request", "requests"),
        f"{sum(entry.cached for entry in usages):,} cached",
        counted(sum(entry.input_tokens + entry.output_tokens for entry in usages), "token", "tokens"),
        *([f"${sum(costs):,.2f}"] if costs else []),
        counted(sum(entry.retries for entry in usages), "retry", "retries"),
        counted(sum(entry.errors for entry in usages), "error", "errors"),
    ]
    return ["Judges: " + " · ".join(parts)]


def render_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A box-drawn table, each column as wide as its widest cell."""
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows)]

    def line(cells: list[str]) -> str:
        return "│ " + " │ ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " │"

    def rule(left: str, middle: str, right: str) -> str:
        return left + middle.join("─" * (width + 2) for width in widths) + right

    return [
        rule("┌", "┬", "┐"),
        line(headers),
        rule("├", "┼", "┤"),
        *(line(row) for row in rows),
        rule("└", "┴", "┘"),
    ]


def cache_lines(cache: dict[str, dict[str, int]]) -> list[str]:
    """The two cache lines: ``Cache:`` per cache, ``Stages:`` per stage that ran.

    The stage counts are of the cases the execution cache did not serve: when it
    served every case no stage ran, and the line says so instead of counting zeros.
    """

    def pair(name: str) -> str:
        return f"{cache[name]['hit']} hit/{cache[name]['miss']} miss"

    served = cache["execution"]["hit"]
    ran = sum(cache[stage]["hit"] + cache[stage]["miss"] for stage in ("retrieve", "generate"))
    first = "tools" if cache.get("tools") is not None else "retrieve"  # an agent's tool calls are its retrieval
    if served and not ran and not cache["execution"]["miss"]:
        cases = "the one case was" if served == 1 else f"all {served:,} cases were"
        stages = f"Stages: none ran: {cases} served from the execution cache"
    else:
        stages = f"Stages: {first} {pair(first)}; generate {pair('generate')}"
        if served:
            stages += f" ({served:,} case{'s' if served != 1 else ''} served from the execution cache)"
    return [f"Cache: execution {pair('execution')}; judgment {pair('judgment')}", stages]


def recorded_lines(report: RunReport) -> list[str]:
    """What a run of recorded data evaluated (nothing was executed), and how rows were named."""
    lines = [f"Recorded data: {report['case_count']} rows of {report['dataset']} (evaluated as recorded)"]
    unnamed = report.get("rows_named_by_line") or 0
    if unnamed:
        lines.append(f"ids: {unnamed} rows without an id are named by their line (line-<n>); "
                     "give rows an id to keep them paired when lines move")  # fmt: skip
    return lines


def render_slices(metrics: list[MetricSummary], min_support: int) -> list[str]:
    """Per-slice rows (exploratory: many comparisons, no multiplicity control)."""
    rows = [row for row in metrics if row["slice"] is not None]
    if not rows:
        return []
    lines = [f"Slices (exploratory; values with fewer than {min_support} observed are not scored)"]
    table = []
    for row in rows:
        if row["scored"]:
            table.append([
                f"{row['slice']}={row['slice_value']}", row["criterion"],
                estimate_text(row), interval_text(row), basis_text(row),
            ])
        else:
            table.append([
                f"{row['slice']}={row['slice_value']}", row["criterion"], "—", "—",
                f"too small: {row['observed']} observed",
            ])
    confidence = round(rows[0]["confidence"] * 100)
    lines += render_table(["Slice", "Metric", "Estimate", f"{confidence}% interval", "Basis"], table)
    return lines


JUDGE_DISAGREEMENT_LIMIT = 0.10
"""A judge whose own repeats disagree on more than this share of samples is named as unstable."""


def flaky_lines(overall: Sequence[MetricSummary]) -> list[str]:
    """With repeats: ``Flaky: 3 of 13 cases disagree across 5 repeats (answer_correct)`` per
    criterion, and each judge whose own repeats disagree, named when past `JUDGE_DISAGREEMENT_LIMIT`."""
    lines = []
    for row in overall:
        if row.get("flaky") is None or not row["observed"]:
            continue
        repeats = row.get("repeats") or 1
        across = f"{repeats} repeats" if repeats > 1 else "the judge's repeats"
        lines.append(f"Flaky: {row['flaky']} of {row['observed']} cases disagree across {across} "
                     f"({row['criterion']})")  # fmt: skip
        rate = row.get("judge_disagreement")
        if rate is not None:
            verdict = (f": more than {JUDGE_DISAGREEMENT_LIMIT:.0%}, its verdicts are not stable"
                       if rate > JUDGE_DISAGREEMENT_LIMIT else "")  # fmt: skip
            lines.append(f"Judge self-disagreement ({row['criterion']}): its repeats disagree on "
                         f"{rate:.1%} of samples{verdict}")  # fmt: skip
    return lines


def render_run(report: RunReport | Mapping[str, Any]) -> list[str]:
    """The full text report of a run (flows hand it over as the manifest's JSON with metrics)."""
    return _render_run(cast(RunReport, report))


def _render_run(report: RunReport) -> list[str]:
    overall = [row for row in report["metrics"] if row["slice"] is None]
    confidence = round(report["confidence"] * 100)
    lines = [f"Run {report['run_id']}"]
    lines += render_table(
        ["Metric", "Estimate", f"{confidence}% interval", "Basis"],
        [[row["criterion"], estimate_text(row), interval_text(row), basis_text(row)] for row in overall],
    )
    lines += flaky_lines(overall)
    if report.get("system", {}).get("kind") == "recorded":
        lines += recorded_lines(report)
    else:
        lines += cache_lines(report["cache"])
    lines += judges_line(report.get("judges") or [])
    lines += judge_error_lines(report.get("judges") or [])
    if report.get("judge_estimates"):
        lines += render_judge_estimates(report["judge_estimates"])
    lines += render_slices(report["metrics"], report["min_slice_support"])
    return lines


def render_judge_estimates(estimates: list[JudgeEstimate]) -> list[str]:
    """The report's rows of judge metrics beside their human-label correction."""
    if not estimates:
        return []
    confidence = round(estimates[0]["confidence"] * 100)
    lines = [("Judge metrics with human labels (PPI++: the judge's mean corrected by its error on a uniform "
              "labelled sample)")]
    table: list[list[str]] = []
    for entry in estimates:
        criterion, labelled, judged = entry["criterion"], entry["labelled"], entry["judged"]
        names = {"judge only": f"{criterion} (judge only)", "human only": f"{criterion} (humans only)",
                 "ppi": f"{criterion} (PPI, {labelled:,} labels of {judged:,})"}
        for row in entry["rows"]:
            if row["basis"] == "ppi":
                basis = f"λ = {entry['lam']:.2f}" if entry["fallback"] is None else _fallback_text(entry)
            else:
                basis = {"judge only": f"{judged:,} judged", "human only": f"{labelled:,} labelled"}[row["basis"]]
            shown: EstimateLine = {**row, "kind": entry["kind"], "confidence": entry["confidence"]}
            table.append([names[row["basis"]], estimate_text(shown), interval_text(shown), basis])
    lines += render_table(["Metric", "Estimate", f"{confidence}% interval", "Basis"], table)
    return lines


def _fallback_text(entry: JudgeEstimate) -> str:
    """Why the PPI row is the human-only interval, with the counts that decided it."""
    need = entry.get("min_disagreements")
    reasons = {
        "too_few_disagreements": f"{entry.get('disagreements')} judge-human disagreements, PPI++ needs {need}",
        "too_few_human_failures": f"{entry.get('human_failures')} failures labelled, PPI++ needs {need}",
        "too_few_human_passes": f"{entry.get('human_passes')} passes labelled, PPI++ needs {need}",
        "too_few_labels": f"{entry['labelled']} labels, PPI++ needs {entry.get('min_labels')} for scores",
        "no_unlabelled": "every judged case is labelled",
        "judge_constant": "the judge gave one value throughout",
        "human_constant": "people gave one label throughout",
        "zero_standard_error": "no variance left to estimate",
    }
    fallback = entry["fallback"]
    return "humans only: " + reasons.get(str(fallback), str(fallback).replace("_", " "))
