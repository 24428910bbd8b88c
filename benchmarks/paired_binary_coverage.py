"""Coverage and width of the paired pass/fail intervals, cell by cell.

For each n, discordance and true difference the joint distribution of a pair is
fixed: the baseline passes with probability 0.7, a pair is candidate-only with
probability (discordance + difference) / 2 and baseline-only with
(discordance - difference) / 2, and the rest of the mass is split between
both-pass and both-fail so that the baseline's rate stays 0.7. Cells that no
distribution can realise (a difference larger than the discordance) are
skipped and listed. Each cell draws ``--replications`` 2x2 tables and reports,
per method, the share of intervals that contain the true difference (with its
Monte Carlo standard error), the mean width, and the share of zero-width
intervals; Tango's coverage is also computed exactly (it depends on the two
discordant counts only), and Newcombe's too for n <= 100.

A second table is what a release gate risks: the exact probability that a
non-inferiority rule passes when the candidate is worse by exactly the margin
(nominal: at most 2.5% for a 95% interval), for a loss that is one-way (the
candidate breaks cases and fixes none) or two-way (it breaks twice as many as it
fixes), at baseline rates 0.5, 0.7 and 0.9 and n up to 100 (every 2x2 table
enumerated).

    python benchmarks/paired_binary_coverage.py                # both tables, about 20 s on 2 cores
    python benchmarks/paired_binary_coverage.py --replications 20000 --json
"""

from __future__ import annotations

import argparse
import json
import math
from itertools import product

import numpy as np
from scipy.special import gammaln, xlogy

from oloproof.stats._paired_binary import newcombe_bounds, tango_bounds

NS = (13, 30, 100, 1000)
BASELINE_RATE = 0.7
DISCORDANCES = (0.0, 0.05, 0.2, 0.3)
DIFFERENCES = (0.0, 0.1)


def cell_probabilities(discordance: float, difference: float) -> tuple[float, float, float, float] | None:
    """(both, candidate-only, baseline-only, neither) probabilities, or None if impossible."""
    candidate_only = (discordance + difference) / 2.0
    baseline_only = (discordance - difference) / 2.0
    both = BASELINE_RATE - baseline_only
    neither = 1.0 - both - candidate_only - baseline_only
    cells = (both, candidate_only, baseline_only, neither)
    if min(cells) < -1e-12:
        return None
    return tuple(max(0.0, p) for p in cells)  # type: ignore[return-value]


def exact_tango_coverage(n: int, probabilities: tuple[float, ...], difference: float, confidence: float) -> float:
    """Exact coverage of Tango's interval: a sum over the two discordant counts."""
    _, p_b, p_c, _ = probabilities
    b = np.arange(n + 1, dtype=float)[:, None]
    c = np.arange(n + 1, dtype=float)[None, :]
    rest = n - b - c
    ok = rest >= 0
    rest = np.maximum(rest, 0.0)
    log_pmf = (gammaln(n + 1.0) - gammaln(b + 1.0) - gammaln(c + 1.0) - gammaln(rest + 1.0)
               + xlogy(b, p_b) + xlogy(c, p_c) + xlogy(rest, 1.0 - p_b - p_c))
    mass = np.where(ok, np.exp(log_pmf), 0.0)
    # The bounds are only needed where there is mass (what is left out is < 1e-12).
    keep = np.nonzero(mass > 1e-18)
    low, high = tango_bounds(np.broadcast_to(b, mass.shape)[keep], np.broadcast_to(c, mass.shape)[keep],
                             n, confidence)
    covered = (low <= difference + 1e-12) & (difference - 1e-12 <= high)
    return float(np.sum(mass[keep] * covered))


def exact_newcombe_coverage(n: int, probabilities: tuple[float, ...], difference: float, confidence: float) -> float:
    """Exact coverage of Newcombe's method 10 by enumerating every 2x2 table."""
    tables = [(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a) for c in range(n + 1 - a - b)]
    counts = np.array(tables, dtype=float)
    log_pmf = gammaln(n + 1.0) - gammaln(counts + 1.0).sum(axis=1)
    for column, p in enumerate(probabilities):
        log_pmf += xlogy(counts[:, column], p)
    low, high = newcombe_bounds(*counts.T, confidence=confidence)
    covered = (low <= difference + 1e-12) & (difference - 1e-12 <= high)
    return float(np.sum(np.exp(log_pmf) * covered))


def all_tables(n: int) -> np.ndarray:
    """Every 2x2 table of n pairs, as rows (both, candidate-only, baseline-only, neither)."""
    rows = [(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a) for c in range(n + 1 - a - b)]
    return np.array(rows, dtype=float)


def false_pass_rows(confidence: float) -> list[dict]:
    """Exact P(non-inferiority PASS) when the true difference is exactly -margin."""
    rows = []
    for n in (13, 30, 60, 100):
        tables = all_tables(n)
        lows = {"tango": tango_bounds(tables[:, 1], tables[:, 2], n, confidence)[0],
                "newcombe10": newcombe_bounds(*tables.T, confidence=confidence)[0]}
        log_base = gammaln(n + 1.0) - gammaln(tables + 1.0).sum(axis=1)
        for rate, margin, split in product((0.5, 0.7, 0.9), (0.05, 0.1), ("one-way", "two-way")):
            candidate_only, baseline_only = (0.0, margin) if split == "one-way" else (margin, 2 * margin)
            both = rate - baseline_only
            cells = (both, candidate_only, baseline_only, 1.0 - both - candidate_only - baseline_only)
            log_pmf = log_base + sum(xlogy(tables[:, j], p) for j, p in enumerate(cells))
            mass = np.exp(log_pmf)
            row = {"n": n, "baseline_rate": rate, "margin": margin, "loss": split}
            for name, low in lows.items():
                row[f"{name}_false_pass"] = 100.0 * float(mass[low > -margin].sum())
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=2000)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    level, reps = args.confidence, args.replications
    se = 100.0 * math.sqrt(level * (1.0 - level) / reps)
    rows, skipped = [], []
    for n, discordance, difference in product(NS, DISCORDANCES, DIFFERENCES):
        probabilities = cell_probabilities(discordance, difference)
        if probabilities is None:
            skipped.append(f"n={n} discordance={discordance:.0%} difference={difference:+.0%}")
            continue
        rng = np.random.default_rng([args.seed, n, round(discordance * 100), round(difference * 100)])
        tables = rng.multinomial(n, probabilities, size=reps).T
        intervals = {
            "tango": tango_bounds(tables[1], tables[2], n, level),
            "newcombe10": newcombe_bounds(*tables, confidence=level),
        }
        row = {"n": n, "discordance": discordance, "difference": difference}
        for name, (low, high) in intervals.items():
            covered = (low <= difference + 1e-12) & (difference - 1e-12 <= high)
            row[f"{name}_coverage"] = 100.0 * float(covered.mean())
            row[f"{name}_width"] = float((high - low).mean())
            row[f"{name}_zero_width"] = 100.0 * float(((high - low) < 1e-9).mean())
        row["tango_exact"] = 100.0 * exact_tango_coverage(n, probabilities, difference, level)
        row["newcombe10_exact"] = (100.0 * exact_newcombe_coverage(n, probabilities, difference, level)
                                   if n <= 100 else None)
        row["width_ratio"] = row["tango_width"] / row["newcombe10_width"] if row["newcombe10_width"] > 0 else None
        rows.append(row)
    gate = false_pass_rows(level)
    if args.json:
        print(json.dumps({"replications": reps, "mc_se_points": se, "rows": rows, "skipped": skipped,
                          "false_pass": gate}, indent=2))
        return
    floor = 100.0 * level - 2.0 * se
    print(f"{reps} replications per cell; Monte Carlo SE {se:.2f} points; floor {floor:.2f}% (nominal - 2 SE)")
    print("| n | discordance | difference | Tango | Tango exact | Newcombe 10 | Newcombe exact "
          "| Newcombe zero-width | width Tango / Newcombe |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        exact = "" if r["newcombe10_exact"] is None else f"{r['newcombe10_exact']:.2f}%"
        ratio = "" if r["width_ratio"] is None else f"{r['width_ratio']:.3f}"
        print(f"| {r['n']} | {r['discordance']:.0%} | {r['difference']:+.0%} | {r['tango_coverage']:.2f}% "
              f"| {r['tango_exact']:.2f}% | {r['newcombe10_coverage']:.2f}% | {exact} "
              f"| {r['newcombe10_zero_width']:.1f}% | {ratio} |")
    worst = {name: min(rows, key=lambda r: r[f"{name}_coverage"]) for name in ("tango", "newcombe10")}
    for name, r in worst.items():
        print(f"worst {name}: {r[f'{name}_coverage']:.2f}% at n={r['n']}, discordance {r['discordance']:.0%}, "
              f"difference {r['difference']:+.0%}")
    print("skipped (no distribution has a difference larger than its discordance): " + "; ".join(skipped))
    tail = 100.0 * (1.0 - level) / 2.0
    print()
    print(f"Non-inferiority PASS when the candidate is worse by exactly the margin (exact; nominal <= {tail:.1f}%)")
    print("| n | baseline rate | margin | loss | Tango | Newcombe 10 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in gate:
        print(f"| {r['n']} | {r['baseline_rate']:.0%} | {r['margin'] * 100:.0f} points | {r['loss']} "
              f"| {r['tango_false_pass']:.2f}% | {r['newcombe10_false_pass']:.2f}% |")
    for name in ("tango", "newcombe10"):
        r = max(gate, key=lambda row: row[f"{name}_false_pass"])
        print(f"highest {name}: {r[f'{name}_false_pass']:.2f}% at n={r['n']}, baseline rate {r['baseline_rate']:.0%}, "
              f"margin {r['margin'] * 100:.0f} points, {r['loss']} loss")


if __name__ == "__main__":
    main()
