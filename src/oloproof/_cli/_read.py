"""``oloproof runs``, ``show`` and ``query``: reading the store back."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any, cast

from typing_extensions import TypedDict

from oloproof._cli._common import emit, emit_json, terminal_safe
from oloproof._exceptions import NotFoundError, UsageError
from oloproof._locate import locate_store

if TYPE_CHECKING:
    from oloproof.records import MetricSummary, RunReport, StoredJudgment, StoredManifest

__all__ = ["load_run", "query_command", "results_command", "runs_command", "show_command"]


class _RunLine(TypedDict):
    """A row of the ``runs`` (or ``all_runs``) view, as ``oloproof runs`` lists it."""

    run_id: str
    kind: str | None
    created_at: str
    system_name: str
    system_version: str
    index_version: str | None
    dataset: str


class _IncompleteLine(TypedDict):
    """An incomplete run folder, as ``oloproof runs --incomplete`` lists it."""

    run_id: str
    files: list[str]
    age_minutes: float | None
    removed: bool
    writing: bool


def load_run(store: Any, run_id: str) -> RunReport:
    """A complete run's manifest and metrics, as ``oloproof run`` returned them, and the
    judge metrics corrected by human labels where the run's judges have some."""
    from oloproof.store import run_manifest, run_table

    if not store.exists(run_manifest(run_id)):
        raise NotFoundError(f"no complete run {run_id!r} in the store", path=store.url)
    manifest: StoredManifest = store.read_json(run_manifest(run_id))
    metrics: list[MetricSummary] = store.read_table(run_table(run_id, "metrics"))
    report: RunReport = {**manifest, "metrics": metrics}
    from oloproof.judging import judge_estimates, labelled_samples

    labelled = labelled_samples(store, run_id)
    if labelled:  # human labels of its judges: the judge metrics corrected by them
        judgments: list[StoredJudgment] = store.read_table(run_table(run_id, "judgments"))
        report["judge_estimates"] = judge_estimates(manifest, judgments, labelled)
    return report


def runs_command(args: argparse.Namespace) -> int:
    store = locate_store(args.results, args.project)
    if args.incomplete:
        return _incomplete_command(store, args)
    if args.remove:
        raise UsageError("--remove removes incomplete runs only: pass --incomplete too")
    every = args.all
    columns, rows = store.query(
        "SELECT run_id, kind, created_at, system_name, system_version, index_version, dataset "
        f"FROM {'all_runs' if every else 'runs'} ORDER BY run_id"
    )
    records = [cast("_RunLine", dict(zip(columns, row))) for row in rows]
    if args.json:
        emit_json(records)
        return 0
    width = max((len(record["kind"] or "") for record in records), default=0)
    for record in records:
        print(terminal_safe(_run_line(record, width if every else None)))
    return 0


def _run_line(record: _RunLine, kind_width: int | None) -> str:
    """One line of ``oloproof runs``; with ``kind_width``, the run's kind is a column."""
    kind = "" if kind_width is None else f"{record['kind'] or '':<{kind_width}}  "
    return (
        f"{record['run_id']}  {kind}{record['created_at']}  {record['system_name']} "
        f"{record['system_version']}  index {record['index_version']}"
    )


def _incomplete_command(store: Any, args: argparse.Namespace) -> int:
    """``runs --incomplete [--remove]``: folders no reader shows, and their cleanup.

    A folder old enough is removed only if no live run holds its lease (a run still writing).
    """
    import time

    from oloproof.store import incomplete_runs, remove_incomplete_run

    older_than = _non_negative(args.older_than, "--older-than", "minutes")
    now = time.time()
    found = incomplete_runs(store)
    rows: list[_IncompleteLine] = []
    for run in found:
        age = None if run.modified is None else (now - run.modified) / 60
        old = args.remove and age is not None and age >= older_than
        removed = old and remove_incomplete_run(store, run)
        rows.append({"run_id": run.run_id, "files": list(run.files), "age_minutes": age, "removed": removed,
                     "writing": old and not removed})  # fmt: skip
    if args.json:
        emit_json(rows)
        return 0
    for row in rows:
        written = "age unknown" if row["age_minutes"] is None else f"last written {row['age_minutes']:.0f} min ago"
        kept = "" if not args.remove else (
            " · removed" if row["removed"] else " · kept (a run is writing it)" if row["writing"]
            else f" · kept (younger than {older_than:g} min)")  # fmt: skip
        print(terminal_safe(f"{row['run_id']}  incomplete: {', '.join(row['files']) or 'empty'} · {written}{kept}"))
    if not rows:
        print("No incomplete runs.")
    return 0


def show_command(args: argparse.Namespace) -> int:
    from oloproof.report import render_run

    store = locate_store(args.results, args.project)
    report = load_run(store, args.run_id)
    emit(report, args.json, render_run)
    return 0


def results_command(args: argparse.Namespace) -> int:
    """Print a run's judgments in the catalogue's result shape, one JSON line per row."""
    from oloproof.report import catalogue_results
    from oloproof.store import run_table

    store = locate_store(args.results, args.project)
    manifest = load_run(store, args.run_id)
    for entry in catalogue_results(manifest, store.read_table(run_table(args.run_id, "judgments"))):
        print(json.dumps(entry, ensure_ascii=False, default=str))
    return 0


def query_command(args: argparse.Namespace) -> int:
    timeout = _non_negative(args.timeout, "--timeout", "seconds")
    store = locate_store(args.results, args.project)
    params = [_parse_param(value) for value in args.params] or None
    # Ctrl-C and SIGTERM stop the statement inside DuckDB: see Queries.query.
    columns, rows = store.queries.query(args.sql, params, timeout=timeout or None)
    if args.json:
        emit_json([dict(zip(columns, row)) for row in rows])
        return 0
    print("\t".join(terminal_safe(column, tabs=False) for column in columns))
    for row in rows:
        print("\t".join("" if value is None else terminal_safe(str(value), tabs=False) for value in row))
    return 0


def _non_negative(value: float, option: str, unit: str) -> float:
    """An option's number, refused unless finite and at least 0 (argparse takes ``nan`` and ``-5``)."""
    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"must be a finite number of {unit}, at least 0; got {value:g}", field=option)
    return value


def _parse_param(text: str) -> Any:
    # Numbers and booleans bind as such; everything else as text.
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, int | float | bool) else text
