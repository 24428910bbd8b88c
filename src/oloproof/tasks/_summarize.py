"""Summarize a run: per-case facts, metrics with intervals, cache counts."""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.report._facts import case_facts, slice_value
from oloproof.report._summary import summarize_metrics
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._judge import settle_judgments
from oloproof.records import JudgmentRow
from oloproof.tasks._results import CaseResult

__all__ = ["cache_counts", "judge_usage", "summarize_run"]


def _count(flags: list[bool]) -> dict[str, int]:
    hits = sum(1 for flag in flags if flag)
    return {"hit": hits, "miss": len(flags) - hits}


def cache_counts(results: list[CaseResult], judgments: list[JudgmentRow]) -> dict[str, dict[str, int]]:
    """Hit/miss counts per cache, per case (and per case × criterion for judgments)."""
    return {
        "execution": _count([r.execution_hit for r in results]),
        "judgment": _count([j.hit for j in judgments if j.judgment_key is not None]),
        "retrieve": _count([r.retrieve_hit for r in results if r.retrieve_ran]),
        "generate": _count([r.generate_hit for r in results if r.generate_ran]),
    }


def judge_usage(judgments: list[JudgmentRow]) -> list[dict[str, Any]]:
    """Calls, cache hits, tokens, retries, errors and cost per provider and model.

    A hit row carries the accounting of the earlier call that made it: it counts
    as cached, and none of its tokens or cost are this run's.
    """
    usage: dict[tuple[str, str], dict[str, Any]] = {}
    for row in judgments:
        if row.provider is None or row.model is None or row.outcome == "skipped":
            continue
        entry = usage.setdefault((row.provider, row.model), {
            "provider": row.provider, "provider_type": row.provider_type, "model": row.model,
            "calls": 0, "cached": 0, "retries": 0, "errors": 0,
            "input_tokens": 0, "output_tokens": 0, "cost_usd": None,
        })  # fmt: skip
        if row.hit:
            entry["cached"] += 1
            continue
        entry["calls"] += 1
        entry["errors"] += row.outcome == "error"
        entry["retries"] += row.retries or 0
        entry["input_tokens"] += row.input_tokens or 0
        entry["output_tokens"] += row.output_tokens or 0
        if row.cost_usd is not None:
            entry["cost_usd"] = (entry["cost_usd"] or 0.0) + row.cost_usd
    return [usage[key] for key in sorted(usage)]


@task(cache_policy=NO_CACHE, name="summarize", task_run_name="summarize {env.run_id}")
def summarize_run(
    env: RunEnvironment, results: list[CaseResult], judgments: list[JudgmentRow]
) -> dict[str, Any]:
    """Per-case facts and the metric rows (overall and per slice)."""
    config = env.project.config
    judgments = settle_judgments(judgments, env.run_id)
    facts = {
        r.case_id: case_facts(
            env.cases[r.case_id], r.candidates if r.ok else None, r.dropped, env.system.config.top_k
        )
        for r in results
    }
    slices = {
        name: {cid: slice_value(name, env.cases[cid], facts[cid]) for cid in facts}
        for name in config.slices
    }
    metrics = summarize_metrics(
        judgments,
        criteria=[(output.criterion, output.metric_kind) for e in env.evaluators for output in e.outputs()],
        slices=slices,
        min_slice_support=config.min_slice_support,
        confidence=config.confidence,
    )
    return {
        "facts": facts,
        "metrics": metrics,
        "judgments": judgments,
        "cache": cache_counts(results, judgments),
        "judges": judge_usage(judgments),
    }
