"""Reports: per-case facts, metric summaries and their text rendering."""

from oloproof.report._cases import render_run_cases
from oloproof.report._catalogue import catalogue_results
from oloproof.report._facts import (
    best_relevant_position,
    case_facts,
    first_repeats,
    relevant_ids,
    slice_value,
    slice_values,
)
from oloproof.report._funnel import Funnel, FunnelStep, failure_funnel, render_funnel
from oloproof.report._html import pack_cases, read_report_cases, render_html
from oloproof.report._judge_errors import ProviderErrors, judge_error_lines, provider_errors
from oloproof.report._page import JudgeStatus, ReportPage, TrendRow, case_views, question_text
from oloproof.report._render import (
    basis_text,
    cache_lines,
    estimate_text,
    interval_text,
    judges_line,
    missing_text,
    render_judge_estimates,
    render_run,
    render_slices,
    render_table,
)
from oloproof.report._summary import summarize_criterion, summarize_metrics

__all__ = [
    "Funnel",
    "FunnelStep",
    "JudgeStatus",
    "ProviderErrors",
    "ReportPage",
    "TrendRow",
    "basis_text",
    "best_relevant_position",
    "cache_lines",
    "case_facts",
    "case_views",
    "catalogue_results",
    "estimate_text",
    "failure_funnel",
    "first_repeats",
    "interval_text",
    "judge_error_lines",
    "judges_line",
    "missing_text",
    "pack_cases",
    "provider_errors",
    "question_text",
    "read_report_cases",
    "relevant_ids",
    "render_funnel",
    "render_html",
    "render_judge_estimates",
    "render_run",
    "render_run_cases",
    "render_slices",
    "render_table",
    "slice_value",
    "slice_values",
    "summarize_criterion",
    "summarize_metrics",
]
