"""Does a gate's verdict on a sampled candidate repeat at the repeats `oloproof plan` recommends?

Each simulated system is ``--cases`` cases with their own pass probabilities
(Beta(0.4, 0.4): most cases nearly always or nearly never pass, some in between).
Its baseline is stored at 5 repeats; `oloproof.stats.stable_repeats` (what `plan`
runs) recommends repeats from those samples alone; then two runs of the true
system at the recommended repeats, and at one repeat, are gated against the stored
baseline with a non-inferiority rule, ``--pairs`` times, counting the pairs whose
verdicts differ.

    python benchmarks/gate_stability.py                  # 20 systems of 100 cases, about 2 minutes on 2 cores
    python benchmarks/gate_stability.py --systems 50 --json
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from oloproof import stats


def flips(rates: np.ndarray, baseline: np.ndarray, repeats: int, margin: float, rng: np.random.Generator,
          pairs: int) -> float:  # fmt: skip
    """The share of pairs of runs of the true system whose verdicts differ."""
    count = 0
    for _ in range(pairs):
        verdicts = [stats.decide_rule(stats.paired_interval(rng.binomial(repeats, rates) / repeats, baseline),
                                      kind="non-inferiority", margin=margin)[0] for _ in range(2)]  # fmt: skip
        count += verdicts[0] != verdicts[1]
    return count / pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--margin", type=float, default=10.0, help="the rule's margin, in points")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng, margin = np.random.default_rng(args.seed), args.margin / 100
    rows = []
    for system in range(args.systems):
        rates = rng.beta(0.4, 0.4, size=args.cases)
        samples = (rng.random((args.cases, 5)) < rates[:, None]).astype(float)
        baseline = samples.mean(axis=1)
        stable = stats.stable_repeats(samples.tolist(), baseline.tolist(), kind="non-inferiority", margin=margin,
                                      seed=system)  # fmt: skip
        rows.append({"recommended": stable.repeats, "simulated": stable.flip_rate,
                     "at_recommended": flips(rates, baseline, stable.repeats, margin, rng, args.pairs)
                     if stable.repeats else None,
                     "at_one": flips(rates, baseline, 1, margin, rng, args.pairs)})  # fmt: skip
    kept = [row["at_recommended"] for row in rows if row["at_recommended"] is not None]
    summary = {"systems": args.systems, "cases": args.cases, "margin": args.margin,
               "recommended": [row["recommended"] for row in rows],
               "flips_at_recommended_mean": float(np.mean(kept)) if kept else None,
               "flips_at_recommended_max": max(kept) if kept else None,
               "flips_at_one_mean": float(np.mean([row["at_one"] for row in rows]))}  # fmt: skip
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"{args.systems} systems of {args.cases} cases, non-inferiority margin {args.margin:g} points, "
          f"{args.pairs} pairs of identical runs each")
    print(f"recommended repeats: {summary['recommended']}")
    print(f"verdicts differ at the recommended repeats: {summary['flips_at_recommended_mean']:.1%} of pairs "
          f"on average (worst system {summary['flips_at_recommended_max']:.1%})")
    print(f"verdicts differ at one repeat: {summary['flips_at_one_mean']:.1%} of pairs on average")


if __name__ == "__main__":
    main()
