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

__all__ = ["cache_counts", "summarize_run"]


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
        criteria=[(e.criterion, e.kind) for e in env.evaluators],
        slices=slices,
        min_slice_support=config.min_slice_support,
        confidence=config.confidence,
    )
    return {
        "facts": facts,
        "metrics": metrics,
        "judgments": judgments,
        "cache": cache_counts(results, judgments),
    }
