"""A sweep's result from its runs' rows: estimates, costs, the simultaneous choice, the front.

Pure: it reads the rows a caller hands it (each setting's manifest, ``cases`` and
``judgments`` rows) and returns the JSON the sweep stores and prints.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from pydantic import JsonValue

from oloproof.records import RunManifest, StoredCase, StoredJudgment
from oloproof.records._samples import stored_samples
from oloproof.sweep._select import compare_settings, holdout_split, pareto_front

__all__ = ["SettingRows", "objective_values", "summarize_sweep"]


@dataclass(frozen=True)
class SettingRows:
    """One setting's run as the sweep reads it."""

    label: str
    """The setting's label (``baseline`` for the baseline)."""
    overrides: Mapping[str, JsonValue]
    """The setting's own overrides."""
    manifest: RunManifest
    """Its run's manifest."""
    cases: Sequence[StoredCase]
    """Its run's ``cases`` rows."""
    judgments: Sequence[StoredJudgment]
    """Its run's ``judgments`` rows."""


def objective_values(judgments: Sequence[StoredJudgment], criterion: str) -> dict[str, float]:
    """Each observed case's value of ``criterion`` (in [0, 1]: the mean of its samples, with
    repeats); missing and excluded cases are left out."""
    return {case_id: samples.mean for case_id, samples in stored_samples(judgments, criterion).items()
            if samples.values}  # fmt: skip


def _mean(values: Mapping[str, float] | Sequence[float]) -> float | None:
    items = list(values.values()) if isinstance(values, Mapping) else list(values)
    return math.fsum(items) / len(items) if items else None


def _costs(rows: SettingRows) -> dict[str, JsonValue]:
    tokens = [sum(int(p.get("tokens") or 0) for p in case.get("context") or []) for case in rows.cases
              if case.get("context") and all(p.get("tokens") is not None for p in case.get("context") or [])]
    latencies = [float(case["generate_ms"]) for case in rows.cases  # type: ignore[typeddict-item]
                 if case.get("generate_ms") is not None]
    cache = rows.manifest.cache
    return {
        "context_tokens": _mean(tokens),
        "retrieve_calls": cache.retrieve.miss,
        "generate_calls": cache.generate.miss,
        "judge_requests": sum(int(usage.requests or 0) for usage in rows.manifest.judges),
        "generate_p50_ms": float(np.percentile(latencies, 50)) if latencies else None,
        "generate_p95_ms": float(np.percentile(latencies, 95)) if latencies else None,
    }


def summarize_sweep(
    baseline: SettingRows,
    settings: Sequence[SettingRows],
    *,
    objective: str,
    criteria: Mapping[str, str],
    higher_is_better: bool,
    confidence: float,
    holdout: float | None = None,
    seed: int = 0,
) -> dict[str, JsonValue]:
    """The sweep's result: one entry per setting, the choice, and the holdout's re-estimate.

    ``criteria`` maps every criterion reported, the objective first, to how it is
    summarized (``proportion``, ``mean`` or ``count``). The choice is made on the selection cases (all of them without a holdout): a
    setting is claimed only when its paired interval against the baseline, adjusted
    for every setting compared, lies on the better side of zero.
    """
    all_ids = sorted({case["case_id"] for case in baseline.cases})
    chosen_ids, held_ids = holdout_split(all_ids, holdout, seed) if holdout else (all_ids, [])
    keep = set(chosen_ids)
    values = {rows.label: objective_values(rows.judgments, objective) for rows in (baseline, *settings)}
    decision = compare_settings(
        {k: v for k, v in values[baseline.label].items() if k in keep},
        [(rows.label, {k: v for k, v in values[rows.label].items() if k in keep}) for rows in settings],
        confidence=confidence, higher_is_better=higher_is_better, seed=seed,
    )  # fmt: skip
    entries: list[dict[str, Any]] = []
    costs = {rows.label: _costs(rows) for rows in (baseline, *settings)}
    by_label = {result.label: result for result in decision.results}
    for rows in (baseline, *settings):
        result = by_label.get(rows.label)
        entries.append({
            "label": rows.label, "overrides": dict(rows.overrides), "run_id": rows.manifest.run_id,
            "estimate": _mean(values[rows.label]), "observed": len(values[rows.label]),
            "difference": result.difference if result else None, "low": result.low if result else None,
            "high": result.high if result else None, "paired": result.paired if result else None,
            "criteria": {c: _mean(objective_values(rows.judgments, c)) for c in criteria if c != objective},
            "costs": costs[rows.label],
        })  # fmt: skip
    front = pareto_front([(e["estimate"], e["costs"]["context_tokens"]) for e in entries],
                         higher_is_better=higher_is_better)  # fmt: skip
    for entry, on_front in zip(entries, front, strict=True):
        entry["pareto"] = on_front
    record: dict[str, JsonValue] = {
        "objective": objective, "higher_is_better": higher_is_better, "confidence": confidence,
        "method": decision.method, "compared": decision.compared, "winner": decision.winner,
        "cases": len(all_ids), "selection_cases": len(chosen_ids), "holdout_cases": len(held_ids),
        "settings": cast("list[JsonValue]", entries), "holdout": None, "kinds": dict(criteria),
    }  # fmt: skip
    if held_ids and decision.winner is not None:
        held = set(held_ids)
        again = compare_settings({k: v for k, v in values[baseline.label].items() if k in held},
                                 [(decision.winner, {k: v for k, v in values[decision.winner].items() if k in held})],
                                 confidence=confidence, higher_is_better=higher_is_better, seed=seed)  # fmt: skip
        (result,) = again.results
        record["holdout"] = {"label": result.label, "difference": result.difference, "low": result.low,
                             "high": result.high, "paired": result.paired}  # fmt: skip
    return record
