"""Statistics for evaluation results, as pure functions with explicit seeds.

* :func:`clopper_pearson` - exact interval for a pass rate.
* :func:`mean_interval` - Gaffke's interval for the mean of scores in [0, 1]:
  Clopper-Pearson on 0/1 values, near the t interval's width at large n.
* :func:`betting_mean_interval` - a wider interval for the same mean, by
  betting, with a proven guarantee for any distribution at any sample size.
* :func:`paired_difference_interval` - Gaffke's interval for a mean paired
  difference.
* :func:`paired_binary_interval` - Tango's score interval for a paired
  difference of pass rates; :func:`paired_interval` picks it for pass/fail
  values and the interval above otherwise, as a comparison does.
* :func:`decide_rule` and :func:`required_pairs` - non-inferiority,
  superiority and equivalence rules on that interval, and their sample size.
* :func:`cohen_kappa` and :func:`kappa_interval` - Cohen's kappa (unweighted,
  linear or quadratic) between a judge and human labels, and its BCa bootstrap
  interval.
* :func:`ppi_mean_interval` - prediction-powered inference (PPI++) for a mean
  from a few human labels and many judge scores, with the human-only and
  judge-only rows beside it.
* :func:`variance_components` - a repeated criterion's variance between cases and
  within them, and whether more cases or more repeats lower it more.
"""

from __future__ import annotations

from oloproof.stats._agreement import (
    KAPPA_METHOD,
    KAPPA_NO_DISAGREEMENT_METHOD,
    KAPPA_WEIGHTS,
    agreement_table,
    cohen_kappa,
    kappa_interval,
)
from oloproof.stats._betting import BETTING_METHOD, betting_mean_interval
from oloproof.stats._interval import (
    Interval,
    format_percent_interval,
    format_score_interval,
    round_outward,
)
from oloproof.stats._mean import MEAN_METHOD, mean_interval
from oloproof.stats._paired import PAIRED_METHOD, paired_difference_interval, paired_method_name
from oloproof.stats._paired_binary import (
    NEWCOMBE_METHOD,
    PAIRED_BINARY_METHOD,
    TANGO_METHOD,
    is_pass_fail,
    newcombe_interval,
    paired_binary_interval,
    paired_counts,
    paired_interval,
    tango_interval,
)
from oloproof.stats._planning import (
    DECISION_KINDS,
    binary_pass_probability,
    decide_rule,
    required_pairs,
)
from oloproof.stats._ppi import (
    DEFAULT_MIN_DISAGREEMENTS,
    DEFAULT_MIN_LABELS,
    PPI_FALLBACKS,
    PPI_METHOD,
    PPIEstimate,
    ppi_mean_interval,
)
from oloproof.stats._proportion import CLOPPER_PEARSON_METHOD, clopper_pearson
from oloproof.stats._repeats import RATES_DIFFER_LEVEL, VarianceShare, rates_differ, variance_components
from oloproof.stats._stability import STABLE_FLIP_RATE, StableRepeats, flip_rate, stable_repeats

__all__ = [
    "BETTING_METHOD",
    "CLOPPER_PEARSON_METHOD",
    "DECISION_KINDS",
    "DEFAULT_MIN_DISAGREEMENTS",
    "DEFAULT_MIN_LABELS",
    "KAPPA_METHOD",
    "KAPPA_NO_DISAGREEMENT_METHOD",
    "KAPPA_WEIGHTS",
    "MEAN_METHOD",
    "NEWCOMBE_METHOD",
    "PAIRED_BINARY_METHOD",
    "PAIRED_METHOD",
    "PPI_FALLBACKS",
    "PPI_METHOD",
    "RATES_DIFFER_LEVEL",
    "STABLE_FLIP_RATE",
    "TANGO_METHOD",
    "Interval",
    "PPIEstimate",
    "StableRepeats",
    "VarianceShare",
    "agreement_table",
    "betting_mean_interval",
    "binary_pass_probability",
    "clopper_pearson",
    "cohen_kappa",
    "decide_rule",
    "flip_rate",
    "format_percent_interval",
    "format_score_interval",
    "is_pass_fail",
    "kappa_interval",
    "mean_interval",
    "newcombe_interval",
    "paired_binary_interval",
    "paired_counts",
    "paired_difference_interval",
    "paired_interval",
    "paired_method_name",
    "ppi_mean_interval",
    "rates_differ",
    "required_pairs",
    "round_outward",
    "stable_repeats",
    "tango_interval",
    "variance_components",
]
