"""Statistics for evaluation results, as pure functions with explicit seeds.

* :func:`clopper_pearson` - exact interval for a pass rate.
* :func:`betting_mean_interval` - interval for the mean of scores in [0, 1],
  valid for any distribution at any sample size.
* :func:`paired_difference_interval` - the same for a mean paired difference.
* :func:`decide_rule` and :func:`required_pairs` - non-inferiority,
  superiority and equivalence rules on that interval, and their sample size.
"""

from __future__ import annotations

from oloproof.stats._betting import BETTING_METHOD, betting_mean_interval
from oloproof.stats._interval import (
    Interval,
    format_percent_interval,
    format_score_interval,
    round_outward,
)
from oloproof.stats._paired import PAIRED_METHOD, paired_difference_interval, paired_method_name
from oloproof.stats._planning import DECISION_KINDS, decide_rule, required_pairs
from oloproof.stats._proportion import CLOPPER_PEARSON_METHOD, clopper_pearson

__all__ = [
    "BETTING_METHOD",
    "CLOPPER_PEARSON_METHOD",
    "DECISION_KINDS",
    "Interval",
    "PAIRED_METHOD",
    "betting_mean_interval",
    "clopper_pearson",
    "decide_rule",
    "format_percent_interval",
    "format_score_interval",
    "paired_difference_interval",
    "paired_method_name",
    "required_pairs",
    "round_outward",
]
