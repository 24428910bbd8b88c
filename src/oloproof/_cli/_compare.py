"""``oloproof compare`` and ``oloproof plan``."""

from __future__ import annotations

import argparse

from oloproof._cli._common import emit, emit_json, quiet_prefect
from oloproof._locate import locate_store

__all__ = ["compare_command", "plan_command"]


def compare_command(args: argparse.Namespace) -> int:
    """Compare two runs; exit 3 when the policy's gate blocks."""
    quiet_prefect()
    from oloproof.comparison import EXIT_BLOCK, render_comparison
    from oloproof.flows._compare import prepare_comparison

    # Bad input fails here, before any flow starts or anything is written.
    prepared = prepare_comparison(args.candidate, args.baseline, policy=args.policy, results=args.results,
                                  project=args.project, allow_partial=args.allow_partial)
    record = prepared()
    emit(record, args.json, render_comparison)
    return EXIT_BLOCK if record["gate"] == "BLOCK" else 0


def plan_command(args: argparse.Namespace) -> int:
    """How many paired cases each rule would need at the baseline's observed rates."""
    from oloproof import stats
    from oloproof.comparison import load_policy
    from oloproof.tasks._records import read_run_records

    policy = load_policy(args.policy)
    store = locate_store(args.results, args.project)
    baseline = read_run_records(store, args.baseline)
    plans = []
    for rule in policy.rules:
        values = [float(r["value"]) for r in baseline["judgments"]
                  if r["criterion"] == rule.metric and r["status"] == "observed" and r["value"] is not None]
        assumed = rule.plan_difference
        if assumed is None:
            assumed = rule.margin + 5.0 if rule.kind == "superiority" else 0.0
        needed = None
        if values:
            needed = stats.required_pairs(values, true_difference=assumed / 100, margin=rule.margin / 100,
                                          kind=rule.kind, confidence=policy.confidence, seed=args.seed)
        plans.append({"rule": rule.name, "metric": rule.metric, "kind": rule.kind, "margin": rule.margin,
                      "assumed_difference": assumed, "baseline_observed": len(values),
                      "baseline_mean": sum(values) / len(values) if values else None, "required_pairs": needed})
    if args.json:
        emit_json(plans)
        return 0
    for plan in plans:
        head = f"{plan['rule']}  {plan['metric']}  {plan['kind']}, margin {plan['margin']:.1f} points: "
        if plan["baseline_observed"] == 0:
            print(head + "the baseline has no observed cases of this metric")
            continue
        need = plan["required_pairs"]
        amount = f"about {need} paired cases" if need is not None else "more than 20000 paired cases"
        print(head + f"{amount} to decide with 80% power, assuming a true difference of "
              f"{plan['assumed_difference']:+.1f} points at the baseline's observed mean "
              f"{plan['baseline_mean']:.3f} ({plan['baseline_observed']} observed); "
              "a lower bound if the systems disagree on cases in both directions")
    return 0
