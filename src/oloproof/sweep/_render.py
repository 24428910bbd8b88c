"""The printed lines of a sweep: one table row per setting, then the claim, never more than it holds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["render_sweep"]


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _value(value: float | None, kind: str) -> str:
    """A criterion's estimate as the run report shows it: a share, a mean score or a count."""
    if value is None or kind == "proportion":
        return _percent(value)
    return f"{value:.3f}" if kind == "mean" else f"{value:,.2f}"


def _points(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1f}"


def _number(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _difference(entry: Mapping[str, Any]) -> str:
    if entry.get("difference") is None:
        return "baseline" if entry["label"] == "baseline" else "—"
    return f"{_points(entry['difference'])} [{_points(entry['low'])}, {_points(entry['high'])}]"


def render_sweep(record: Mapping[str, Any], table: Any) -> list[str]:
    """The sweep's report.

    Args:
        record: The sweep's stored result.
        table: ``render_table(headers, rows)``, the report's box-drawn table.
    """
    objective, settings = record["objective"], record["settings"]
    level = f"{record['confidence'] * 100:g}%"
    others = list(settings[0]["criteria"]) if settings else []
    headers = ["Setting", objective, f"vs baseline, points (simultaneous {level})", *others,
               "Context tokens", "Retrieve", "Generate", "Judge", "Generate p50/p95 ms", "Pareto"]  # fmt: skip
    rows = []
    for entry in settings:
        costs = entry["costs"]
        latency = "—" if costs["generate_p50_ms"] is None else \
            f"{_number(costs['generate_p50_ms'])}/{_number(costs['generate_p95_ms'])}"
        kinds = record.get("kinds", {})
        rows.append([entry["label"], _value(entry["estimate"], kinds.get(objective, "proportion")), _difference(entry),
                     *(_value(entry["criteria"].get(name), kinds.get(name, "proportion")) for name in others),
                     _number(costs["context_tokens"], 1), str(costs["retrieve_calls"]), str(costs["generate_calls"]),
                     str(costs["judge_requests"]), latency, "yes" if entry["pareto"] else ""])  # fmt: skip
    lines = [(f"Sweep {record['sweep_id']} · {len(settings) - 1} settings and the baseline · objective {objective} · "
             f"{record['cases']} cases")]  # fmt: skip
    lines += table(headers, rows)
    lines += claim_lines(record)
    return lines


def claim_lines(record: Mapping[str, Any]) -> list[str]:
    """The claim the sweep supports: a winner with its simultaneous interval, or none."""
    objective, compared = record["objective"], record["compared"]
    level = f"{record['confidence'] * 100:g}%"
    where = "" if not record["holdout_cases"] else f" on {record['selection_cases']} selection cases"
    winner = record["winner"]
    if winner is None:
        lines = [(f"Claim: no setting is distinguishable from the baseline on {objective}{where} at this sample size "
                 f"(simultaneous {level} over {compared} settings; {record['method']}). "
                 "`oloproof plan` says how many cases a given difference would need.")]  # fmt: skip
    else:
        entry = next(e for e in record["settings"] if e["label"] == winner)
        lines = [(f"Claim: {winner}: {objective} {_points(entry['difference'])} points "
                 f"[{_points(entry['low'])}, {_points(entry['high'])}] against the baseline{where} "
                 f"(simultaneous {level} over {compared} settings; {record['method']})")]  # fmt: skip
    held = record.get("holdout")
    if held is not None:
        lines.append(f"Holdout: {held['label']} re-estimated on {record['holdout_cases']} held-out cases: "
                     f"{_points(held['difference'])} points [{_points(held['low'])}, {_points(held['high'])}] "
                     f"({held['paired']} paired, {level})")  # fmt: skip
    lines.append("Pareto: the settings marked are not beaten on both the objective and context tokens by another.")
    return lines
