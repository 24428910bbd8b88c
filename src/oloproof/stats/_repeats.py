"""Where a repeated measurement's variance lies: between cases, or within a case.

With ``r`` samples of each of ``n`` cases, the variance of the mean over cases is

    V(n, r) = (b + w / r) / n

for ``b`` the variance of the cases' true values and ``w`` the variance of one case's
samples around its value. Repeats shrink only ``w / r``; cases shrink both. Both are
estimated from a run with repeats by the one-way random-effects (ANOVA) estimators:
``w`` the mean within-case sample variance, ``b`` the variance of the case means less
``w`` over the (harmonic) mean number of samples, floored at 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RATES_DIFFER_LEVEL", "VarianceShare", "rates_differ", "variance_components"]

RATES_DIFFER_LEVEL = 0.05
"""The level of `rates_differ`: the share of pairs of equal rates it calls different, at most."""


@dataclass(frozen=True)
class VarianceShare:
    """A criterion's variance, split between cases and within them."""

    between: float
    """``b``: the variance of the cases' true values."""
    within: float
    """``w``: the variance of one case's samples."""
    repeats: float
    """The (harmonic) mean number of samples a case had."""

    @property
    def within_share(self) -> float:
        """``w / (b + w)``: the share of one sample's variance that repeats can average out."""
        total = self.between + self.within
        return self.within / total if total > 0 else 0.0

    def case_over_repeat(self, cases: int) -> float:
        """Per generation spent, how much more one more case lowers ``V`` than one more
        repeat of every case (``inf`` when repeats cannot help: no within-case variance)."""
        r, n = self.repeats, cases
        if self.within <= 0:
            return math.inf
        return (self.between + self.within / r) * (r + 1) * n / ((n + 1) * self.within)


def variance_components(samples: Sequence[Sequence[float]]) -> VarianceShare | None:
    """The variance components of cases' samples (each case one sequence).

    Returns:
        ``None`` with fewer than two cases or no case of two samples.
    """
    cases = [list(values) for values in samples if values]
    repeated = [values for values in cases if len(values) > 1]
    if len(cases) < 2 or not repeated:
        return None
    within = math.fsum(_variance(values) for values in repeated) / len(repeated)
    means = [math.fsum(values) / len(values) for values in cases]
    repeats = len(cases) / math.fsum(1 / len(values) for values in cases)
    between = max(0.0, _variance(means) - within / repeats)
    return VarianceShare(between=between, within=within, repeats=repeats)


def _variance(values: Sequence[float]) -> float:
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def rates_differ(passed: int, total: int, other_passed: int, other_total: int,
                 *, level: float = RATES_DIFFER_LEVEL) -> bool:
    """Whether two pass counts differ by more than sampling noise: Fisher's exact test,
    two-sided, rejects equal pass rates at ``level``.

    Exact at any number of repeats (conditional on the total passes) and conservative,
    so two samples of one rate are called different at most ``level`` of the time.
    """
    if min(total, other_total) == 0:
        return False
    table = [[passed, total - passed], [other_passed, other_total - other_passed]]
    from scipy.stats import fisher_exact  # scipy.stats costs half a second to import: only here

    return bool(fisher_exact(table, alternative="two-sided").pvalue < level)
