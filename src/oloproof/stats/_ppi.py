"""Prediction-powered inference (PPI++) for a mean: few human labels, many judge labels.

Angelopoulos, Duchi & Zrnic (2023), "PPI++: Efficient Prediction-Powered
Inference" (arXiv:2311.01453). A judge (an LLM, a classifier) scores every item;
humans label a uniform random sample of ``n`` of them. The judge's mean over the
``N`` unlabelled items is then corrected by the judge's error measured where
both exist:

    estimate = lam * mean(judge_unlabelled) + mean(human - lam * judge_labelled)

which is unbiased for the human mean for any fixed ``lam``, whatever the judge's
bias. ``lam`` is PPI++'s power tuning: the plug-in value that minimises the
estimate's variance, clipped to [0, 1], so that a useless judge costs nothing
(``lam = 0`` is the human-only mean) and a good one counts nearly fully.

The computation is that of ``ppi_py.ppi_mean_ci`` and ``ppi_mean_pointestimate``
of ppi-python 0.2.3 (``lam=None``, two-sided), re-derived here and checked
against it to 1e-9 on recorded cases (``scripts/reference/ppi_fixture.py``):

* ``lam = cov(human, judge_labelled) / ((1 + n/N) var(judge over all n + N))``,
  the covariance normalised by ``n``, the variance with ``ddof=1``;
* ``std = sqrt(lam^2 var(judge_unlabelled) / N + var(human - lam judge_labelled) / n)``,
  both variances with ``ddof=0``;
* the interval ``estimate +- z std``, ``z`` the normal quantile.

Unlike ppi-python, the reported interval and estimate are clipped to [0, 1],
where the values live; the unclipped numbers are kept as ``raw_*``.

Where PPI++ cannot be trusted the result falls back to the human-only interval,
named by ``fallback``: fewer than ``min_labels`` labels (the normal interval
under-covers), no unlabelled item (nothing to gain, and ``n/N`` is undefined),
a constant judge (``lam`` is 0/0), constant human labels (the plug-in variance
is 0, so the normal interval would be a point), or, in an exact fit that leaves
no variance at all, a zero standard error.

When PPI++ is used, by simulation. PPI++'s interval is a normal (Wald-type)
interval, and like Wald's interval for a proportion it is too narrow when the
variance it estimates rests on a few items: rare judge errors, or rare human
failures near a pass rate of 0.9. ``benchmarks/ppi_coverage.py`` measures it
(``docs/ppi_coverage.md``: 2,000 replications per cell, each a population of
2,000 pass/fail items, a uniform labelled sample of ``n`` and the judge on the
rest; judges: *biased* passes 35% of human failures and fails 5% of human
passes, *good* errs 3% either way, *noisy* 20% either way). Forced at every
``n``, PPI++ covered 85.2% (good judge, pass rate 0.9, n = 60), 90.0% (the same
at n = 100), 91.8% (biased, 0.7, n = 60) and 93.8% (good, 0.9, n = 300)
against a nominal 95%.

What decides is not ``n`` but how many judge errors and human failures the
labelled sample shows. So for pass/fail values PPI++ is used when the labelled
items hold at least ``min_disagreements`` (30) items where the judge and the
human disagree and at least 30 of the rarer human label, and the human-only
interval is reported otherwise, with the reason. Measured with the function
itself (``python benchmarks/ppi_coverage.py --replications 2000``, written to
``docs/ppi_coverage.md``): the reported interval covers at least 94.3% in every
cell of the nine judge and pass-rate settings at n = 60, 100, 200 and 300
(floor 94.0%), where a guard of 10 or 20 left cells at 92.6-93.9%. Values other
than 0/1 keep the plain floor of ``DEFAULT_MIN_LABELS`` (300) labels. PPI++'s
interval itself is ppi-python's, normal quantile included. The human-only
interval (Clopper-Pearson) covered at least 95.2% in every cell; the judge-only
one covered 0% with the biased judge at pass rates 0.5 and 0.7 (its mean is 7
points too high at 0.7). The target is the pass rate the items are drawn at; the
2,000 items' own pass rate is covered more often, as PPI++'s variance counts the
unlabelled items' sampling too. Pass ``min_labels=1, min_disagreements=0`` to
get PPI++ whatever the labels, knowing the table above.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

# The normal quantile straight from scipy.special (importing scipy.stats would add
# most of a second to every command's start).
from scipy.special import ndtri

from oloproof._exceptions import StatsError
from oloproof.stats._interval import Interval
from oloproof.stats._mean import mean_interval
from oloproof.stats._paired_binary import is_pass_fail
from oloproof.stats._proportion import clopper_pearson
from oloproof.stats._validation import check_confidence, check_int, check_unit_values

__all__ = [
    "DEFAULT_MIN_DISAGREEMENTS",
    "DEFAULT_MIN_LABELS",
    "PPI_FALLBACKS",
    "PPI_METHOD",
    "PPIEstimate",
    "ppi_mean_interval",
]

PPI_METHOD = "ppi++"
DEFAULT_MIN_LABELS = 300
DEFAULT_MIN_DISAGREEMENTS = 30
PPI_FALLBACKS = (
    "too_few_labels",
    "too_few_disagreements",
    "too_few_human_failures",
    "too_few_human_passes",
    "no_unlabelled",
    "judge_constant",
    "human_constant",
    "zero_standard_error",
)


@dataclass(frozen=True)
class PPIEstimate:
    """A mean estimated from human labels and judge scores, with the two naive rows.

    Attributes:
        estimate: The reported estimate, in [0, 1]: PPI++'s, or the human-only
            mean where the result fell back.
        interval: The reported interval, in [0, 1].
        method: ``"ppi++"``, or the human-only interval's method on a fallback.
        lam: PPI++'s power-tuning weight in [0, 1]; ``None`` on a fallback.
        n_labels: Items with both a human label and a judge score (``n``).
        n_unlabelled: Items with a judge score only (``N``).
        fallback: ``None``, or why PPI++ was not used: one of
            :data:`PPI_FALLBACKS`.
        human_only_estimate: Mean of the human labels.
        human_only: Interval from the human labels alone.
        judge_only_estimate: Mean of the judge over all ``n + N`` items.
        judge_only: Interval for that mean, which knows nothing of the judge's
            error: it covers the judge's mean, not the human one.
        raw_estimate: PPI++'s estimate before clipping to [0, 1]; ``None`` on a
            fallback.
        raw_low: PPI++'s lower bound before clipping; ``None`` on a fallback.
        raw_high: PPI++'s upper bound before clipping; ``None`` on a fallback.
    """

    estimate: float
    interval: Interval
    method: str
    lam: float | None
    n_labels: int
    n_unlabelled: int
    fallback: str | None
    human_only_estimate: float
    human_only: Interval
    judge_only_estimate: float
    judge_only: Interval
    raw_estimate: float | None = None
    raw_low: float | None = None
    raw_high: float | None = None


def _naive(values: np.ndarray, level: float, seed: int) -> tuple[float, Interval]:
    """Mean and interval of values in [0, 1]: Clopper-Pearson on 0/1, else Gaffke."""
    if is_pass_fail(values):
        return float(values.mean()), clopper_pearson(int(values.sum()), values.size, level)
    return float(values.mean()), mean_interval(values, level, seed=seed)


def _unlabelled_values(values: Iterable[float]) -> np.ndarray:
    """``check_unit_values``, except that an empty input is allowed (``N = 0`` falls back)."""
    if not isinstance(values, (str, bytes)):
        try:
            if np.asarray(values, dtype=float).shape == (0,):
                return np.zeros(0)
        except (TypeError, ValueError):
            pass  # check_unit_values says what is wrong
    return check_unit_values(values, "judge_unlabelled")


def ppi_mean_interval(
    human: Iterable[float],
    judge_labelled: Iterable[float],
    judge_unlabelled: Iterable[float],
    *,
    confidence: float = 0.95,
    min_labels: int | None = None,
    min_disagreements: int = DEFAULT_MIN_DISAGREEMENTS,
    seed: int = 0,
) -> PPIEstimate:
    """PPI++ interval for the mean human value of a population a judge scored in full.

    Args:
        human: Human values in [0, 1] on the ``n`` labelled items, which must be
            a uniform random sample of the population.
        judge_labelled: The judge's values in [0, 1] on the same items, in the
            same order.
        judge_unlabelled: The judge's values in [0, 1] on the ``N`` other items
            of the population; may be empty (then the result falls back).
        confidence: Nominal two-sided coverage in (0, 1).
        min_labels: Fewest labels for which PPI++ is used; below it the result
            falls back to the human-only interval. ``None``: no floor for
            pass/fail values (the guard below decides), ``DEFAULT_MIN_LABELS``
            for other values. See the module docstring for the simulation
            behind both.
        min_disagreements: For pass/fail values, the fewest labelled items on
            which the judge and the human disagree, and the fewest of the
            rarer human label, for which PPI++ is used (0 turns the guard off).
        seed: Seed of the Monte Carlo draws of the human-only and judge-only
            intervals when their values are not all 0 or 1.

    Returns:
        The PPI++ estimate and interval (clipped to [0, 1]), or the human-only
        ones with ``fallback`` saying why, together with the human-only and
        judge-only rows. Human-only and judge-only intervals are Clopper-Pearson
        for 0/1 values and :func:`~oloproof.stats.mean_interval` otherwise. The
        result depends only on the multiset of (human, judge) pairs and the
        multiset of unlabelled values: any order, the same bits.

    Raises:
        StatsError: If ``human`` is empty or a value is outside [0, 1] or NaN; if
            ``human`` and ``judge_labelled`` differ in length; or if
            ``confidence``, ``min_labels`` or ``seed`` is invalid.
    """
    y = check_unit_values(human, "human")
    labelled = check_unit_values(judge_labelled, "judge_labelled")
    if y.shape != labelled.shape:
        raise StatsError(
            f"human and judge_labelled must have the same length, got {y.size} and {labelled.size}"
        )
    unlabelled = _unlabelled_values(judge_unlabelled)
    level = check_confidence(confidence)
    binary = is_pass_fail(y) and is_pass_fail(labelled)
    floor = check_int(min_labels if min_labels is not None else (1 if binary else DEFAULT_MIN_LABELS),
                      "min_labels", 1)  # fmt: skip
    guard = check_int(min_disagreements, "min_disagreements", 0) if binary else 0
    seed = check_int(seed, "seed", 0)

    # Sorting makes every sum below run in one order whatever order came in, so
    # shuffled inputs give the same bits (sums in floating point are not
    # associative). Pairs sort by human value, then judge value.
    order = np.lexsort((labelled, y))
    y, labelled = y[order], labelled[order]
    unlabelled = np.sort(unlabelled)
    n, big_n = y.size, unlabelled.size
    judge_all = np.concatenate([labelled, unlabelled])

    human_estimate, human_interval = _naive(y, level, seed)
    judge_estimate, judge_interval = _naive(np.sort(judge_all), level, seed)

    def fall_back(reason: str) -> PPIEstimate:
        return PPIEstimate(
            estimate=human_estimate,
            interval=human_interval,
            method=human_interval.method,
            lam=None,
            n_labels=n,
            n_unlabelled=big_n,
            fallback=reason,
            human_only_estimate=human_estimate,
            human_only=human_interval,
            judge_only_estimate=judge_estimate,
            judge_only=judge_interval,
        )

    if n < floor:
        return fall_back("too_few_labels")
    if big_n == 0:
        return fall_back("no_unlabelled")
    # The normal interval rests on the variance of the judge's errors and of the
    # labels: with few of either seen, it under-covers (the module docstring).
    if guard and int(np.count_nonzero(y != labelled)) < guard:
        return fall_back("too_few_disagreements")
    if guard and min(int(y.sum()), n - int(y.sum())) < guard:
        return fall_back("too_few_human_failures" if y.sum() * 2 > n else "too_few_human_passes")
    if judge_all.min() == judge_all.max():
        return fall_back("judge_constant")
    if y.min() == y.max():
        return fall_back("human_constant")

    covariance = float(np.mean((y - y.mean()) * (labelled - labelled.mean())))
    judge_variance = float(np.var(judge_all, ddof=1))
    lam = covariance / ((1.0 + n / big_n) * judge_variance)
    lam = min(max(lam, 0.0), 1.0)
    rectified = y - lam * labelled
    raw_estimate = float(lam * unlabelled.mean() + rectified.mean())
    std = math.sqrt(lam * lam * float(np.var(unlabelled)) / big_n + float(np.var(rectified)) / n)
    if not std > 0.0:
        return fall_back("zero_standard_error")
    z = float(ndtri(0.5 + level / 2.0))
    raw_low, raw_high = raw_estimate - z * std, raw_estimate + z * std

    def clip(value: float) -> float:
        return min(max(value, 0.0), 1.0)

    return PPIEstimate(
        estimate=clip(raw_estimate),
        interval=Interval(clip(raw_low), clip(raw_high), level, PPI_METHOD),
        method=PPI_METHOD,
        lam=lam,
        n_labels=n,
        n_unlabelled=big_n,
        fallback=None,
        human_only_estimate=human_estimate,
        human_only=human_interval,
        judge_only_estimate=judge_estimate,
        judge_only=judge_interval,
        raw_estimate=raw_estimate,
        raw_low=raw_low,
        raw_high=raw_high,
    )
