"""The pure core of ``oloproof sweep``: a grid of settings, and a winner claimed only with proof.

* :func:`parse_grid` and :func:`expand_grid` - ``--grid key=v1,v2`` axes (values typed
  as ``--set`` values are) and their cartesian product, one setting per dict.
* :func:`setting_label` - a short label per setting, e.g. ``top_k=4 token_budget=120``.
* :func:`compare_settings` - each setting against the baseline by paired intervals
  that hold simultaneously over all the settings compared (Bonferroni), and the winner
  when one lies entirely on the better side of 0.
* :func:`holdout_split` - cases put aside by a seeded hash of their ids, to check a
  winner on cases its choice never saw.
* :func:`pareto_front` - the settings no other beats on both objective and cost.
* :func:`summarize_sweep` and :func:`render_sweep` - a sweep's result from its runs'
  rows, and its printed report.

Nothing here imports Prefect or the results store.
"""

from __future__ import annotations

from oloproof.sweep._grid import (
    DEFAULT_GRID_LIMIT,
    PROJECT_SETTINGS_LABEL,
    GridAxis,
    expand_grid,
    parse_grid,
    setting_label,
)
from oloproof.sweep._render import render_sweep
from oloproof.sweep._select import (
    SIMULTANEOUS_METHOD,
    SettingResult,
    SweepDecision,
    compare_settings,
    holdout_split,
    pareto_front,
)
from oloproof.sweep._summary import SettingRows, objective_values, summarize_sweep

__all__ = [
    "DEFAULT_GRID_LIMIT",
    "PROJECT_SETTINGS_LABEL",
    "SIMULTANEOUS_METHOD",
    "GridAxis",
    "SettingResult",
    "SettingRows",
    "SweepDecision",
    "compare_settings",
    "expand_grid",
    "holdout_split",
    "objective_values",
    "pareto_front",
    "parse_grid",
    "render_sweep",
    "setting_label",
    "summarize_sweep",
]
