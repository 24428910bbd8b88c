"""Batch parts: each batch's share of a run, and the run's counts summed over them."""

from __future__ import annotations

import dataclasses

from test_tasks_persist import JUDGMENT_ROWS, RESULTS

from oloproof.records import CacheCount, JudgmentBrief, RunCache
from oloproof.report import summarize_metrics
from oloproof.tasks import BatchPart, cache_counts
from oloproof.tasks._parts import _counts
from oloproof.tasks._summarize import judge_usage

BRIEFS = [JudgmentBrief.of(row) for row in JUDGMENT_ROWS]


def _part(index: int, results, judgments) -> BatchPart:
    return BatchPart(index=index, facts={}, judgments=list(judgments), counts=_counts(list(results)), chunks={})


def test_a_part_counts_its_cases_caches():
    # c1 ran both stages (retrieval a hit), c2 failed at retrieval and never generated.
    assert _counts(RESULTS) == {
        "execution": CacheCount(hit=0, miss=2),
        "retrieve": CacheCount(hit=1, miss=1),
        "generate": CacheCount(hit=0, miss=1),
    }


def test_counts_over_parts_are_the_counts_of_the_whole_run():
    hit = dataclasses.replace(RESULTS[0], case_id="c3", execution_hit=True, retrieve_ran=False, generate_ran=False)
    parts = [_part(0, RESULTS, BRIEFS[:1]), _part(1, [hit], BRIEFS[1:])]
    keyed = [row for row in JUDGMENT_ROWS if row.judgment_key is not None]
    assert keyed and cache_counts(parts, BRIEFS) == RunCache(
        execution=CacheCount(hit=1, miss=2),
        judgment=CacheCount(hit=sum(row.hit for row in keyed), miss=sum(not row.hit for row in keyed)),
        retrieve=CacheCount(hit=1, miss=1),
        generate=CacheCount(hit=0, miss=1),
    )
    none = CacheCount(hit=0, miss=0)
    assert cache_counts([], []) == RunCache(execution=none, judgment=none, retrieve=none, generate=none)


def test_a_brief_summarizes_as_its_row():
    criteria = sorted({(row.criterion, "auto") for row in JUDGMENT_ROWS})
    slices = {"metadata.topic": {row.case_id: "billing" for row in JUDGMENT_ROWS}}
    kwargs = {"criteria": criteria, "slices": slices, "min_slice_support": 1, "confidence": 0.95}
    assert summarize_metrics(BRIEFS, **kwargs) == summarize_metrics(JUDGMENT_ROWS, **kwargs)
    call = {"provider": "judge", "provider_type": "openai", "model": "m", "retries": 1,
            "input_tokens": 10, "output_tokens": 2, "cost_usd": 0.01}  # fmt: skip
    judged = [row.model_copy(update={**call, "case_id": f"k{n}", "hit": n == 1})
              for n, row in enumerate([JUDGMENT_ROWS[0], *JUDGMENT_ROWS])]  # fmt: skip
    usage = judge_usage([JudgmentBrief.of(row) for row in judged])
    assert usage == judge_usage(judged)  # type: ignore[arg-type]
    assert (usage[0].calls, usage[0].cached, usage[0].retries) == (1, 1, 1)
