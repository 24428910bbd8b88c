"""The printed lines of a comparison, in the product page's shape."""

from __future__ import annotations

from typing import Any

from oloproof import stats
from oloproof.report._render import missing_text

__all__ = ["EXIT_BLOCK", "difference_text", "render_comparison", "render_decisions"]

EXIT_BLOCK = 3


def difference_text(row: dict[str, Any]) -> str:
    """``+0.0 points [-33.6, +33.6]``: the interval rounded outward to 0.1 point."""
    if row.get("difference") is None:
        return "no pairs"
    interval = stats.round_outward(
        stats.Interval(low=row["low"] / 100, high=row["high"] / 100, confidence=0.95, method=""), 3
    )
    return f"{row['difference']:+.1f} points [{interval.low * 100:+.1f}, {interval.high * 100:+.1f}]"


def _counts(row: dict[str, Any]) -> str:
    text = f"{row['paired']} paired · {missing_text(row)} · {row['excluded']} excluded"
    return text + (f" · {row['unpaired']} unpaired" if row.get("unpaired") else "")


def render_decisions(record: dict[str, Any]) -> list[str]:
    """The ``Decisions`` block and the gate line."""
    if record.get("gate") is None:
        return ["Gate: none (no policy given)"]
    lines = ["Decisions"]
    for d in record["decisions"]:
        lines.append(
            f"  {d['rule']}  {d['criterion']}  {d['kind']}, margin {d['margin']:.1f} points  {d['verdict']}  {d['reason']}"
        )
    code = 0 if record["gate"] == "PASS" else EXIT_BLOCK
    lines.append(f"Gate: {record['gate']} (exit {code})")
    return lines


def render_comparison(record: dict[str, Any]) -> list[str]:
    """The whole comparison report."""
    lines = [
        (f"Comparison {record['comparison_id']} of {record['candidate_run_id']} against "
         f"{record['baseline_run_id']} · {record['paired_cases']} paired cases")
    ]
    lines += [f"{m['criterion']}: {difference_text(m)} · {_counts(m)}" for m in record["metrics"]]
    for probe in record["probes"]:
        where = f"Probe (exploratory) {probe['slice']}={probe['slice_value']} · {probe['criterion']}: "
        if probe["scored"]:
            lines.append(where + f"{difference_text(probe)} · {probe['paired']} paired")
        else:
            lines.append(where + f"{probe['paired']} paired, too few to estimate")
    scope = record.get("scope") or {}
    if scope.get("different_specs"):
        lines.append("Not compared (different evaluator specs): " + ", ".join(scope["different_specs"]))
    return lines + render_decisions(record)
