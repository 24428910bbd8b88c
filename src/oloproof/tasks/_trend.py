"""A criterion across a store's runs: the nightly history, with where the system changed.

Each run contributes its overall estimate and interval of the criterion. Where the
``by`` key (``index_version`` or the system's ``version``) differs from the run
before, the two runs are paired over the cases they share with the comparison's own
paired interval, and the change is called distinguishable only when that interval
excludes 0.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, cast

from oloproof._exceptions import UsageError
from oloproof.comparison import pair_metric, paired_line_values
from oloproof.records import MetricSummary, StoredJudgment
from oloproof.report import TrendRow, estimate_text, interval_text
from oloproof.store import ResultsStore, run_table

__all__ = ["TREND_KEYS", "TrendKey", "criterion_trend", "latest_system"]

TrendKey = Literal["index_version", "version"]

TREND_KEYS: tuple[TrendKey, ...] = ("index_version", "version")


def _runs(store: ResultsStore, system_name: str | None,
          until: str | None) -> list[tuple[str, str, str, str | None]]:  # fmt: skip
    """The user's runs (of ``system_name``, made no later than ``until``), oldest first:
    (run id, created at, system version, index version)."""
    conditions, params = [], []
    if system_name:
        conditions.append("system_name = ?")
        params.append(system_name)
    if until:
        conditions.append("created_at <= ?")
        params.append(until)
    where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
    _, rows = store.query("SELECT run_id, created_at, system_version, index_version FROM runs "
                          f"{where}ORDER BY created_at, run_id", params)  # fmt: skip
    return [(str(r[0]), str(r[1]), str(r[2]), None if r[3] is None else str(r[3])) for r in rows]


def latest_system(store: ResultsStore) -> str | None:
    """The system of the store's latest user run (what ``oloproof trend`` follows by default)."""
    _, rows = store.query("SELECT system_name FROM runs ORDER BY created_at DESC, run_id DESC LIMIT 1")
    return None if not rows else str(rows[0][0])


def _overall(store: ResultsStore, run_id: str, criterion: str) -> MetricSummary | None:
    rows = cast("list[MetricSummary]", store.read_table(run_table(run_id, "metrics")))
    return next((row for row in rows if row["criterion"] == criterion and row["slice"] is None), None)


def criterion_trend(store: ResultsStore, criterion: str, *, by: TrendKey = "index_version", last: int | None = None,
                    system_name: str | None = None, until: str | None = None) -> list[TrendRow]:  # fmt: skip
    """The criterion over the store's runs (of ``system_name``, made no later than the time
    ``until``), oldest first; with ``last``, the last runs only, each still set against the
    run before it.

    Raises:
        UsageError: ``by`` is unknown, ``last`` is below 1, or no run has the criterion.
    """
    if by not in TREND_KEYS:
        raise UsageError(f"--by must be one of {', '.join(TREND_KEYS)}, got {by!r}", field="--by")
    if last is not None and last < 1:
        raise UsageError(f"--last must be at least 1, got {last}", field="--last")
    found: list[tuple[tuple[str, str, str, str | None], MetricSummary]] = []
    runs = _runs(store, system_name, until)
    # Newest first, so that --last reads only the runs it shows and the one before them.
    for run in reversed(runs):
        metric = _overall(store, run[0], criterion)
        if metric is not None:
            found.insert(0, (run, metric))
            if last is not None and len(found) > last:
                break
    if not found:
        raise UsageError(f"no run in the store has criterion {criterion!r}", field="--criterion")
    rows: list[TrendRow] = []
    previous: tuple[tuple[str, str, str, str | None], MetricSummary] | None = None
    for run, metric in found:
        key = run[3] if by == "index_version" else run[2]
        changed = previous is not None and key != (previous[0][3] if by == "index_version" else previous[0][2])
        row = TrendRow(run_id=run[0], created_at=run[1], version=run[2], index_version=run[3],
                       observed=metric["observed"], estimate=metric["estimate"], low=metric["low"],
                       high=metric["high"], shown=estimate_text(metric), shown_interval=interval_text(metric),
                       changed=changed)  # fmt: skip
        if changed and previous is not None:
            row = _paired(store, row, previous[0][0], criterion, metric["confidence"])
        rows.append(row)
        previous = (run, metric)
    return rows[-last:] if last is not None else rows


def _paired(store: ResultsStore, row: TrendRow, before: str, criterion: str, confidence: float) -> TrendRow:
    """``row`` with its paired difference from run ``before`` over their shared cases."""
    mine = cast("list[StoredJudgment]", store.read_table(run_table(row.run_id, "judgments")))
    theirs = cast("list[StoredJudgment]", store.read_table(run_table(before, "judgments")))
    pairing = pair_metric(mine, theirs, criterion)
    if not pairing["pairs"]:
        return row
    line = paired_line_values(pairing, confidence)
    return dataclasses.replace(row, difference=line["difference"], difference_low=line["low"], difference_high=line["high"],
                   paired=pairing["paired"])
