"""Summarize a run from its batch parts: metrics with intervals, cache counts, judge usage."""

from __future__ import annotations

from dataclasses import dataclass, field

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.providers import error_kind
from oloproof.records import CacheCount, JudgeUsage, JudgmentBrief, MetricSummary, RunCache
from oloproof.records._samples import FLAKY_SLICE, flaky_cases
from oloproof.report._facts import slice_value
from oloproof.report._summary import summarize_metrics
from oloproof.stages._batch_part import BatchPart
from oloproof.tasks._environment import RunEnvironment

__all__ = ["RunSummary", "cache_counts", "judge_usage", "summarize_run"]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a run's manifest and report take from its batch parts."""

    metrics: list[MetricSummary]
    """The metric rows, overall and per slice, as ``oloproof.report`` computes them
    (the ``metrics`` table's rows, less their run id)."""
    cache: RunCache
    """Cache hits and misses."""
    judges: list[JudgeUsage]
    """LLM judge calls per provider and model."""


def cache_counts(parts: list[BatchPart], judgments: list[JudgmentBrief]) -> RunCache:
    """Hit/miss counts per cache, per case (and per case × criterion for judgments)."""
    totals = {cache: [0, 0] for cache in ("execution", "retrieve", "generate", "tools")}
    agent = any("tools" in part.counts for part in parts)
    for part in parts:
        for cache, counts in part.counts.items():
            totals[cache][0] += counts.hit
            totals[cache][1] += counts.miss
    hits = sum(1 for j in judgments if j.keyed and j.hit)
    keyed = sum(1 for j in judgments if j.keyed)
    return RunCache(
        execution=CacheCount(hit=totals["execution"][0], miss=totals["execution"][1]),
        judgment=CacheCount(hit=hits, miss=keyed - hits),
        retrieve=CacheCount(hit=totals["retrieve"][0], miss=totals["retrieve"][1]),
        generate=CacheCount(hit=totals["generate"][0], miss=totals["generate"][1]),
        tools=CacheCount(hit=totals["tools"][0], miss=totals["tools"][1]) if agent else None,
    )


@dataclass
class _Usage:
    """One provider and model's running totals."""

    provider_type: str | None
    calls: int = 0
    judgments: int = 0
    requests: int = 0
    cached: int = 0
    retries: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    error_kinds: dict[str, int] = field(default_factory=dict)
    error_samples: dict[str, str] = field(default_factory=dict)


def judge_usage(judgments: list[JudgmentBrief]) -> list[JudgeUsage]:
    """Judgments, requests, cache hits, tokens, retries, errors and cost per provider and model.

    ``judgments`` (and ``calls``, its name in earlier versions) counts the judgments
    this run made, errors included; ``requests`` the requests it sent for them
    (retries and re-asks included). A hit row carries the accounting of the earlier
    call that made it: it counts as cached, and none of its tokens or cost are this run's.
    """
    usage: dict[tuple[str, str], _Usage] = {}
    for row in judgments:
        if row.provider is None or row.model is None or row.outcome == "skipped":
            continue
        entry = usage.setdefault((row.provider, row.model), _Usage(row.provider_type))
        if row.hit:
            entry.cached += 1
            continue
        entry.calls += 1
        entry.judgments += 1
        entry.requests += _requests(row)
        if row.outcome == "error":
            entry.errors += 1
            kind = error_kind(row.error)
            entry.error_kinds[kind] = entry.error_kinds.get(kind, 0) + 1
            entry.error_samples.setdefault(kind, row.error or kind)
        entry.retries += row.retries or 0
        entry.input_tokens += row.input_tokens or 0
        entry.output_tokens += row.output_tokens or 0
        if row.cost_usd is not None:
            entry.cost_usd = (entry.cost_usd or 0.0) + row.cost_usd
    return [
        JudgeUsage(provider=provider, model=model, provider_type=entry.provider_type, calls=entry.calls,
                   judgments=entry.judgments, requests=entry.requests,
                   cached=entry.cached, retries=entry.retries, errors=entry.errors,
                   input_tokens=entry.input_tokens, output_tokens=entry.output_tokens, cost_usd=entry.cost_usd,
                   error_kinds=entry.error_kinds, error_samples=entry.error_samples)
        for (provider, model), entry in sorted(usage.items())
    ]  # fmt: skip


def _requests(row: JudgmentBrief) -> int:
    """The requests of a judgment this run made; one that did not count them sent
    one and its retries, and one cut off before its call said anything, none known."""
    if row.requests is not None:
        return row.requests
    return 1 + row.retries if row.retries is not None else 0


@task(cache_policy=NO_CACHE, name="summarize", task_run_name="summarize {env.run_id}")
def summarize_run(env: RunEnvironment, parts: list[BatchPart]) -> RunSummary:
    """The metric rows (overall and per slice), cache counts and judge usage."""
    config = env.project.config
    judgments = [row for part in parts for row in part.judgments]
    facts = {case_id: fact for part in parts for case_id, fact in part.facts.items()}
    slices = {
        name: {cid: slice_value(name, env.cases[cid], facts[cid]) for cid in facts}
        for name in config.slices
    }
    if env.repeats > 1 or config.judge_repeats > 1:
        slices[FLAKY_SLICE] = flaky_cases(judgments)
    metrics = summarize_metrics(
        judgments,
        criteria=[(output.criterion, output.metric_kind) for e in env.evaluators for output in e.outputs()],
        slices=slices,
        min_slice_support=config.min_slice_support,
        confidence=config.confidence,
    )
    return RunSummary(metrics=metrics, cache=cache_counts(parts, judgments), judges=judge_usage(judgments))
