"""``oloproof compare`` and ``oloproof plan``."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from oloproof._cli._common import emit, emit_json, quiet_prefect
from oloproof._locate import locate_store

if TYPE_CHECKING:
    from oloproof.comparison import Policy, Rule
    from oloproof.records import RulePlan, StoredRun
    from oloproof.records._samples import CaseSamples

__all__ = ["compare_command", "plan_command"]


def compare_command(args: argparse.Namespace) -> int:
    """Compare two runs; exit 3 when the policy's gate blocks."""
    quiet_prefect()
    from oloproof.comparison import EXIT_BLOCK, render_comparison
    from oloproof.flows._api import connect_prefect_api
    from oloproof.flows._compare import prepare_comparison

    # Bad input fails here, before any flow starts or anything is written.
    prepared = prepare_comparison(args.candidate, args.baseline, policy=args.policy, results=args.results,
                                  project=args.project, allow_partial=args.allow_partial)
    connect_prefect_api()
    record = prepared()
    emit(record, args.json, render_comparison)
    return EXIT_BLOCK if record["gate"] == "BLOCK" else 0


# The share of discordant cases `plan` assumes when neither a pilot run nor
# --discordance says otherwise; printed with every figure it produced.
DEFAULT_DISCORDANCE = 0.10


def _plan_rule(rule: Rule, policy: Policy, baseline: StoredRun, pilot: StoredRun | None,
               args: argparse.Namespace) -> RulePlan:
    """One rule's plan: the pairs it needs and every assumption behind the figure."""
    from oloproof import stats
    from oloproof._exceptions import StatsError
    from oloproof.comparison import pair_metric
    from oloproof.records._samples import stored_samples

    # With repeats, a case is the mean of its samples: cases are what the gate pairs.
    cases = stored_samples(baseline["judgments"], rule.metric)
    values = [samples.mean for samples in cases.values() if samples.values]
    share = stats.variance_components([samples.values for samples in cases.values()])
    assumed = rule.plan_difference
    if assumed is None:
        assumed = rule.margin + 5.0 if rule.kind == "superiority" else 0.0
    plan: RulePlan = {"rule": rule.name, "metric": rule.metric, "kind": rule.kind, "margin": rule.margin,
            "assumed_difference": assumed, "baseline_observed": len(values),
            "baseline_mean": sum(values) / len(values) if values else None, "power": args.power,
            "pass_fail": None, "method": None, "discordance": None, "discordance_source": None,
            "pilot_pairs": None, "pilot_discordant": None, "difference_sd": None, "required_pairs": None, "error": None,
            "repeats": max((len(samples.repeats) for samples in cases.values()), default=1),
            "within_share": share.within_share if share is not None else None,
            "case_over_repeat": None}
    if share is not None and values:
        ratio = share.case_over_repeat(len(values))
        plan["case_over_repeat"] = None if math.isinf(ratio) else ratio
    if not values:
        return plan
    _plan_stable_repeats(plan, rule, policy, cases, pilot, args.seed)
    pairs = []
    if pilot is not None:
        pairs = pair_metric(pilot["judgments"], baseline["judgments"], rule.metric)["pairs"]
        plan["pilot_pairs"] = len(pairs)
    pilot_values = [a for _, a, _ in pairs]
    pass_fail = stats.is_pass_fail(values) and (not pairs or stats.is_pass_fail(pilot_values))
    plan["pass_fail"] = pass_fail
    plan["method"] = stats.PAIRED_BINARY_METHOD if pass_fail else stats.PAIRED_METHOD
    options = {"true_difference": assumed / 100, "margin": rule.margin / 100, "kind": rule.kind,
               "confidence": policy.confidence, "power": args.power, "seed": args.seed}
    try:
        if args.discordance is not None:
            plan["discordance"], plan["discordance_source"] = args.discordance, "given"
        elif pairs and pass_fail:
            _, better, worse, _ = stats.paired_counts(pilot_values, [b for _, _, b in pairs])
            plan["discordance"], plan["discordance_source"] = (better + worse) / len(pairs), "pilot"
            plan["pilot_discordant"] = better + worse
        elif pairs:
            differences = [a - b for _, a, b in pairs]
            mean = sum(differences) / len(differences)
            plan["difference_sd"] = (sum((d - mean) ** 2 for d in differences) / len(differences)) ** 0.5
            plan["discordance_source"] = "pilot"
            plan["required_pairs"] = stats.required_pairs(
                [b for _, _, b in pairs], pilot_values=pilot_values, **options)
            return plan
        else:
            plan["discordance"] = DEFAULT_DISCORDANCE
            plan["discordance_source"] = "assumed" if pilot is None else "assumed_no_pilot_pairs"
        discordance = plan["discordance"]
        if pass_fail and plan["discordance_source"] != "given" and discordance is not None \
                and discordance < abs(assumed) / 100:
            # A difference of d points needs at least d% of the cases to disagree.
            plan["discordance"], plan["discordance_source"] = abs(assumed) / 100, "raised"
        plan["required_pairs"] = stats.required_pairs(values, discordance=plan["discordance"], **options)
    except StatsError as error:
        plan["error"] = str(error)
    return plan


def _plan_stable_repeats(plan: RulePlan, rule: Rule, policy: Policy, base: dict[str, CaseSamples],
                         pilot: StoredRun | None, seed: int) -> None:
    """With repeats (the pilot's, else the baseline's): the repeats at which two identical
    runs of the candidate get the same verdict against the baseline (see `stats.stable_repeats`)."""
    from oloproof import stats
    from oloproof.records._samples import stored_samples

    source, own = "baseline", base
    if pilot is not None:
        source, own = "pilot", stored_samples(pilot["judgments"], rule.metric)
    cases = sorted(case for case in set(base) & set(own) if base[case].values and own[case].values)
    if not cases or max(len(own[case].values) for case in cases) < 2:
        return  # no case sampled twice: nothing says how a run's samples spread
    stable = stats.stable_repeats([own[case].values for case in cases], [base[case].mean for case in cases],
                                  kind=rule.kind, margin=rule.margin / 100, confidence=policy.confidence,
                                  seed=seed)  # fmt: skip
    plan["stable_repeats"], plan["stable_flip_rate"] = stable.repeats, stable.flip_rate
    plan["stable_verdict"], plan["stable_from"] = stable.verdict, source


def _plan_line(plan: RulePlan) -> str:
    head = f"{plan['rule']}  {plan['metric']}  {plan['kind']}, margin {plan['margin']:.1f} points: "
    mean = plan["baseline_mean"]
    if plan["baseline_observed"] == 0 or mean is None:  # no mean without an observed case
        return head + "the baseline has no observed cases of this metric"
    if plan["error"] is not None:
        return head + f"cannot plan: {plan['error']}"
    need = plan["required_pairs"]
    amount = f"about {need} paired cases" if need is not None else "more than 20000 paired cases"
    text = (f"{amount} for {plan['power']:.0%} power with the gate's interval ({plan['method']}), "
            f"assuming a true difference of {plan['assumed_difference']:+.1f} points")
    source = plan["discordance_source"]
    if plan["discordance"] is not None:
        share = f"{plan['discordance'] * 100:.1f}% of cases "
        share += "discordant" if plan["pass_fail"] else "rescored (redrawn from the baseline's scores)"
        share += {
            "given": " (--discordance)",
            "pilot": f" (measured: {plan['pilot_discordant']} of {plan['pilot_pairs']} pilot pairs disagree)",
            "raised": " (the least that difference needs)",
            "assumed": " (assumed: pass --pilot RUN or --discordance to measure or state it)",
            "assumed_no_pilot_pairs": " (assumed: the pilot has no pairs of this metric)",
        }[source or "assumed"]
    else:
        share = (f"the spread of the pilot's {plan['pilot_pairs']} paired differences "
                 f"(SD {plan['difference_sd']:.3f})")
    if plan["pass_fail"]:
        base = f"a baseline pass rate of {mean * 100:.1f}% ({plan['baseline_observed']} observed)"
    else:
        base = f"a baseline mean of {mean:.3f} ({plan['baseline_observed']} observed)"
    return head + f"{text}, {share} and {base}" + _repeats_text(plan)


def _repeats_text(plan: RulePlan) -> str:
    """With repeats: the cases are cases × repeats, and whether more repeats would help."""
    repeats, within = plan.get("repeats", 1), plan.get("within_share")
    if repeats <= 1 or within is None:
        return ""
    text = f"; cases of {repeats} repeats each: {within:.0%} of a sample's variance is within its case"
    ratio = plan.get("case_over_repeat")
    if ratio is None:
        return text + ", and none between cases: more cases help, more repeats do not"
    advice = "add cases rather than repeats" if ratio >= 1 else "more repeats help more than more cases"
    text += f"; per generation, one more case lowers the variance {ratio:.1f}× as much as one more repeat ({advice})"
    return text + _stable_text(plan)


def _stable_text(plan: RulePlan) -> str:
    """The repeats at which the gate's verdict repeats, as simulated."""
    if "stable_repeats" not in plan:
        return ""
    runs = "the pilot's" if plan.get("stable_from") == "pilot" else "the baseline's"
    rate = plan.get("stable_flip_rate", 0.0)
    if plan["stable_repeats"] is None:
        return (f"; no number of repeats up to 32 keeps the verdict: at 32, {rate:.1%} of simulated pairs of identical "
                f"runs (drawn from {runs} samples) get different verdicts, so the gate sits near its margin: "
                "add cases, or state a wider margin")  # fmt: skip
    if plan.get("stable_verdict") == "INSUFFICIENT_EVIDENCE":
        return (f"; the verdict repeats from {plan['stable_repeats']} repeats on, as INSUFFICIENT_EVIDENCE "
                f"({rate:.1%} of simulated pairs of identical runs differ): this gate needs more cases, not repeats")
    return (f"; for a verdict that repeats, run the candidate with {plan['stable_repeats']} repeats: then "
            f"{rate:.1%} of simulated pairs of identical runs (drawn from {runs} samples) get different verdicts "
            f"(most often {plan.get('stable_verdict')})")


def plan_command(args: argparse.Namespace) -> int:
    """How many paired cases each rule needs for a stated power, with the gate's interval."""
    from oloproof._exceptions import UsageError
    from oloproof.comparison import load_policy
    from oloproof.store import read_run_records

    if not 0.0 < args.power < 1.0:
        raise UsageError(f"--power must be a probability in (0, 1), got {args.power}")
    if args.discordance is not None and not 0.0 <= args.discordance <= 1.0:
        raise UsageError(f"--discordance must be a fraction in [0, 1] (0.1, not 10), got {args.discordance}")
    if args.pilot is not None and args.pilot == args.baseline:
        raise UsageError(f"the pilot run must differ from the baseline run {args.baseline}")
    policy = load_policy(args.policy)
    store = locate_store(args.results, args.project)
    baseline = read_run_records(store, args.baseline).as_json()
    pilot = read_run_records(store, args.pilot).as_json() if args.pilot is not None else None
    plans = [_plan_rule(rule, policy, baseline, pilot, args) for rule in policy.rules]
    if args.json:
        emit_json(plans)
        return 0
    for plan in plans:
        print(_plan_line(plan))
    return 0
