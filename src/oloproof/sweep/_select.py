"""Choosing a sweep's winner with intervals that hold together over every setting compared.

Each setting is compared with the baseline by the paired interval a comparison uses
(``stats.paired_interval``: Tango's score interval for pass/fail values, Gaffke's
otherwise), at confidence ``1 - (1 - confidence) / m`` for ``m`` settings compared
(Bonferroni). By the union bound the ``m`` intervals then cover their true differences
together with probability at least ``confidence``, so the chance of naming any winner
among settings no better than the baseline is at most ``1 - confidence``. Holm's
step-down procedure rejects more often but gives tests, not intervals, and a sweep
reports intervals.

A winner is claimed only when its interval lies entirely on the better side of 0.

`holdout_split` puts cases aside by a seeded hash of their ids, so that a winner chosen
on the rest can be checked on cases the choice never saw; `pareto_front` marks the
settings no other beats on both the objective and the cost.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from oloproof import stats
from oloproof._exceptions import StatsError
from oloproof.stats._validation import UNIT_TOLERANCE, check_confidence, check_int

__all__ = [
    "SIMULTANEOUS_METHOD",
    "SettingResult",
    "SweepDecision",
    "compare_settings",
    "holdout_split",
    "pareto_front",
]

SIMULTANEOUS_METHOD = "Bonferroni: each paired interval at 1 − α/m"
"""How the intervals of a sweep hold simultaneously over the m settings compared."""

_MODEL = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class SettingResult(BaseModel):
    """One setting of a sweep against the baseline."""

    model_config = _MODEL

    label: str
    """The setting's label, e.g. ``top_k=4``."""

    estimate: float | None
    """The objective's mean over the setting's observed cases, in [0, 1]; None with none."""

    difference: float | None
    """The mean paired difference (setting − baseline) in points (×100); None with no pair."""

    low: float | None
    """The simultaneous interval's lower bound, in points; None with no pair."""

    high: float | None
    """The simultaneous interval's upper bound, in points; None with no pair."""

    paired: int
    """The cases observed in both the setting and the baseline."""

    method: str
    """The paired interval's method (Tango's for pass/fail values, Gaffke's otherwise)."""


class SweepDecision(BaseModel):
    """Every setting's simultaneous interval against the baseline, and the winner if any."""

    model_config = _MODEL

    results: list[SettingResult]
    """One result per setting, in the order given."""

    winner: str | None
    """The label of the setting shown better than the baseline, or None when none is."""

    confidence: float
    """The simultaneous confidence of all the intervals together, e.g. 0.95."""

    compared: int
    """m: the settings with an interval (some pair, values not all the baseline's own)."""

    method: str
    """How the intervals hold simultaneously (`SIMULTANEOUS_METHOD`)."""

    higher_is_better: bool
    """Whether a higher objective is better (a lower one when False)."""


def compare_settings(
    baseline: Mapping[str, float],
    settings: Sequence[tuple[str, Mapping[str, float]]],
    *,
    confidence: float = 0.95,
    higher_is_better: bool = True,
    seed: int = 0,
) -> SweepDecision:
    """Compare each setting with the baseline by Bonferroni-adjusted paired intervals.

    Only cases observed in both a setting and the baseline are paired. Every setting with
    paired cases counts in ``m``, whatever its values: a setting that happens to score
    exactly as the baseline was still one of the candidates chosen among (one that
    scores the same never wins: its interval holds 0). A winner is claimed only when
    its interval lies entirely on the better side of 0; among several, the best
    difference wins, the first on a tie.

    Args:
        baseline: The baseline's objective per case id, each in [0, 1].
        settings: ``(label, values per case id)`` for each setting, labels distinct.
        confidence: Simultaneous confidence in (0, 1) of all the intervals together.
        higher_is_better: Whether a higher objective is better.
        seed: Seed of the score interval's draws (unused for pass/fail values).

    Returns:
        The decision, with one result per setting in the order given.

    Raises:
        StatsError: A value is not a number in [0, 1], a label is repeated, or
            ``confidence`` is not in (0, 1).
    """
    level = check_confidence(confidence)
    base = _checked(baseline, "the baseline")
    labels = [label for label, _ in settings]
    for index, label in enumerate(labels):
        if label in labels[:index]:
            raise StatsError(f"the setting label {label!r} is repeated")
    checked = [_checked(values, f"the setting {label!r}") for label, values in settings]
    pairs = [[case_id for case_id in values if case_id in base] for values in checked]
    counted = [bool(ids) for ids in pairs]
    m = sum(counted)
    adjusted = 1.0 - (1.0 - level) / max(m, 1)
    results: list[SettingResult] = []
    for label, values, ids in zip(labels, checked, pairs, strict=True):
        estimate = math.fsum(values.values()) / len(values) if values else None
        if not ids:
            results.append(SettingResult(label=label, estimate=estimate, difference=None, low=None, high=None,
                                         paired=0, method=stats.PAIRED_METHOD))  # fmt: skip
            continue
        mine = [values[case_id] for case_id in ids]
        theirs = [base[case_id] for case_id in ids]
        interval = stats.paired_interval(mine, theirs, adjusted, seed=seed)
        difference = math.fsum(a - b for a, b in zip(mine, theirs, strict=True)) / len(ids)
        results.append(SettingResult(
            label=label, estimate=estimate, difference=difference * 100, low=interval.low * 100,
            high=interval.high * 100, paired=len(ids), method=interval.method,
        ))  # fmt: skip
    sign = 1.0 if higher_is_better else -1.0
    winner: str | None = None
    best = -math.inf
    for result, counts in zip(results, counted, strict=True):
        if not counts or result.low is None or result.high is None or result.difference is None:
            continue
        shown_better = result.low > 0.0 if higher_is_better else result.high < 0.0
        if shown_better and sign * result.difference > best:  # strictly: the first wins a tie
            winner, best = result.label, sign * result.difference
    return SweepDecision(
        results=results, winner=winner, confidence=level, compared=m,
        method=SIMULTANEOUS_METHOD, higher_is_better=higher_is_better,
    )  # fmt: skip


def holdout_split(case_ids: Iterable[str], fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """Split cases into a selection set and a holdout set by a seeded hash of each id.

    A case goes to the holdout when ``sha256(f"{seed}:{case_id}")``, read as a number in
    [0, 1), is below ``fraction``: the split depends on the ids and the seed, never on
    the order, and a case keeps its side when others are added or removed.

    Args:
        case_ids: The case ids, each once.
        fraction: The expected share of cases held out, in (0, 1).
        seed: The split's seed, an integer >= 0.

    Returns:
        ``(selection, holdout)``, each sorted.

    Raises:
        StatsError: ``fraction`` is not in (0, 1), ``seed`` is not an integer >= 0, or
            an id is repeated.
    """
    share = check_confidence(fraction, "fraction")
    number = check_int(seed, "seed", 0)
    selection: list[str] = []
    holdout: list[str] = []
    seen: set[str] = set()
    for case_id in case_ids:
        if case_id in seen:
            raise StatsError(f"the case id {case_id!r} is repeated")
        seen.add(case_id)
        digest = hashlib.sha256(f"{number}:{case_id}".encode("utf-8", "surrogatepass")).digest()
        (holdout if int.from_bytes(digest[:8], "big") / 2.0**64 < share else selection).append(case_id)
    return sorted(selection), sorted(holdout)


def pareto_front(points: Sequence[tuple[float | None, float | None]], *, higher_is_better: bool = True) -> list[bool]:
    """Which (objective, cost) points no other point dominates; a lower cost is better.

    A point is dominated when another is at least as good on both and strictly better on
    one. Equal points do not dominate each other, so both stay on the front.

    Args:
        points: ``(objective, cost)`` per setting; None where either is unknown.
        higher_is_better: Whether a higher objective is better.

    Returns:
        One flag per point, in order: True on the front, False when dominated or when
        the objective or the cost is None (such a point dominates nothing).

    Raises:
        StatsError: A value is NaN.
    """
    sign = 1.0 if higher_is_better else -1.0
    known: list[tuple[float, float] | None] = []
    for objective, cost in points:
        if objective is None or cost is None:
            known.append(None)
            continue
        if math.isnan(objective) or math.isnan(cost):
            raise StatsError("an objective or a cost is NaN")
        known.append((sign * objective, -cost))  # both now higher-is-better
    return [point is not None and not any(_dominates(other, point) for other in known) for point in known]


def _dominates(other: tuple[float, float] | None, point: tuple[float, float]) -> bool:
    """Whether ``other`` is at least as good as ``point`` on both and not equal (so better on one)."""
    return other is not None and other[0] >= point[0] and other[1] >= point[1] and other != point


def _checked(values: Mapping[str, float], name: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for case_id, value in values.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise StatsError(f"{name}: case {case_id!r} has {value!r}, not a number in [0, 1]") from None
        if not -UNIT_TOLERANCE <= number <= 1.0 + UNIT_TOLERANCE:  # NaN fails too
            raise StatsError(f"{name}: case {case_id!r} has {value!r}, not a number in [0, 1]")
        out[case_id] = min(max(number, 0.0), 1.0)  # round-off, as the statistics clip it
    return out
