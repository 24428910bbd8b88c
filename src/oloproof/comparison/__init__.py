"""Paired comparison of two runs and release gates."""

from oloproof.comparison._decide import check_comparable, compare_runs
from oloproof.comparison._pairing import pair_metric, paired_line_values
from oloproof.comparison._policy import Policy, Rule, load_policy
from oloproof.comparison._render import EXIT_BLOCK, difference_text, render_comparison, render_decisions

__all__ = [
    "EXIT_BLOCK",
    "Policy",
    "Rule",
    "check_comparable",
    "compare_runs",
    "difference_text",
    "load_policy",
    "pair_metric",
    "paired_line_values",
    "render_comparison",
    "render_decisions",
]
