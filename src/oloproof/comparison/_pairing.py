"""Pairing two runs' judgments case by case, per metric.

Nothing is dropped silently: every case of either run is paired, missing (a
system stage or the judge failed in either run; judge errors are also counted
on their own), excluded (excluded in either run) or unpaired (present in one
run only).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from oloproof import stats
from oloproof.records._comparisons import PairedValues, Pairing
from oloproof.records._samples import stored_samples
from oloproof.records._stored import StoredJudgment

__all__ = ["pair_metric", "paired_line_values"]


def pair_metric(
    candidate: Sequence[StoredJudgment], baseline: Sequence[StoredJudgment], criterion: str
) -> Pairing:
    """Pair one criterion's judgments by case id.

    A case's value is the mean of its observed samples (its repeats, its judge's
    repeats): the case, not the sample, is the unit paired, on either side.
    """
    mine, theirs = stored_samples(candidate, criterion), stored_samples(baseline, criterion)
    pairs: list[tuple[str, float, float]] = []
    counts: dict[str, int] = defaultdict(int)
    for case_id in sorted(set(mine) | set(theirs)):
        a, b = mine.get(case_id), theirs.get(case_id)
        if a is None or b is None:
            counts["unpaired"] += 1
        elif (not a.values and a.missing) or (not b.values and b.missing):
            counts["missing"] += 1
            # A judge that failed is not a system that failed: counted apart.
            if (not a.values and a.judge_errors) or (not b.values and b.judge_errors):
                counts["judge_errors"] += 1
        elif not a.values or not b.values:
            counts["excluded"] += 1
        else:
            pairs.append((case_id, a.mean, b.mean))
    return {
        "criterion": criterion,
        "pairs": pairs,
        "paired": len(pairs),
        "missing": counts["missing"],
        "judge_errors": counts["judge_errors"],
        "excluded": counts["excluded"],
        "unpaired": counts["unpaired"],
    }


def paired_line_values(pairing: Pairing, confidence: float, seed: int = 0) -> PairedValues:
    """Difference (candidate − baseline) and its paired interval, in points.

    Pass/fail values (every one 0 or 1) get the paired pass/fail interval on
    their 2x2 counts, anything else the score interval: ``stats.paired_interval``,
    the interval the rules then decide on. ``method`` names the one used.
    """
    pairs = pairing["pairs"]
    if not pairs:
        return {"difference": None, "low": None, "high": None, "method": stats.PAIRED_METHOD}
    candidate = [a for _, a, _ in pairs]
    baseline = [b for _, _, b in pairs]
    interval = stats.paired_interval(candidate, baseline, confidence, seed=seed)
    difference = math.fsum(a - b for _, a, b in pairs) / len(pairs)  # the same whatever the order
    return {
        "difference": difference * 100,
        "low": interval.low * 100,
        "high": interval.high * 100,
        "method": interval.method,
    }
