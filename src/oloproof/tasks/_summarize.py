"""Summarize a run from its batch parts: metrics with intervals, cache counts, judge usage."""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.providers import error_kind
from oloproof.records import JudgmentBrief
from oloproof.report._facts import slice_value
from oloproof.report._summary import summarize_metrics
from oloproof.tasks._batch_part import BatchPart
from oloproof.tasks._environment import RunEnvironment

__all__ = ["cache_counts", "judge_usage", "summarize_run"]


def cache_counts(parts: list[BatchPart], judgments: list[JudgmentBrief]) -> dict[str, dict[str, int]]:
    """Hit/miss counts per cache, per case (and per case × criterion for judgments)."""
    totals = {cache: {"hit": 0, "miss": 0} for cache in ("execution", "judgment", "retrieve", "generate")}
    for part in parts:
        for cache, counts in part.counts.items():
            totals[cache]["hit"] += counts["hit"]
            totals[cache]["miss"] += counts["miss"]
    hits = sum(1 for j in judgments if j.keyed and j.hit)
    keyed = sum(1 for j in judgments if j.keyed)
    totals["judgment"] = {"hit": hits, "miss": keyed - hits}
    return totals


def judge_usage(judgments: list[JudgmentBrief]) -> list[dict[str, Any]]:
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
            "input_tokens": 0, "output_tokens": 0, "cost_usd": None, "error_kinds": {}, "error_samples": {},
        })  # fmt: skip
        if row.hit:
            entry["cached"] += 1
            continue
        entry["calls"] += 1
        if row.outcome == "error":
            entry["errors"] += 1
            kind = error_kind(row.error)
            entry["error_kinds"][kind] = entry["error_kinds"].get(kind, 0) + 1
            entry["error_samples"].setdefault(kind, row.error or kind)
        entry["retries"] += row.retries or 0
        entry["input_tokens"] += row.input_tokens or 0
        entry["output_tokens"] += row.output_tokens or 0
        if row.cost_usd is not None:
            entry["cost_usd"] = (entry["cost_usd"] or 0.0) + row.cost_usd
    return [usage[key] for key in sorted(usage)]


@task(cache_policy=NO_CACHE, name="summarize", task_run_name="summarize {env.run_id}")
def summarize_run(env: RunEnvironment, parts: list[BatchPart]) -> dict[str, Any]:
    """The metric rows (overall and per slice), cache counts and judge usage."""
    config = env.project.config
    judgments = [row for part in parts for row in part.judgments]
    facts = {case_id: fact for part in parts for case_id, fact in part.facts.items()}
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
    return {"metrics": metrics, "cache": cache_counts(parts, judgments), "judges": judge_usage(judgments)}
