"""Hand-built runs with an LLM judge, for the judging tests (no Prefect, no provider)."""

from __future__ import annotations

from typing import Any

JUDGE = {"type": "relevance", "version": "1", "options": {"model": "judge-model", "temperature": 0.0},
         "provider_type": "openai", "prompts": {"default": "ab" * 32}, "threshold": 3.0}


def complete_manifest(run_id: str, **fields: Any) -> dict[str, Any]:
    """A ``run.json`` as a run writes it, with ``fields`` in place of the defaults."""
    no_cache = {"hit": 0, "miss": 0}
    return {
        "run_id": run_id, "kind": "run", "status": "complete", "config_hash": None,
        "created_at": "2026-01-02T03:04:05+00:00", "finished_at": "2026-01-02T03:05:06+00:00",
        "project": "project", "system": {"kind": "recorded"}, "system_name": "recorded", "system_version": "1",
        "index_version": None, "dataset": "rows.jsonl", "dataset_sha256": "dataset-1", "case_count": 0,
        "rows_named_by_line": 0, "evaluators": [], "slices": [], "min_slice_support": 1, "confidence": 0.95,
        "cache": {name: no_cache for name in ("execution", "judgment", "retrieve", "generate")}, "judges": [],
        "variant": {"context_source": "assembled"}, **fields,
    }  # fmt: skip


def judged_run(run_id: str, scores: list[int], *, criterion: str = "relevance", threshold: float | None = 3.0,
               judge_id: str = "judge-1", slices: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """A run whose judge gave case ``c<i>`` the score ``scores[i]`` (1-5)."""
    judge = {**JUDGE, "threshold": threshold}
    case_ids = [f"c{i:04d}" for i in range(len(scores))]
    metadata = [{name: values[i] for name, values in (slices or {}).items()} for i in range(len(scores))]
    evaluators = [
        {"criterion": criterion, "kind": "proportion" if threshold is not None else "mean", "llm_judge": True,
         "spec": {"type": "relevance", "version": "1", "options": {"response_field": "answer"}},
         "spec_hash": "spec-1", "judge_id": judge_id, "judge": judge},
        {"criterion": "answer_correct", "kind": "proportion", "llm_judge": False,
         "spec": {"type": "contains", "version": "1", "options": {}}, "spec_hash": "contains-1"},
    ]
    judgments = []
    for case_id, score in zip(case_ids, scores):
        passed = None if threshold is None else score >= threshold
        judgments.append({"run_id": run_id, "case_id": case_id, "criterion": criterion, "status": "observed",
                          "score": float(score), "value": (score - 1) / 4 if threshold is None else float(passed),
                          "passed": passed, "reason": f"scored {score}"})
        judgments.append({"run_id": run_id, "case_id": case_id, "criterion": "answer_correct",
                          "status": "observed", "score": 1.0, "value": 1.0, "passed": True, "reason": None})
    cases = [{"run_id": run_id, "case_id": c, "status": "ok", "query": f"question {c}?",
              "input": {"question": f"question {c}?"}, "output": {"answer": f"answer {c}."},
              "metadata": m, "context": None} for c, m in zip(case_ids, metadata)]
    manifest = complete_manifest(run_id, case_count=len(scores), evaluators=evaluators,
                                 slices=[f"metadata.{name}" for name in slices or {}])
    return {"manifest": manifest, "cases": cases, "judgments": judgments}


def write_run(store: Any, run: dict[str, Any]) -> None:
    """Write a hand-built run into a store in the store's own schemas."""
    from oloproof.store import CASES, JUDGMENTS, METRICS, RETRIEVALS, run_manifest, run_table

    run_id = run["manifest"]["run_id"]
    store.write_table(run_table(run_id, "cases"), run["cases"], CASES)
    store.write_table(run_table(run_id, "judgments"), run["judgments"], JUDGMENTS)
    store.write_table(run_table(run_id, "retrievals"), [], RETRIEVALS)
    store.write_table(run_table(run_id, "metrics"), [], METRICS)
    store.write_json(run_manifest(run_id), run["manifest"])
