"""``oloproof report`` (the HTML report) and ``oloproof trend`` (a criterion across runs)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof._cli._common import emit_json, print_lines
from oloproof._exceptions import UsageError
from oloproof._locate import locate_store

if TYPE_CHECKING:
    from oloproof.report import TrendRow
    from oloproof.store import ResultsStore

__all__ = ["add_report_parsers", "report_command", "trend_command", "write_atomically"]

TREND_LAST = 20
"""How many runs the report's trend section shows."""


def add_report_parsers(commands: argparse._SubParsersAction, store_options: Callable[[argparse.ArgumentParser], None],
                       ) -> None:  # fmt: skip
    """The ``report`` and ``trend`` commands."""
    report = commands.add_parser(
        "report", help="write a run's self-contained HTML report: funnel, metrics, cases",
        description="One HTML file that opens offline: the failure funnel (labelled by --diagnosis), the "
        "metrics with intervals, slices, judges, a comparison's paired differences against its margins "
        "(--comparison), the criterion's trend across the store's runs, and every case.",
    )
    report.add_argument("run_id", metavar="RUN_ID")
    report.add_argument("--diagnosis", metavar="ID", help="a diagnosis of the run: its labels name the losses")
    report.add_argument("--comparison", metavar="ID", help="a comparison involving the run")
    report.add_argument("-o", "--output", default="report.html", metavar="FILE",
                        help="where to write it (default: report.html)")
    store_options(report)
    trend = commands.add_parser(
        "trend", help="a criterion across the store's runs, with where the index or version changed",
        description="Each run's estimate and interval; where --by changes, the run is paired with the one "
        "before over their shared cases and the change called distinguishable only if the paired "
        "interval excludes 0.",
    )
    trend.add_argument("project_dir", nargs="?", metavar="PROJECT", help="the project whose store to read")
    trend.add_argument("--criterion", required=True, metavar="NAME")
    trend.add_argument("--by", default="index_version", choices=["index_version", "version"])
    trend.add_argument("--last", type=int, metavar="N", help="only the last N runs with the criterion")
    trend.add_argument("--system", metavar="NAME", help="the system whose runs to follow (default: the latest run's)")
    store_options(trend)


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all.

    Raises:
        UsageError: The path is a folder, or its folder is missing or not writable.
    """
    if not path:
        raise UsageError("--output is empty: give a file name for the report", field="--output")
    target = Path(path).resolve()  # a link is written through, never replaced
    if target.is_dir():
        raise UsageError(f"{path} is a folder: give a file name for the report", path=path, field="--output")
    if target.exists() and not target.is_file():
        raise UsageError(f"{path} is not a regular file: give a file name for the report", path=path,
                         field="--output")  # fmt: skip
    folder = target.parent
    if not folder.is_dir():
        raise UsageError(f"cannot write the report: folder {folder} does not exist", path=path, field="--output")
    try:
        handle, temporary = tempfile.mkstemp(prefix=".oloproof-", suffix=".tmp", dir=folder)
    except OSError as error:
        raise UsageError(f"cannot write the report: {error.strerror}", path=path, field="--output") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, _file_mode(target))
        os.replace(temporary, target)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise UsageError(f"cannot write the report: {error.strerror}", path=path, field="--output") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _file_mode(target: Path) -> int:
    """The mode a written report gets: the file's own if it exists, else what the umask allows."""
    if target.exists():
        return target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _primary_trend(store: ResultsStore, page_run: dict[str, Any], criterion: str | None) -> list[TrendRow]:
    """The report's trend section: ``criterion`` over the store's runs of this system, up to this run."""
    from oloproof.tasks._trend import criterion_trend

    if criterion is None or page_run.get("kind", "run") != "run":  # a child run has no history of its own
        return []
    try:
        return criterion_trend(store, criterion, last=TREND_LAST, system_name=(page_run.get("system") or {}).get("name"),
                               until=page_run.get("created_at"))  # fmt: skip
    except UsageError:  # no earlier run has it: the section is left out
        return []


def report_command(args: argparse.Namespace) -> int:
    """Write the run's HTML report; nothing is written on bad input."""
    from oloproof.report import render_html
    from oloproof.tasks._report_page import build_report_page

    store = locate_store(args.results, args.project)
    page = build_report_page(store, args.run_id, diagnosis_id=args.diagnosis, comparison_id=args.comparison)
    criterion = page.funnels[0].criterion if page.funnels else None
    trend = _primary_trend(store, dict(page.report), criterion)
    if trend:
        page = dataclasses.replace(page, trend=trend, trend_criterion=criterion)
    html = render_html(page)
    write_atomically(args.output, html)
    if args.json:
        emit_json({"run_id": args.run_id, "output": str(Path(args.output).resolve()), "bytes": len(html.encode()),
                   "funnel": list(page.funnels[0].counts) if page.funnels else None})  # fmt: skip
    else:
        from oloproof.report import render_funnel

        print(f"Wrote {args.output} ({len(html.encode()) / 1024:.0f} KiB)")
        print_lines(render_funnel(page.funnels[0]) if page.funnels else ["No pass/fail criterion: no funnel"])
    return 0


def trend_command(args: argparse.Namespace) -> int:
    """The criterion across the store's runs, oldest first."""
    from oloproof.tasks._trend import criterion_trend, latest_system

    store = locate_store(args.results, args.project if args.project is not None else args.project_dir)
    system = args.system or latest_system(store)
    rows = criterion_trend(store, args.criterion, by=args.by, last=args.last, system_name=system)
    if args.json:
        emit_json([{**vars(row), "system": system, "distinguishable": row.distinguishable} for row in rows])
        return 0
    print_lines(render_trend(rows, args.criterion, args.by, system))
    return 0


def render_trend(rows: list[TrendRow], criterion: str, by: str, system: str | None = None) -> list[str]:
    """The trend as a terminal table; a row whose ``by`` key changed is marked ``*``."""
    from oloproof.report import render_table

    body = []
    for row in rows:
        against = ""
        if row.changed:
            against = "changed"
            if row.difference is not None:
                told = "distinguishable" if row.distinguishable else "not distinguishable"
                against = (f"changed: {row.difference:+.1f} points [{row.difference_low:+.1f}, "
                           f"{row.difference_high:+.1f}] over {row.paired} shared cases, {told}")
        body.append([("* " if row.changed else "  ") + row.run_id, row.created_at[:19], row.version,
                     row.index_version or "none", row.shown, row.shown_interval, against])  # fmt: skip
    headers = ["run", "created", "version", "index", criterion, "interval", f"{by} vs the run before"]
    lines = [f"{criterion} across the runs of {system}" if system else f"{criterion} across the runs",
             *render_table(headers, body)]  # fmt: skip
    if any(row.changed for row in rows):
        lines.append(f"* {by} changed from the run before")
    return lines
