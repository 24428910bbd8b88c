"""Query speed over a large store: ``oloproof query`` against plain DuckDB on the same files.

The script writes a local results store of ``--runs`` complete runs (default 100)
of ``--rows`` judgment rows each (default 10,000: 2,500 cases x 4 criteria, so
1,000,000 rows in all) with the store's own writer (``ResultsStore.write_table``
for ``cases``, ``judgments``, ``retrievals`` and ``metrics``, then ``run.json``),
and times one aggregate over the judgments three ways:

* ``oloproof query`` in process: ``oloproof._cli.main.main([...])``, stdout
  captured, timed with ``perf_counter`` (store listing, the views the SQL names,
  query, JSON output);
* ``oloproof query`` as a whole command (``.venv/bin/oloproof`` in a subprocess,
  interpreter start and imports included);
* plain DuckDB: ``duckdb.connect().execute(...)`` over
  ``read_parquet('<root>/runs/*/judgments.parquet')``.

``oloproof_views_best_s`` is what a connection with every view costs:
``ResultsStore(root).connect()`` (listing, manifests, every view), more than a
query of one view pays.

Each is run once to warm up, then ``--repeat`` times (default 5), the ways
taking turns; the best time counts. Target: in-process ``oloproof query`` within
1.2x of plain DuckDB (the target's ``measured`` is the in-process seconds, its
``ratio`` in-process/DuckDB). The three answers must agree (counts exactly, means
to 1e-9); the script exits 1 if they do not. Timings are reported, never asserted.

``phases_ms`` is where the time of each way goes (the median of ``--repeat`` calls
of each, timed apart after the others, with timers wrapped around the functions
that do each part): what limits the in-process ratio.

    python benchmarks/bench_store_query.py [--runs 100] [--rows 10000] [--repeat 5]
        [--workdir DIR] [--keep] [--json]

About 2 minutes on 2 cores at the defaults, most of it writing the store.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

# This folder is on sys.path: the scripts run as files.
from _report import print_closing, target

from oloproof.store import (
    CASES,
    JUDGMENTS,
    METRICS,
    RETRIEVALS,
    ResultsStore,
    run_manifest,
    run_table,
)

SCENARIO = "store_query"
TARGET_RATIO = 1.2
CRITERIA = ("answer_correct", "citations_valid", "hit_rate_at_2", "relevance")
SQL = (
    "SELECT criterion, avg(value) AS mean_value, count(*) AS n FROM {source} "
    "WHERE status = 'observed' GROUP BY criterion ORDER BY criterion"
)
OLOPROOF = Path(sys.executable).with_name("oloproof")


# -- the store ----------------------------------------------------------------


def _judgment(run_id: str, case: int, criterion: str, index: int) -> dict[str, Any]:
    # Every 50th row missing, every 97th excluded: the WHERE clause has work to do.
    status = "missing" if index % 50 == 0 else "excluded" if index % 97 == 0 else "observed"
    observed = status == "observed"
    value = ((case * 7 + index * 13) % 101) / 100.0 if observed else None
    passed = None if value is None else value >= 0.5
    return {
        "run_id": run_id, "case_id": f"case-{case:06d}", "criterion": criterion, "evaluator": criterion,
        "spec_hash": f"spec-{criterion}", "status": status,
        "outcome": "completed" if observed else "skipped" if status == "excluded" else "error",
        "reason": None if observed else status, "score": value, "value": value, "passed": passed,
        "label": None if passed is None else "pass" if passed else "fail",
        "detail": {}, "judgment_key": f"jk-{run_id}-{index}" if observed else None, "hit": False,
    }  # fmt: skip


def _judgments(run_id: str, rows: int) -> Any:
    return (_judgment(run_id, i // len(CRITERIA), CRITERIA[i % len(CRITERIA)], i) for i in range(rows))


def _cases(run_id: str, cases: int) -> Any:
    return ({"run_id": run_id, "case_id": f"case-{n:06d}", "status": "ok", "execution_hit": False,
             "input": {"question": f"question {n}?"}, "output": {"answer": f"answer {n}."}}
            for n in range(cases))  # fmt: skip


def _manifest(run_id: str, cases: int) -> dict[str, Any]:
    return {"run_id": run_id, "created_at": "2026-01-02T03:04:05+00:00", "status": "complete",
            "system": {"name": "bench-rag", "version": "v1", "index_version": "bench-index-1"},
            "dataset": {"path": "cases.jsonl", "sha256": "ab" * 32}, "case_count": cases}  # fmt: skip


def write_store(root: Path, runs: int, rows: int) -> float:
    """Write ``runs`` complete runs of ``rows`` judgments each; returns the seconds it took."""
    store = ResultsStore(str(root))
    cases = math.ceil(rows / len(CRITERIA))
    started = time.perf_counter()
    for n in range(runs):
        run_id = f"run_bench_{n:04d}"
        store.write_table(run_table(run_id, "cases"), _cases(run_id, cases), CASES)
        store.write_table(run_table(run_id, "judgments"), _judgments(run_id, rows), JUDGMENTS)
        store.write_table(run_table(run_id, "retrievals"), [], RETRIEVALS)
        store.write_table(run_table(run_id, "metrics"), [], METRICS)
        store.write_json(run_manifest(run_id), _manifest(run_id, cases))
    return time.perf_counter() - started


# -- the three ways -------------------------------------------------------------


def query_in_process(root: Path) -> list[dict[str, Any]]:
    from oloproof._cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["query", SQL.format(source="judgments"), "--results", str(root), "--json"])
    if code != 0:
        raise SystemExit(f"oloproof query exited with {code}")
    return json.loads(out.getvalue())


def open_views(root: Path) -> None:
    """What every ``oloproof query`` does before its SQL: list the store, read manifests, build views."""
    ResultsStore(str(root)).connect().close()


def query_subprocess(root: Path, cwd: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [*_command(), "query", SQL.format(source="judgments"), "--results", str(root), "--json"],
        check=False, capture_output=True, text=True, cwd=str(cwd), env=_clean_env(),
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"oloproof query (subprocess) exited with {done.returncode}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def query_duckdb(root: Path) -> list[dict[str, Any]]:
    glob = str(root / "runs" / "*" / "judgments.parquet").replace("'", "''")
    with duckdb.connect() as con:
        cursor = con.execute(SQL.format(source=f"read_parquet('{glob}')"))
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]


def _command() -> list[str]:
    return [str(OLOPROOF)] if OLOPROOF.exists() else [sys.executable, "-m", "oloproof._cli.main"]


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OLOPROOF_")}
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


def best_of(calls: dict[str, Any], repeat: int) -> dict[str, tuple[float, list[float], Any]]:
    """Each call once to warm up, then ``repeat`` rounds of one timed call each, in turn (so a
    load spike on the machine hits every way alike): name -> (best s, all s, last answer)."""
    answers = {name: call() for name, call in calls.items()}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            started = time.perf_counter()
            answers[name] = call()
            times[name].append(time.perf_counter() - started)
    return {name: (min(times[name]), times[name], answers[name]) for name in calls}


# -- where the time goes ----------------------------------------------------------

# (phase, module, function): each oloproof part timed by a wrapper around its function.
_PARTS = (
    ("parse the command line", "oloproof._cli.main", "build_parser"),
    ("list the store", "oloproof.store._views", "_children"),
    ("open a DuckDB connection", "oloproof.store._views", "new_connection"),
    ("confine it to the store", "oloproof.store._views", "confine"),
    ("bind the table views", "oloproof.store._views", "_create_table_view"),
    ("run the statement and fetch", "oloproof.store._queries", "_Statement._execute_on"),
    ("close the connection", "oloproof.store._queries", "_Statement._close"),
)


@contextlib.contextmanager
def _timers(spent: dict[str, float]) -> Any:
    """Wrap each part's function so that its time adds to ``spent[phase]``; unwrap after."""
    import importlib

    undo = []
    for phase, module_name, dotted in _PARTS:
        owner: Any = importlib.import_module(module_name)
        *outer, name = dotted.split(".")
        for part in outer:
            owner = getattr(owner, part)
        real = getattr(owner, name)

        def timed(*args: Any, _real: Any = real, _phase: str = phase, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return _real(*args, **kwargs)
            finally:
                spent[_phase] += time.perf_counter() - started

        setattr(owner, name, timed)
        undo.append((owner, name, real))
    try:
        yield
    finally:
        for owner, name, real in reversed(undo):
            setattr(owner, name, real)


def _duckdb_parts(root: Path, spent: dict[str, float]) -> None:
    glob = str(root / "runs" / "*" / "judgments.parquet").replace("'", "''")
    started = time.perf_counter()
    con = duckdb.connect()
    opened = time.perf_counter()
    cursor = con.execute(SQL.format(source=f"read_parquet('{glob}')"))
    names = [column[0] for column in cursor.description]
    [dict(zip(names, row)) for row in cursor.fetchall()]
    ran = time.perf_counter()
    con.close()
    spent["open a DuckDB connection"] += opened - started
    spent["run the statement and fetch"] += ran - opened
    spent["close the connection"] += time.perf_counter() - ran


def phases(root: Path, repeat: int) -> dict[str, dict[str, float]]:
    """Median milliseconds of each part of an in-process ``oloproof query`` and of plain DuckDB."""
    out: dict[str, dict[str, float]] = {}
    for way in ("oloproof", "duckdb"):
        calls: list[dict[str, float]] = []
        for _ in range(repeat):
            spent: dict[str, float] = collections.defaultdict(float)
            started = time.perf_counter()
            if way == "oloproof":
                with _timers(spent):
                    query_in_process(root)
                # The statement's part includes the views' binding, timed apart above.
                spent["run the statement and fetch"] -= sum(
                    spent[p] for p, *_ in _PARTS[1:5])
            else:
                _duckdb_parts(root, spent)
            spent["everything else"] = time.perf_counter() - started - sum(spent.values())
            calls.append(dict(spent))
        out[way] = {phase: statistics.median(c[phase] for c in calls) * 1000 for phase in calls[0]}
    return out


# -- checks and output ------------------------------------------------------------


def same_numbers(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    if [(r["criterion"], int(r["n"])) for r in a] != [(r["criterion"], int(r["n"])) for r in b]:
        return False
    return all(math.isclose(x["mean_value"], y["mean_value"], rel_tol=1e-9, abs_tol=1e-12) for x, y in zip(a, b))


def _report(figures: dict[str, Any], targets: list[dict[str, Any]], notes: list[str], as_json: bool) -> None:
    for key, value in figures.items():
        if isinstance(value, list):
            value = ", ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in value)
        elif isinstance(value, float):
            value = f"{value:.4f}"
        print(f"{SCENARIO}.{key} {value}")
    print_closing(SCENARIO, figures, targets, notes, as_json)


def measure(root: Path, workdir: Path, repeat: int) -> dict[str, Any]:
    done = best_of({
        "oloproof_in_process": lambda: query_in_process(root),
        "duckdb": lambda: query_duckdb(root),
        "oloproof_subprocess": lambda: query_subprocess(root, workdir),
        "oloproof_views": lambda: open_views(root),
    }, repeat)  # fmt: skip
    answer = done["duckdb"][2]
    agree = all(same_numbers(done[name][2], answer) for name in ("oloproof_in_process", "oloproof_subprocess"))
    best = {name: value[0] for name, value in done.items()}
    figures: dict[str, Any] = {f"{name}_best_s": seconds for name, seconds in best.items()}
    figures["in_process_duckdb_ratio"] = best["oloproof_in_process"] / best["duckdb"]
    figures["subprocess_duckdb_ratio"] = best["oloproof_subprocess"] / best["duckdb"]
    figures.update({f"{name}_s": value[1] for name, value in done.items()})
    figures.update(answers_agree=agree, groups=len(answer), observed_rows=sum(int(r["n"]) for r in answer))
    try:
        figures["phases_ms"] = phases(root, repeat)
    except AttributeError as error:  # a part's function was renamed: the ratio still stands
        figures["phases_error"] = f"phases not measured: {error}"
    return figures


def targets_for(figures: dict[str, Any], repeat: int) -> list[dict[str, Any]]:
    ratio = figures["in_process_duckdb_ratio"]
    return [target(
        "oloproof_query_vs_duckdb", f"in-process oloproof query <= {TARGET_RATIO}x plain DuckDB (best of {repeat})",
        figures["oloproof_in_process_best_s"], ratio, ratio <= TARGET_RATIO,
    )]  # fmt: skip


def notes_for(repeat: int, agree: bool) -> list[str]:
    notes = [
        f"SQL: {SQL.format(source='judgments')}",
        ("oloproof query lists the store and builds the views its statement names (here judgments, "
         "over runs/*/judgments.parquet of the complete runs) on each call; plain DuckDB reads the "
         "judgments files by glob only"),
        f"the subprocess figure includes interpreter start and imports ({' '.join(_command())})",
        f"each way: one warm-up call, then best of {repeat} (the ways take turns); OS file cache warm",
        f"{os.cpu_count()} CPUs; DuckDB {duckdb.__version__}",
    ]
    return notes if agree else [*notes, "the three answers DISAGREE"]


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    root = workdir / "results"
    if root.exists():
        raise SystemExit(f"{root} exists; name an empty --workdir")
    write_s = write_store(root, args.runs, args.rows)
    print(f"# wrote {args.runs} runs x {args.rows} judgments to {root} in {write_s:.1f} s", file=sys.stderr)
    parquet_mb = sum(p.stat().st_size for p in root.glob("runs/*/judgments.parquet")) / 1e6
    here = os.getcwd()
    os.chdir(workdir)  # no oloproof.yaml in the working folder: --results alone names the store
    try:
        measured = measure(root, workdir, args.repeat)
    finally:
        os.chdir(here)
    return {"runs": args.runs, "rows_per_run": args.rows, "rows": args.runs * args.rows,
            "write_s": write_s, "judgments_parquet_mb": parquet_mb, **measured}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="complete runs in the store (default 100)")
    parser.add_argument("--rows", type=int, default=10_000, help="judgment rows per run (default 10,000)")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls of each way after one warm-up")
    parser.add_argument("--workdir", default=None, metavar="DIR", help="where the store goes (kept)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work folder")
    parser.add_argument("--json", action="store_true", help="one JSON object on the last line of stdout")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir).resolve() if args.workdir else Path(tempfile.mkdtemp(prefix="oloproof-query-"))
    try:
        figures = run(args, workdir)
    finally:
        if not args.workdir and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    agree = figures["answers_agree"]
    _report(figures, targets_for(figures, args.repeat), notes_for(args.repeat, agree), args.json)
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
