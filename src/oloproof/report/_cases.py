"""``inspect RUN_ID``: one line per case with its verdicts, positions and context."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence

from pydantic import JsonValue

from oloproof.records import ContextEntry, DroppedEntry, RunReport, StoredCase, StoredJudgment
from oloproof.transcripts import read_vendor_messages

__all__ = ["render_run_cases"]


def _verdict(row: StoredJudgment) -> str:
    if row["status"] != "observed":
        return f"{row['criterion']} {row['status']} ({row['reason']})"
    if row["passed"] is not None:
        verdict = f"{row['criterion']} {'pass' if row['passed'] else 'fail'}"
        if row.get("threshold") is not None and row.get("score") is not None:  # a judge's scale
            return f"{verdict} (score {row['score']:g}, threshold {row['threshold']:g})"
        return verdict
    return f"{row['criterion']} {row['value']:.3f}"


def _passage(item: ContextEntry | DroppedEntry, reason: str | None = None) -> str:
    """A kept passage, or (with its ``reason``) a dropped one."""
    unit = item["doc_id"] if item.get("chunk_id") is None else f"{item['doc_id']}#{item['chunk_id']}"
    tokens = f", {item['tokens']} tokens" if item.get("tokens") is not None else ""
    if reason is not None:
        return f"{unit} (position {item['position']}, {reason}{tokens})"
    return f"{unit} (position {item['position']}{tokens})"


def _tool_calls(items: JsonValue) -> str:
    """An agent's tool calls in order: ``name(arguments) → doc ids`` (or its JSON result, shortened)."""
    calls = read_vendor_messages(items).calls()
    if not calls:
        return "tools none called"
    shown = []
    for call, result in calls:
        content = result.content if result is not None else None
        ids = [str(r["doc_id"]) for r in content if isinstance(r, dict) and "doc_id" in r] \
            if isinstance(content, list) else []
        answer = ", ".join(ids) if ids or content == [] else _short(content)
        shown.append(f"{call.name}({_short(call.arguments)}) → {answer or 'nothing'}")
    return "tools " + "; ".join(shown)


def _short(value: JsonValue, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_run_cases(report: RunReport, cases: Sequence[StoredCase], judgments: Sequence[StoredJudgment]) -> list[str]:
    """One line per case of a run (per case and repeat, with repeats)."""
    by_case: dict[tuple[str, int], list[StoredJudgment]] = defaultdict(list)
    for row in judgments:
        by_case[row["case_id"], row.get("repeat") or 0].append(row)
    count = len({case["case_id"] for case in cases})
    lines = [f"Run {report['run_id']} · {count} cases" + (f" · {len(cases)} samples" if len(cases) != count else "")]
    for case in sorted(cases, key=lambda c: (c["case_id"], c.get("repeat") or 0)):
        repeat = case.get("repeat") or 0
        name = case["case_id"] if len(cases) == count else f"{case['case_id']} (repeat {repeat + 1})"
        if case["status"] != "ok":
            lines.append(f"{name}: missing ({case['error_stage']} error: {case['error']})")
            continue
        parts = ["; ".join(_verdict(row) for row in by_case[case["case_id"], repeat])]
        if case.get("output_items") is not None:  # an agent's run: what it called, in order
            parts.append(_tool_calls(case.get("output_items")))
        if case.get("relevant_position") is not None:
            parts.append(f"relevant position {case['relevant_position']}")
        context = case.get("context")
        if context is not None:
            parts.append("context " + (", ".join(_passage(p) for p in context) or "empty"))
        dropped = [p for p in case.get("dropped") or [] if p["reason"] != "beyond_top_k"]
        beyond = [p for p in case.get("dropped") or [] if p["reason"] == "beyond_top_k"]
        if dropped:
            parts.append("dropped " + ", ".join(_passage(p, p["reason"]) for p in dropped))
        if beyond:
            parts.append(f"{len(beyond)} below top-k")
        lines.append(f"{name}: " + " · ".join(parts))
    return lines
