"""Decision rules on a paired interval, and how many pairs a rule needs."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from oloproof._exceptions import StatsError
from oloproof.stats._betting import (
    log_mean_wealth,
    plug_in_bets,
    rejection_level,
    shuffled_copies,
)
from oloproof.stats._interval import Interval
from oloproof.stats._paired import to_unit_differences
from oloproof.stats._validation import (
    check_confidence,
    check_finite,
    check_int,
    check_unit_values,
)

__all__ = ["DECISION_KINDS", "decide_rule", "required_pairs"]

DECISION_KINDS = ("equivalence", "non-inferiority", "superiority")

# The planning simulations use the same number of orderings as the default
# paired interval, so the simulated rule is the rule that will be applied.
_ORDERINGS = 8
# Simulated datasets are processed in blocks of at most this many values, which
# bounds memory (a few arrays of this size) whatever n and the simulation count.
_BLOCK_VALUES = 1 << 20
# Fewest simulations used at any n, however large (see required_pairs).
_MIN_SIMULATIONS = 100
# Above this many simulated values per n, the simulation count is reduced.
_SIMULATION_BUDGET = 1_000_000


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


def _candidate_model(
    baseline: np.ndarray, true_difference: float
) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """Return a function that turns resampled baseline scores into candidate scores.

    The expected difference under the bootstrap distribution is exactly
    ``true_difference``, and the candidate changes as few cases as that allows.
    """
    mean = float(baseline.mean())
    if not -mean - 1e-12 <= true_difference <= (1.0 - mean) + 1e-12:
        raise StatsError(
            f"true_difference {true_difference} is impossible for a baseline with mean "
            f"{mean:.4f}: scores are bounded in [0, 1]"
        )
    if true_difference == 0.0:
        return lambda base, rng: base
    if np.all((baseline == 0.0) | (baseline == 1.0)):
        # Binary scores: flip failures to successes (or the reverse) with the
        # probability that moves the mean by exactly true_difference.
        if true_difference > 0.0:
            flip = min(1.0, true_difference / (1.0 - mean)) if mean < 1.0 else 0.0
            return lambda base, rng: np.where(
                (base == 0.0) & (rng.random(base.shape) < flip), 1.0, base
            )
        flip = min(1.0, -true_difference / mean) if mean > 0.0 else 0.0
        return lambda base, rng: np.where(
            (base == 1.0) & (rng.random(base.shape) < flip), 0.0, base
        )

    # Continuous scores: shift every case by s and clip to [0, 1]; s is found by
    # bisection so that the clipped mean moves by exactly true_difference (the
    # clipped shift is monotone in s).
    def moved(shift: float) -> float:
        return float(np.clip(baseline + shift, 0.0, 1.0).mean()) - mean

    below, above = (0.0, 1.0) if true_difference > 0.0 else (-1.0, 0.0)
    for _ in range(60):
        middle = 0.5 * (below + above)
        if moved(middle) < true_difference:
            below = middle
        else:
            above = middle
    shift = 0.5 * (below + above)
    return lambda base, rng: np.clip(base + shift, 0.0, 1.0)


def required_pairs(
    baseline_values: Iterable[float],
    *,
    true_difference: float,
    margin: float,
    kind: str,
    confidence: float = 0.95,
    power: float = 0.8,
    seed: int = 0,
    max_n: int = 20000,
    simulations: int = 200,
) -> int | None:
    """Estimate how many paired cases a decision rule needs, by simulation.

    Each simulated evaluation draws ``n`` baseline scores with replacement from
    ``baseline_values`` and builds the candidate's scores on the same cases so
    that the expected difference is ``true_difference``:

    * binary baselines (every value 0 or 1): failures flip to successes (or, for
      a negative difference, successes to failures) at the rate that gives the
      difference; no case moves the other way;
    * continuous baselines: every score is shifted by the same amount and clipped
      to [0, 1], the shift chosen so the clipped mean moves by the difference.

    Both models change as few cases as possible, so the differences are as
    consistent as the target allows. Real systems also disagree in both
    directions, which widens the interval: read the result as a lower bound.

    The rule is then applied exactly as :func:`decide_rule` would apply it to
    :func:`paired_difference_interval` with its default 8 orderings (up to the
    interval's 1e-7 bisection tolerance). ``n`` is doubled until the rule passes
    in at least ``power`` of the simulations, then bisected. Each ``n`` uses its
    own fixed random stream, so the result is deterministic for a seed.

    Monte-Carlo error: the estimated pass rate has a standard error of about
    ``sqrt(power (1 - power) / simulations)`` (0.028 for 0.8 and 200). Where
    ``n * simulations`` exceeds 1,000,000 the count drops to
    ``max(100, 1,000,000 // n)`` (SE 0.04 at 0.8) to bound the run time. Near
    the answer the pass rate changes slowly with ``n``, so the returned ``n``
    moves by roughly 5-10% from one seed to another; at the returned ``n`` the
    true power can be a few points below ``power``.

    Args:
        baseline_values: Observed baseline scores, each in [0, 1].
        true_difference: Assumed true mean difference (candidate - baseline), as
            a fraction.
        margin: Non-negative margin of the rule, as a fraction (0.05, not 5).
        kind: ``"non-inferiority"``, ``"superiority"`` or ``"equivalence"``.
        confidence: Confidence of the interval the rule uses.
        power: Required probability of a PASS, in (0, 1).
        seed: Seed of the simulation.
        max_n: Largest number of pairs to consider.
        simulations: Simulated evaluations per ``n`` (fewer at large ``n``).

    Returns:
        The smallest ``n`` found to reach ``power``, or ``None`` if ``max_n``
        pairs do not suffice or the rule cannot pass for this difference.

    Raises:
        StatsError: If an argument is invalid, the difference is impossible for
            the baseline, or an equivalence margin is 0.
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
    model = _candidate_model(baseline, true_difference)

    # When the true difference lies on the wrong side of the margin, the
    # interval's guarantee caps the pass rate at 1 - confidence, whatever n.
    hopeless = (
        (kind == "non-inferiority" and true_difference <= -margin)
        or (kind == "superiority" and true_difference <= margin)
        or (kind == "equivalence" and abs(true_difference) >= margin)
    )
    if hopeless and target > 1.0 - level:
        return None

    # PASS needs low > lower_edge (and high < margin for equivalence). On the
    # (d + 1) / 2 scale, low > a exactly when the "above" gambler rejects the
    # mean (a + 1) / 2, because its wealth is monotone in the mean; one wealth
    # evaluation per dataset replaces a full interval.
    lower_edge = -margin if kind != "superiority" else margin
    low_point = (lower_edge + 1.0) / 2.0
    high_point = (margin + 1.0) / 2.0 if kind == "equivalence" else None
    threshold = rejection_level(level)

    def passes(n: int) -> bool:
        runs = simulations
        if n * simulations > _SIMULATION_BUDGET:
            runs = min(simulations, max(_MIN_SIMULATIONS, _SIMULATION_BUDGET // n))
        needed = math.ceil(target * runs)
        rng = np.random.default_rng([seed, n])
        block = max(1, _BLOCK_VALUES // (_ORDERINGS * n))
        wins = losses = 0
        # Stop as soon as the verdict at this n is settled either way.
        while wins < needed and losses <= runs - needed:
            size = min(block, runs - wins - losses)
            base = baseline[rng.integers(0, baseline.size, size=(size, n))]
            unit = to_unit_differences(model(base, rng), base)
            ordered = shuffled_copies(unit, _ORDERINGS, rng)
            bets = plug_in_bets(ordered, level)
            ok = np.ones(size, dtype=bool)
            if low_point >= 1.0:
                ok[:] = False
            elif low_point >= 0.0:
                ok &= log_mean_wealth(ordered, bets, low_point, upper=True) >= threshold
            if high_point is not None and high_point <= 1.0:
                ok &= log_mean_wealth(ordered, bets, high_point, upper=False) >= threshold
            wins += int(ok.sum())
            losses += size - int(ok.sum())
        return wins >= needed

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
