"""Decision rules on a paired interval, and how many pairs a rule needs.

:func:`required_pairs` sizes an evaluation for the interval the gate applies
(:func:`~oloproof.stats.paired_interval`): for pass/fail metrics its figure is
an exact power calculation over the 2x2 table, for scores a simulation of the
score interval itself. Either way it needs to know how often the two systems
disagree, because that, not the pass rate, is what sets the width of a paired
interval: 13 cases on which both systems agree say little, and a candidate that
fixes 5% of cases while breaking another 5% needs several hundred pairs to be
shown no worse by 5 points.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
from scipy.special import gammaln, ndtri, xlog1py, xlogy

from oloproof._exceptions import StatsError
from oloproof.stats._interval import Interval
from oloproof.stats._paired_binary import (
    is_pass_fail,
    paired_counts,
    paired_interval,
    tango_statistic,
)
from oloproof.stats._validation import (
    check_confidence,
    check_finite,
    check_int,
    check_unit_values,
)

__all__ = ["DECISION_KINDS", "binary_pass_probability", "decide_rule", "required_pairs"]

DECISION_KINDS = ("equivalence", "non-inferiority", "superiority")

# Seed of the score interval's orderings in the simulations: the one `compare`
# uses, so the simulated rule is the rule the gate applies.
_GATE_SEED = 0
# Simulated score datasets are drawn in blocks of this many.
_BLOCK = 64
# Fewest simulations used at any n, however large (see required_pairs).
_MIN_SIMULATIONS = 100
# Above this many simulated values per n, the simulation count is reduced.
_SIMULATION_BUDGET = 1_000_000
# The exact pass/fail power sums the trinomial over this many standard
# deviations (plus a few counts) either side of each discordant count's mean;
# the mass left outside is below 1e-20.
_TAIL_SDS = 10.0


def _check_kind(kind: str) -> str:
    if kind not in DECISION_KINDS:
        raise StatsError(f"kind must be one of {', '.join(DECISION_KINDS)}; got {kind!r}")
    return kind


def _check_margin(margin: float) -> float:
    value = check_finite(margin, "margin")
    if value < 0.0:
        raise StatsError(f"margin must be at least 0 (a fraction, not points), got {value}")
    return value


def decide_rule(interval: Interval, *, kind: str, margin: float) -> tuple[str, str]:
    """Apply a paired decision rule to an interval for ``mean(candidate - baseline)``.

    Args:
        interval: Interval for the mean difference, as a fraction (not points).
        kind: ``"non-inferiority"``, ``"superiority"`` or ``"equivalence"``.
        margin: Non-negative margin in the units of the interval.

    Returns:
        ``(verdict, reason)``. The verdict is ``"PASS"``, ``"FAIL"`` or
        ``"INSUFFICIENT_EVIDENCE"``. Reasons:

        * non-inferiority: PASS ``interval_above_margin`` when low > -margin;
          FAIL ``interval_below_margin`` when high < -margin;
        * superiority: PASS ``interval_above_margin`` when low > margin;
          FAIL ``interval_below_margin`` when high <= margin;
        * equivalence: PASS ``interval_within_margin`` when the interval lies
          inside (-margin, margin); FAIL ``interval_outside_margin`` when it lies
          entirely outside;
        * otherwise INSUFFICIENT_EVIDENCE ``interval_overlaps_margin``.

    Raises:
        StatsError: If ``kind`` is unknown or ``margin`` is negative or not finite.
    """
    kind = _check_kind(kind)
    margin = _check_margin(margin)
    low, high = interval.low, interval.high
    if kind == "non-inferiority":
        if low > -margin:
            return "PASS", "interval_above_margin"
        if high < -margin:
            return "FAIL", "interval_below_margin"
    elif kind == "superiority":
        if low > margin:
            return "PASS", "interval_above_margin"
        if high <= margin:
            return "FAIL", "interval_below_margin"
    else:
        if -margin < low and high < margin:
            return "PASS", "interval_within_margin"
        if high <= -margin or low >= margin:
            return "FAIL", "interval_outside_margin"
    return "INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"


def _check_discordance(discordance: float, true_difference: float) -> float:
    value = check_finite(discordance, "discordance")
    if not 0.0 <= value <= 1.0:
        raise StatsError(f"discordance must be a fraction in [0, 1], got {value}")
    if abs(true_difference) > value + 1e-12:
        raise StatsError(
            f"a true difference of {true_difference:+.4f} needs at least {abs(true_difference):.4f} "
            f"of the cases to be discordant; got a discordance of {value:.4f}"
        )
    return value


def _hopeless(kind: str, true_difference: float, margin: float) -> bool:
    # When the true difference lies on the wrong side of the margin, the
    # interval's coverage caps the pass rate at about 1 - confidence, whatever n.
    return (
        (kind == "non-inferiority" and true_difference <= -margin)
        or (kind == "superiority" and true_difference <= margin)
        or (kind == "equivalence" and abs(true_difference) >= margin)
    )


def _count_range(n: int, p: float) -> np.ndarray:
    if p <= 0.0:
        return np.zeros(1)
    mean, sd = n * p, math.sqrt(n * p * (1.0 - p))
    low = max(0, math.floor(mean - _TAIL_SDS * sd) - 5)
    high = min(n, math.ceil(mean + _TAIL_SDS * sd) + 5)
    return np.arange(low, high + 1, dtype=float)


def _low_above(point: float, b: np.ndarray, c: np.ndarray, n: int, z: float) -> np.ndarray:
    """Whether the pass/fail interval's lower bound exceeds ``point``, per table."""
    # Z decreases in delta and the lower bound is where it crosses +z, so the
    # bound exceeds a point exactly when Z at that point is still above z.
    if point < -1.0:
        return np.ones(np.broadcast(b, c).shape, dtype=bool)
    if point >= 1.0:
        return np.zeros(np.broadcast(b, c).shape, dtype=bool)
    return tango_statistic(point, b, c, n) > z


def _high_below(point: float, b: np.ndarray, c: np.ndarray, n: int, z: float) -> np.ndarray:
    """Whether the pass/fail interval's upper bound is below ``point``, per table."""
    if point > 1.0:
        return np.ones(np.broadcast(b, c).shape, dtype=bool)
    if point <= -1.0:
        return np.zeros(np.broadcast(b, c).shape, dtype=bool)
    return tango_statistic(point, b, c, n) < -z


def binary_pass_probability(
    n: int,
    *,
    discordance: float,
    true_difference: float,
    margin: float,
    kind: str,
    confidence: float = 0.95,
) -> float:
    """Exact probability that a rule passes on ``n`` pass/fail pairs.

    The pairs are independent; each is candidate-only with probability
    ``(discordance + true_difference) / 2``, baseline-only with
    ``(discordance - true_difference) / 2``, and concordant otherwise. The rule
    is applied as :func:`decide_rule` applies it to
    :func:`~oloproof.stats.paired_binary_interval`, which depends on the two
    discordant counts and ``n`` only; so the probability is a sum over the
    trinomial distribution of those counts (truncated where the mass left out
    is below 1e-20), and how the concordant pairs split between both-pass and
    both-fail, i.e. the pass rate, does not enter.

    Args:
        n: Number of pairs, at least 1.
        discordance: Probability that a pair disagrees, in [0, 1], at least
            ``abs(true_difference)``.
        true_difference: Candidate minus baseline pass rate, as a fraction.
        margin: Non-negative margin of the rule, as a fraction.
        kind: ``"non-inferiority"``, ``"superiority"`` or ``"equivalence"``.
        confidence: Confidence of the interval the rule uses.

    Returns:
        The probability of ``PASS``, in [0, 1].

    Raises:
        StatsError: If an argument is invalid or the discordance cannot carry
            the difference.
    """
    n = check_int(n, "n", 1)
    true_difference = check_finite(true_difference, "true_difference")
    discordance = _check_discordance(discordance, true_difference)
    kind = _check_kind(kind)
    margin = _check_margin(margin)
    level = check_confidence(confidence)
    z = float(ndtri(0.5 + level / 2.0))
    p_candidate = max(0.0, (discordance + true_difference) / 2.0)
    p_baseline = max(0.0, (discordance - true_difference) / 2.0)
    b = _count_range(n, p_candidate)[:, np.newaxis]
    c = _count_range(n, p_baseline)[np.newaxis, :]
    rest = n - b - c
    possible = rest >= 0
    rest = np.maximum(rest, 0.0)
    log_pmf = (
        gammaln(n + 1.0) - gammaln(b + 1.0) - gammaln(c + 1.0) - gammaln(rest + 1.0)
        + xlogy(b, p_candidate) + xlogy(c, p_baseline) + xlog1py(rest, -(p_candidate + p_baseline))
    )
    mass = np.where(possible, np.exp(log_pmf), 0.0)
    if kind == "non-inferiority":
        passing = _low_above(-margin, b, c, n, z)
    elif kind == "superiority":
        passing = _low_above(margin, b, c, n, z)
    else:
        passing = _low_above(-margin, b, c, n, z) & _high_below(margin, b, c, n, z)
    return float(min(1.0, np.sum(mass * passing)))


def _shift_to(candidate: np.ndarray, baseline: np.ndarray, true_difference: float) -> float:
    """The shift ``s`` with ``mean(clip(candidate + s, 0, 1) - baseline) = true_difference``."""
    def moved(shift: float) -> float:
        return float(np.clip(candidate + shift, 0.0, 1.0).mean() - baseline.mean())

    if not moved(-1.0) - 1e-12 <= true_difference <= moved(1.0) + 1e-12:
        raise StatsError(
            f"true_difference {true_difference} is impossible for a baseline with mean "
            f"{baseline.mean():.4f}: scores are bounded in [0, 1]"
        )
    # The clipped mean is non-decreasing in the shift: bisection.
    below, above = -1.0, 1.0
    for _ in range(60):
        middle = 0.5 * (below + above)
        if moved(middle) < true_difference:
            below = middle
        else:
            above = middle
    return 0.5 * (below + above)


Sampler = Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]]


def _score_model(
    baseline: np.ndarray, pilot: np.ndarray | None, discordance: float | None, true_difference: float
) -> Sampler:
    """A sampler of ``(candidate, baseline)`` score arrays of shape ``(size, n)``.

    With pilot values, the observed pairs are resampled whole, the candidate's
    scores shifted (and clipped) so that the mean difference is the assumed one:
    the spread of the differences is the pilot's. Without, each case keeps the
    baseline's score except that a ``discordance`` fraction are redrawn from the
    baseline's scores, before the same shift.
    """
    if pilot is not None:
        shift = _shift_to(pilot, baseline, true_difference)

        def from_pilot(rng: np.random.Generator, size: int, n: int) -> tuple[np.ndarray, np.ndarray]:
            index = rng.integers(0, baseline.size, size=(size, n))
            return np.clip(pilot[index] + shift, 0.0, 1.0), baseline[index]

        return from_pilot
    redraw = 0.0 if discordance is None else discordance
    # A redraw leaves the expected mean where it was, so the shift is the one
    # that moves the baseline's own clipped mean by the difference.
    shift = _shift_to(baseline, baseline, true_difference)

    def redrawn(rng: np.random.Generator, size: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        base = baseline[rng.integers(0, baseline.size, size=(size, n))]
        other = baseline[rng.integers(0, baseline.size, size=(size, n))]
        changed = rng.random((size, n)) < redraw
        return np.clip(np.where(changed, other, base) + shift, 0.0, 1.0), base

    return redrawn


def _smallest_n(passes: Callable[[int], bool], max_n: int) -> int | None:
    """Double ``n`` until ``passes(n)``, then bisect between the last failure and it."""
    failed, n = 0, 1
    while not passes(n):
        if n >= max_n:
            return None
        failed, n = n, min(2 * n, max_n)
    while n - failed > 1:
        middle = (failed + n) // 2
        if passes(middle):
            n = middle
        else:
            failed = middle
    return n


def required_pairs(
    baseline_values: Iterable[float],
    *,
    true_difference: float,
    margin: float,
    kind: str,
    confidence: float = 0.95,
    power: float = 0.8,
    discordance: float | None = None,
    pilot_values: Iterable[float] | None = None,
    seed: int = 0,
    max_n: int = 20000,
    simulations: int = 200,
) -> int | None:
    """How many paired cases a decision rule needs to pass with probability ``power``.

    The rule is the one the gate applies: :func:`decide_rule` on
    :func:`~oloproof.stats.paired_interval` at ``confidence``. What the answer
    depends on most is how the two systems disagree, which has to come from
    somewhere: ``discordance`` (a stated fraction) or ``pilot_values`` (another
    run's values on the same cases as ``baseline_values``: a pilot of the
    candidate, or a second run of the baseline). Exactly one must be given.

    * Pass/fail metrics (every value 0 or 1): a pair is discordant with
      probability ``discordance``, or the pilot's share of discordant pairs
      (raised to ``abs(true_difference)`` if it is smaller, since a difference
      needs at least that many discordant cases), split between the two
      directions so that the difference is ``true_difference``. The power at
      each ``n`` is exact (:func:`binary_pass_probability`); ``seed`` and
      ``simulations`` are unused.
    * Scores: simulated. With a pilot, its pairs are resampled, the candidate's
      scores shifted so the mean difference is ``true_difference``; with a
      ``discordance``, that fraction of the baseline's resampled scores are
      redrawn from the baseline's scores, then shifted. Each simulated dataset
      gets the full score interval, so the run time grows with ``n``; the
      pass rate at each ``n`` has a standard error of about
      ``sqrt(power (1 - power) / simulations)`` (0.028 for 0.8 and 200), and
      where ``n * simulations`` exceeds 1,000,000 the count drops to
      ``max(100, 1,000,000 // n)``.

    ``n`` is doubled until the rule reaches ``power``, then bisected. The power
    of a pass/fail rule is saw-toothed in ``n`` (the counts are discrete), so a
    few ``n`` just above the answer can fall a little short of ``power``.

    Args:
        baseline_values: Observed baseline values, each in [0, 1].
        true_difference: Assumed true mean difference (candidate - baseline), as
            a fraction.
        margin: Non-negative margin of the rule, as a fraction (0.05, not 5).
        kind: ``"non-inferiority"``, ``"superiority"`` or ``"equivalence"``.
        confidence: Confidence of the interval the rule uses.
        power: Required probability of a PASS, in (0, 1).
        discordance: Fraction of cases on which the systems disagree (pass/fail)
            or on which the candidate's score changes (scores).
        pilot_values: The other run's values, paired with ``baseline_values``.
        seed: Seed of the score simulations.
        max_n: Largest number of pairs to consider.
        simulations: Simulated evaluations per ``n`` for scores (fewer at large
            ``n``).

    Returns:
        The smallest ``n`` found to reach ``power``, or ``None`` if ``max_n``
        pairs do not suffice or the rule cannot pass for this difference.

    Raises:
        StatsError: If an argument is invalid, neither or both of
            ``discordance`` and ``pilot_values`` are given, the difference is
            impossible for the baseline or the discordance, or an equivalence
            margin is 0.
    """
    baseline = check_unit_values(baseline_values, "baseline_values")
    true_difference = check_finite(true_difference, "true_difference")
    kind = _check_kind(kind)
    margin = _check_margin(margin)
    level = check_confidence(confidence)
    target = check_confidence(power, "power")
    seed = check_int(seed, "seed", 0)
    max_n = check_int(max_n, "max_n", 1)
    simulations = check_int(simulations, "simulations", 1)
    if kind == "equivalence" and margin == 0.0:
        raise StatsError("an equivalence rule needs a positive margin")
    if (discordance is None) == (pilot_values is None):
        raise StatsError("give exactly one of discordance and pilot_values")
    pilot = None
    if pilot_values is not None:
        pilot = check_unit_values(pilot_values, "pilot_values")
        if pilot.shape != baseline.shape:
            raise StatsError(
                f"pilot_values must pair with baseline_values, got {pilot.size} and {baseline.size}"
            )
    if not abs(true_difference) <= 1.0:
        raise StatsError(f"true_difference must be in [-1, 1], got {true_difference}")
    if is_pass_fail(baseline) and (pilot is None or is_pass_fail(pilot)):
        if pilot is not None:
            _, candidate_only, baseline_only, _ = paired_counts(pilot, baseline)
            share = max((candidate_only + baseline_only) / baseline.size, abs(true_difference))
        else:
            share = check_finite(discordance, "discordance")  # type: ignore[arg-type]
        share = _check_discordance(share, true_difference)
        if _hopeless(kind, true_difference, margin) and target > 1.0 - level:
            return None

        def binary_passes(n: int) -> bool:
            probability = binary_pass_probability(
                n, discordance=share, true_difference=true_difference, margin=margin,
                kind=kind, confidence=level,
            )
            return probability >= target

        return _smallest_n(binary_passes, max_n)

    if discordance is not None:
        discordance = check_finite(discordance, "discordance")
        if not 0.0 <= discordance <= 1.0:
            raise StatsError(f"discordance must be a fraction in [0, 1], got {discordance}")
    sample = _score_model(baseline, pilot, discordance, true_difference)
    if _hopeless(kind, true_difference, margin) and target > 1.0 - level:
        return None

    def score_passes(n: int) -> bool:
        runs = simulations
        if n * simulations > _SIMULATION_BUDGET:
            runs = min(simulations, max(_MIN_SIMULATIONS, _SIMULATION_BUDGET // n))
        needed = math.ceil(target * runs)
        rng = np.random.default_rng([seed, n])
        wins = losses = 0
        # Stop as soon as the verdict at this n is settled either way.
        while wins < needed and losses <= runs - needed:
            candidates, baselines = sample(rng, min(_BLOCK, runs - wins - losses), n)
            for candidate, base in zip(candidates, baselines, strict=True):
                interval = paired_interval(candidate, base, level, seed=_GATE_SEED)
                if decide_rule(interval, kind=kind, margin=margin)[0] == "PASS":
                    wins += 1
                else:
                    losses += 1
                if wins >= needed or losses > runs - needed:
                    break
        return wins >= needed

    return _smallest_n(score_passes, max_n)
