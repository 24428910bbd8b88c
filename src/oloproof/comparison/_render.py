"""The printed lines of a comparison, in the product page's shape."""

from __future__ import annotations

from oloproof import stats
from oloproof.records import ComparisonRecord, MetricLine
from oloproof.report._render import missing_text

__all__ = ["EXIT_BLOCK", "difference_text", "render_comparison", "render_decisions"]

EXIT_BLOCK = 3


def difference_text(row: MetricLine) -> str:
    """``+0.0 points [-33.6, +33.6]``: the interval rounded outward to 0.1 point."""
    difference, low, high = row.get("difference"), row.get("low"), row.get("high")
    if difference is None or low is None or high is None:  # a difference always comes with its interval
        return "no pairs"
    interval = stats.round_outward(stats.Interval(low=low / 100, high=high / 100, confidence=0.95, method=""), 3)
    return f"{difference:+.1f} points [{interval.low * 100:+.1f}, {interval.high * 100:+.1f}]"


def _counts(row: MetricLine) -> str:
    text = f"{row['paired']} paired · {missing_text(row)} · {row['excluded']} excluded"
    return text + (f" · {row['unpaired']} unpaired" if row.get("unpaired") else "")


def render_decisions(record: ComparisonRecord) -> list[str]:
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


def render_comparison(record: ComparisonRecord) -> list[str]:
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
    scope = record.get("scope")
    different = scope.get("different_specs") if scope else None
    if different:
        lines.append("Not compared (different evaluator specs): " + ", ".join(different))
    return lines + render_decisions(record)
