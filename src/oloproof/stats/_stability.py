"""How many repeats make a gate's verdict on a sampled system repeatable.

A gate pairs a candidate's case means with a stored baseline's. When the candidate
samples (an LLM at temperature), two runs of the very same candidate can get
different verdicts: the gate then flips on noise. Repeats average each case's
samples, and so shrink that noise.

`stable_repeats` simulates two runs of the candidate at ``r`` repeats against the
baseline as stored, and finds the fewest ``r`` at which their verdicts differ in at
most ``flip_rate`` of the simulations. Each case's samples are drawn from what the
runs measured:

* pass/fail samples: the case's pass probability from an empirical-Bayes
  beta-binomial posterior (the beta prior matched by moments to the cases' spread,
  see `oloproof.stats.variance_components`), so a case that passed all its few
  repeats is not taken to be certain, nor every case to be as unsure as the least
  measured one;
* scores: the case's own samples, resampled with replacement.

The candidate's cases are drawn from a pilot run of it where one is given, else from
the baseline's (an unchanged system: what the gate sees when nothing changed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from oloproof._exceptions import StatsError
from oloproof.stats._paired_binary import is_pass_fail, paired_interval
from oloproof.stats._planning import decide_rule
from oloproof.stats._repeats import variance_components

__all__ = ["STABLE_FLIP_RATE", "StableRepeats", "flip_rate", "stable_repeats"]

STABLE_FLIP_RATE = 0.025
"""The most simulated pairs of identical runs whose verdicts may differ at the repeats
recommended: half the 5% a user would call a flaky gate, for the simulation's own error."""

_MAX_REPEATS = 32


@dataclass(frozen=True)
class StableRepeats:
    """The repeats at which a gate's verdict repeats, and what it is there."""

    repeats: int | None
    """The fewest repeats (at most 32) whose simulated flip rate is within the target;
    ``None``: none is."""
    flip_rate: float
    """The simulated share of pairs of identical runs whose verdicts differ, at ``repeats``
    (at 32 where none is within the target)."""
    verdict: str
    """The verdict the simulated runs gave most often there."""


class _Sampler:
    """Draws a run's case means at ``r`` repeats from its measured samples."""

    def __init__(self, samples: Sequence[Sequence[float]]) -> None:
        self.samples = [np.asarray(values, dtype=float) for values in samples]
        self.pass_fail = all(is_pass_fail(values) for values in self.samples)
        if self.pass_fail:
            passes = np.array([values.sum() for values in self.samples])
            counts = np.array([values.size for values in self.samples], dtype=float)
            mean = float(passes.sum() / counts.sum())
            share = variance_components([values.tolist() for values in self.samples])
            spread = share.between if share is not None else 0.0
            total = mean * (1 - mean) / spread - 1 if spread > 0 else 1e6  # the beta's a + b
            total = float(np.clip(total, 0.2, 1e6))
            self.alpha = mean * total + passes
            self.beta = (1 - mean) * total + counts - passes

    def system(self, rng: np.random.Generator) -> np.ndarray | None:
        """One draw of the system's pass probabilities (``None`` for scores): both runs
        of a simulated pair are of this one system."""
        if not self.pass_fail:
            return None
        return rng.beta(np.maximum(self.alpha, 1e-9), np.maximum(self.beta, 1e-9))

    def draw(self, rates: np.ndarray | None, repeats: int, rng: np.random.Generator) -> np.ndarray:
        """One run's case means: each case sampled ``repeats`` times."""
        if rates is not None:
            return rng.binomial(repeats, rates) / repeats
        return np.array([rng.choice(values, size=repeats).mean() for values in self.samples])


def flip_rate(candidate: Sequence[Sequence[float]], baseline: Sequence[float], repeats: int, *, kind: str,
              margin: float, confidence: float = 0.95, simulations: int = 200,
              seed: int = 0) -> tuple[float, str]:  # fmt: skip
    """The share of simulated pairs of identical candidate runs at ``repeats`` whose
    verdicts against ``baseline`` differ, and the verdict they gave most often.

    Args:
        candidate: Each case's measured samples of the candidate, each in [0, 1].
        baseline: The stored baseline's case means, on the same cases in the same order.
        repeats: The candidate's repeats in the simulated runs.
        kind: The rule's kind (see `oloproof.stats.decide_rule`).
        margin: The rule's margin, as a fraction.
        confidence: The gate's confidence.
        simulations: Pairs of runs simulated.
        seed: Seed of the draws.

    Raises:
        StatsError: No cases, or ``candidate`` and ``baseline`` differ in length.
    """
    if not candidate or len(candidate) != len(baseline):
        raise StatsError("flip_rate needs the candidate's samples and the baseline's means on the same cases")
    sampler, base = _Sampler(candidate), np.asarray(baseline, dtype=float)
    rng = np.random.default_rng(seed)
    flips, verdicts = 0, {"PASS": 0, "FAIL": 0, "INSUFFICIENT_EVIDENCE": 0}
    for _ in range(simulations):
        rates = sampler.system(rng)
        pair = [decide_rule(paired_interval(sampler.draw(rates, repeats, rng), base, confidence), kind=kind,
                            margin=margin)[0] for _ in range(2)]  # fmt: skip
        flips += pair[0] != pair[1]
        for verdict in pair:
            verdicts[verdict] += 1
    return flips / simulations, max(verdicts, key=lambda name: verdicts[name])


def stable_repeats(candidate: Sequence[Sequence[float]], baseline: Sequence[float], *, kind: str, margin: float,
                   confidence: float = 0.95, target: float = STABLE_FLIP_RATE, simulations: int = 200,
                   seed: int = 0) -> StableRepeats:  # fmt: skip
    """The fewest repeats at which two identical candidate runs get the same verdict
    against ``baseline`` in all but ``target`` of the simulations (see `flip_rate`).

    Repeats 1, 2, 4, … 32 are tried until one is within the target, then the count
    between it and the last one that was not is bisected; each count is simulated
    with the same seed.
    """
    def rate(repeats: int) -> tuple[float, str]:
        return flip_rate(candidate, baseline, repeats, kind=kind, margin=margin, confidence=confidence,
                         simulations=simulations, seed=seed)  # fmt: skip

    low, high = 0, 1  # `low` is too few (0: none tried yet), `high` the count tried
    result = rate(high)
    while result[0] > target:
        if high == _MAX_REPEATS:
            return StableRepeats(repeats=None, flip_rate=result[0], verdict=result[1])
        low, high = high, min(2 * high, _MAX_REPEATS)
        result = rate(high)
    while high - low > 1 and low > 0:
        middle = (low + high) // 2
        tried = rate(middle)
        if tried[0] <= target:
            high, result = middle, tried
        else:
            low = middle
    return StableRepeats(repeats=high, flip_rate=result[0], verdict=result[1])
