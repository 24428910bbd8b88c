#!/usr/bin/env python
"""Baselines for the engine's targets: the same work done without oloproof.

Each scenario is a subcommand; each measures the denominator of one target:

* ``asyncio``: the synthetic system that ``bench_engine.py`` writes, called for
  every case (``retrieve`` then ``generate``) under an ``asyncio.Semaphore(C)``,
  blocking methods through ``asyncio.to_thread`` and ``async def`` ones awaited;
  no orchestration, no store. Its wall time against the ideal N·(r+g)/C, and the
  denominator of "oloproof's flow call <= 1.2x a bare asyncio loop".
* ``loop``: a plain Python loop at 0 ms latency that calls the stage methods,
  computes what the synthetic project's evaluators compute (contains, hit_rate@2,
  citation validity), builds rows with the columns of oloproof's ``cases``,
  ``retrievals`` and ``judgments`` tables and writes them with
  ``pyarrow.parquet.write_table``. Its cost per case and peak RSS: the
  denominator of "per-case cost at 10k <= 3x a bare Python loop".
* ``startup``: ``oloproof run examples/support_rag`` (13 cases, a fresh copy of
  the folder each time) against a hello-world Prefect flow with one task, each in
  a fresh Python process, with (a) an ephemeral Prefect server per process and
  (b) one running ``prefect server start`` (``PREFECT_API_URL``); best of 3.
  Target: the example <= 1.5x the hello-world flow in the same mode.

``--with-oloproof`` (asyncio, loop) also runs ``bench_engine.py`` on the same
synthetic project settings and evaluates the target; ``--oloproof-flow-s`` /
``--oloproof-ms-per-case`` take a figure measured earlier instead.

Every scenario prints one ``scenario.name value`` line per figure; with
``--json`` the last line of stdout is one object ``{"scenario", "figures",
"targets", "notes"}``, each target ``{"name", "target", "measured", "ratio",
"met"}`` with ``ratio`` = ``measured`` / the target's limit. Timings are
reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import importlib.util
import inspect
import json
import math
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any

from _report import load_engine, spy_prefix

ROOT = Path(__file__).resolve().parents[1]
ENGINE_FILE = Path(__file__).resolve().with_name("bench_engine.py")
EXAMPLE = ROOT / "examples" / "support_rag"
TARGETS = {
    "asyncio": 1.10,  # oloproof flow_s / bare asyncio wall
    "loop": 5.0,  # oloproof ms per case / bare loop ms per case
    "startup": 1.2,  # example / hello-world flow, same server mode
}


# ---------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------


def synthetic_system(
    directory: Path, *, cases: int, retrieve_ms: float, generate_ms: float, use_async: bool, concurrency: int
) -> dict[str, Any]:
    """Write bench_engine's synthetic project; import its system; load its cases."""
    engine = load_engine()
    begin = time.perf_counter()
    project = engine.write_project(
        directory, cases=cases, retrieve_ms=retrieve_ms, generate_ms=generate_ms, use_async=use_async,
        concurrency=concurrency, batch_size=None,
    )
    written = time.perf_counter()
    spec = importlib.util.spec_from_file_location("bench_synthetic_app", project / "app.py")
    assert spec is not None and spec.loader is not None
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)  # imports oloproof (Passage, Retrieval, rag_system)
    imported = time.perf_counter()
    with (project / "cases.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    loaded = time.perf_counter()
    declaration = getattr(app.BenchRag, "__oloproof_system__", None)
    return {
        "project": project,
        "system": app.BenchRag(),
        "cases": rows,
        "depth": getattr(declaration, "depth", None) or 4,
        "top_k": getattr(declaration, "top_k", None) or 2,
        "figures": {"project_write_s": written - begin, "system_import_s": imported - written,
                    "dataset_load_s": loaded - imported},
    }


def target(name: str, text: str, measured: float | None, limit: float) -> dict[str, Any]:
    """One entry of ``targets``: ``measured`` is the quotient the target bounds, so ``ratio`` is unset."""
    if measured is None:
        return {"name": name, "target": text, "measured": None, "ratio": None, "met": False}
    return {"name": name, "target": text, "measured": measured, "ratio": None,
            "met": bool(measured <= limit)}


def run_engine(args: argparse.Namespace, engine_argv: list[str], notes: list[str]) -> dict[str, Any]:
    """Run ``bench_engine.py ... --json`` in a child; return the figures of its one scenario.

    Its notes are added to ``notes``.
    """
    argv = [sys.executable, str(ENGINE_FILE), *engine_argv, "--json"]
    for extra in args.engine_arg:
        argv += shlex.split(extra)
    _log(f"running {' '.join(shlex.quote(a) for a in argv[1:])}")
    done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench_engine.py failed with exit code {done.returncode}")
    last = json.loads(done.stdout.strip().splitlines()[-1])
    notes.extend(f"bench_engine: {note}" for note in last.get("notes", []))
    return last["figures"]


def rss_now_mb() -> float | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return None


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # KiB on Linux


def emit(scenario: str, figures: dict[str, Any], targets: list[dict[str, Any]], notes: list[str],
         as_json: bool) -> None:
    engine = load_engine()
    engine._print_figures(scenario, figures)
    for entry in targets:
        measured = "n/a" if entry["measured"] is None else f"{entry['measured']:.4g}"
        print(f"{scenario}.target.{entry['name']} {measured} ({entry['target']}; met: {entry['met']})")
    for note in notes:
        print(f"# {note}")
    if as_json:
        print(json.dumps({"scenario": scenario, "figures": figures, "targets": targets, "notes": notes}))
    sys.stdout.flush()


def _log(message: str) -> None:
    print(f"# {message}", file=sys.stderr, flush=True)


def _platform_note() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} CPUs, load average {load:.2f} at the start; Python {sys.version.split()[0]}"


# ---------------------------------------------------------------------------
# asyncio: the bare concurrent loop
# ---------------------------------------------------------------------------


async def _bare_asyncio(system: Any, cases: list[dict[str, Any]], depth: int, top_k: int,
                        concurrency: int) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    # asyncio.to_thread uses the loop's default executor, min(32, cores + 4) threads:
    # 6 on 2 cores, which would cap blocking calls far below the semaphore.
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency)
    loop.set_default_executor(executor)
    semaphore = asyncio.Semaphore(concurrency)
    retrieve_async = inspect.iscoroutinefunction(system.retrieve)
    generate_async = inspect.iscoroutinefunction(system.generate)

    async def retrieve(case_input: Any) -> Any:
        if retrieve_async:
            return await system.retrieve(case_input, depth)
        return await asyncio.to_thread(system.retrieve, case_input, depth)

    async def generate(case_input: Any, context: list[Any]) -> Any:
        if generate_async:
            return await system.generate(case_input, context)
        return await asyncio.to_thread(system.generate, case_input, context)

    async def one(case: dict[str, Any]) -> Any:
        async with semaphore:
            retrieval = await retrieve(case["input"])
            return await generate(case["input"], list(retrieval.candidates[:top_k]))

    cpu0, begin = time.process_time(), time.perf_counter()
    outputs = await asyncio.gather(*(one(case) for case in cases))
    wall, cpu = time.perf_counter() - begin, time.process_time() - cpu0
    executor.shutdown(wait=True)
    answered = sum(1 for output in outputs if isinstance(output, dict) and output.get("answer"))
    return {"wall_s": wall, "cpu_s": cpu, "answered": answered,
            "threads": 0 if retrieve_async and generate_async else concurrency,
            "async_methods": retrieve_async and generate_async}


def scenario_asyncio(args: argparse.Namespace, workdir: Path) -> tuple[dict[str, Any], list[Any], list[str]]:
    made = synthetic_system(workdir / "asyncio-project", cases=args.cases, retrieve_ms=args.retrieve_ms,
                            generate_ms=args.generate_ms, use_async=args.use_async, concurrency=args.concurrency)
    measured = asyncio.run(_bare_asyncio(made["system"], made["cases"], made["depth"], made["top_k"],
                                         args.concurrency))
    ideal = args.cases * (args.retrieve_ms + args.generate_ms) / 1000.0 / args.concurrency
    figures: dict[str, Any] = {
        "cases": args.cases, "retrieve_ms": args.retrieve_ms, "generate_ms": args.generate_ms,
        "concurrency": args.concurrency, "async": measured["async_methods"], "threads": measured["threads"],
        "ideal_s": ideal,
        # One case holds a slot for r + g, so whole waves of C cases: the bound at small N.
        "ideal_waves_s": math.ceil(args.cases / args.concurrency) * (args.retrieve_ms + args.generate_ms) / 1000.0,
        "wall_s": measured["wall_s"],
        "ratio_to_ideal": measured["wall_s"] / ideal if ideal else None,
        "overhead_s": measured["wall_s"] - ideal,
        "overhead_ms_per_case": (measured["wall_s"] - ideal) / args.cases * 1000,
        "cpu_s": measured["cpu_s"], "answered": measured["answered"],
        "oloproof_flow_budget_s": TARGETS["asyncio"] * measured["wall_s"],
        **made["figures"],
    }
    notes = [
        _platform_note(),
        ("wall_s: first call to last answer (asyncio.gather of one coroutine per case, each holding the "
        "semaphore across its retrieve and generate); project writing, the import of the system and the "
        "dataset load are outside it"),
        (f"blocking methods run in a default executor of {args.concurrency} threads (asyncio's own default "
        f"is min(32, cores + 4) = {min(32, (os.cpu_count() or 1) + 4)} here, which would cap concurrency)"),
    ]
    if measured["answered"] != args.cases:
        notes.append(f"only {measured['answered']} of {args.cases} cases answered")
    flow_s = args.oloproof_flow_s
    if args.with_oloproof and flow_s is None:
        engine_argv = ["--scenario", "latency", "--cases", str(args.cases), "--retrieve-ms", str(args.retrieve_ms),
                       "--generate-ms", str(args.generate_ms), "--concurrency", str(args.concurrency)]
        if args.use_async:
            engine_argv.append("--async")
        engine = run_engine(args, engine_argv, notes)
        flow_s = engine.get("flow_s")
        for key in ("flow_s", "flow_body_s", "command_s", "flow_ratio", "command_ratio", "cpu_oloproof_s"):
            if key in engine:
                figures[f"oloproof_{key}"] = engine[key]
        notes.append("oloproof figures: bench_engine.py --scenario latency with the same settings, run "
                     "right after the bare loop")
    targets = []
    if flow_s is not None:
        figures["oloproof_flow_s"] = flow_s
        figures["oloproof_flow_vs_bare"] = flow_s / measured["wall_s"]
        if "oloproof_command_s" in figures:
            figures["oloproof_command_vs_bare"] = figures["oloproof_command_s"] / measured["wall_s"]
        targets.append(target("oloproof_flow_vs_bare_asyncio",
                              f"oloproof flow_s <= {TARGETS['asyncio']} x bare asyncio wall_s",
                              figures["oloproof_flow_vs_bare"], TARGETS["asyncio"]))
    else:
        notes.append(f"target: oloproof's flow_s <= {TARGETS['asyncio']} x wall_s = "
                     f"{figures['oloproof_flow_budget_s']:.2f} s; --with-oloproof (or --oloproof-flow-s) "
                     "evaluates it")
    return figures, targets, notes


# ---------------------------------------------------------------------------
# loop: the bare sequential loop with pyarrow
# ---------------------------------------------------------------------------


def _normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _arrow_schema(pa: Any, table: Any) -> Any:
    types = {"VARCHAR": pa.string(), "JSON": pa.string(), "TIMESTAMP": pa.string(), "BIGINT": pa.int64(),
             "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}
    schema = pa.schema([(column, types[kind]) for column, kind in table.columns])
    return schema.with_metadata({"oloproof.table": table.name, "oloproof.json_columns": ",".join(table.json_columns)})


class _Rows:
    """Rows of the three tables for one run, built case by case."""

    EVALUATORS = (  # (criterion, evaluator type, binary), as in the synthetic project's oloproof.yaml
        ("answer_correct", "contains", True),
        ("hit_rate_at_2", "hit_rate", False),
        ("citations_valid", "citation_validity", True),
    )

    def __init__(self, run_id: str, top_k: int, judgment_columns: tuple[str, ...]) -> None:
        import hashlib

        self.run_id, self.top_k = run_id, top_k
        self.cases: list[dict[str, Any]] = []
        self.retrievals: list[dict[str, Any]] = []
        self.judgments: list[dict[str, Any]] = []
        self.empty_judgment = dict.fromkeys(judgment_columns)
        self.spec_hashes = {
            evaluator: hashlib.sha256(_json({"type": evaluator, "criterion": criterion}).encode()).hexdigest()
            for criterion, evaluator, _ in self.EVALUATORS
        }
        self.totals = dict.fromkeys((criterion for criterion, _, _ in self.EVALUATORS), 0.0)

    def add(self, case: dict[str, Any], retrieval: Any, output: Any, retrieve_ms: float, generate_ms: float) -> None:
        run_id, case_id, top_k = self.run_id, case["id"], self.top_k
        expected = dict(case.get("expected") or {})
        if expected.get("relevant"):  # as oloproof records it: every label with its grade
            expected["relevant"] = [{**item, "grade": float(item.get("grade", 1.0))} for item in expected["relevant"]]
        grades = {str(item["doc_id"]): float(item.get("grade", 1.0)) for item in expected.get("relevant") or []}
        candidates = retrieval.candidates
        context = candidates[:top_k]
        # contains: the expected answer inside the output's answer, whitespace- and case-normalized.
        references = expected.get("answer")
        references = references if isinstance(references, list) else [references]
        actual = output.get("answer") if isinstance(output, dict) else None
        contains = actual is not None and any(_normalize(str(ref)) in _normalize(str(actual)) for ref in references)
        # hit_rate@2: a relevant doc among the first two candidates.
        hit = 1.0 if any(grades.get(p.doc_id, 0.0) > 0 for p in candidates[:2]) else 0.0
        # citation validity: every cited id is a context passage's doc_id (or doc_id#chunk_id).
        cited = output.get("citations") if isinstance(output, dict) else None
        cited = [] if cited is None else [str(c) for c in cited] if isinstance(cited, list) else [str(cited)]
        allowed = {p.doc_id for p in context} | {f"{p.doc_id}#{p.chunk_id}" for p in context if p.chunk_id}
        citations = all(item in allowed for item in cited)
        best = next((i + 1 for i, p in enumerate(candidates) if grades.get(p.doc_id, 0.0) > 0), None)
        label = "unlabelled" if not grades else "none" if best is None else (
            str(best) if best <= top_k else "beyond_top_k")
        self.cases.append({
            "run_id": run_id, "case_id": case_id, "status": "ok", "error_stage": None, "error": None,
            "execution_key": None, "retrieval_key": None, "assembly_key": None, "generation_key": None,
            "query": retrieval.query, "execution_hit": False, "retrieve_hit": False, "generate_hit": False,
            "input": _json(case["input"]), "expected": _json(expected), "metadata": _json(case.get("metadata") or {}),
            "output": _json(output),
            "context": _json([{"doc_id": p.doc_id, "chunk_id": p.chunk_id, "position": i + 1, "tokens": None}
                              for i, p in enumerate(context)]),
            "dropped": _json([{"position": i + 1, "doc_id": p.doc_id, "chunk_id": p.chunk_id, "text": p.text,
                               "reason": "beyond_top_k", "tokens": None}
                              for i, p in enumerate(candidates) if i >= top_k]),
            "best_relevant_position": best, "relevant_position": label, "context_truncated": False,
            "retrieve_ms": retrieve_ms, "generate_ms": generate_ms,
        })
        for i, p in enumerate(candidates):
            kept = i < top_k
            self.retrievals.append({
                "run_id": run_id, "case_id": case_id, "position": i + 1, "doc_id": p.doc_id, "chunk_id": p.chunk_id,
                "score": p.score, "text": p.text, "in_top_k": kept, "in_context": kept,
                "drop_reason": None if kept else "beyond_top_k", "relevant_grade": grades.get(p.doc_id),
            })
        for (criterion, evaluator, binary), value in zip(self.EVALUATORS, (float(contains), hit, float(citations))):
            self.totals[criterion] += value
            self.judgments.append({
                **self.empty_judgment, "run_id": run_id, "case_id": case_id, "criterion": criterion,
                "evaluator": evaluator, "spec_hash": self.spec_hashes[evaluator], "status": "observed",
                "outcome": "completed", "score": value, "value": value,
                "passed": bool(value) if binary else None, "label": ("pass" if value else "fail") if binary else None,
                "detail": "{}", "hit": False,
            })


def _bare_loop_sync(system: Any, cases: list[dict[str, Any]], depth: int, rows: _Rows) -> float:
    clock, calls = time.perf_counter, 0.0
    for case in cases:
        t0 = clock()
        retrieval = system.retrieve(case["input"], depth)
        t1 = clock()
        output = system.generate(case["input"], list(retrieval.candidates[: rows.top_k]))
        t2 = clock()
        calls += t2 - t0
        rows.add(case, retrieval, output, (t1 - t0) * 1000, (t2 - t1) * 1000)
    return calls


async def _bare_loop_async(system: Any, cases: list[dict[str, Any]], depth: int, rows: _Rows) -> float:
    clock, calls = time.perf_counter, 0.0
    for case in cases:
        t0 = clock()
        retrieval = await system.retrieve(case["input"], depth)
        t1 = clock()
        output = await system.generate(case["input"], list(retrieval.candidates[: rows.top_k]))
        t2 = clock()
        calls += t2 - t0
        rows.add(case, retrieval, output, (t1 - t0) * 1000, (t2 - t1) * 1000)
    return calls


def scenario_loop(args: argparse.Namespace, workdir: Path) -> tuple[dict[str, Any], list[Any], list[str]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise SystemExit("the loop baseline needs pyarrow, which oloproof does not depend on: pip install pyarrow")
    from oloproof.store import CASES, JUDGMENTS, RETRIEVALS

    made = synthetic_system(workdir / "loop-project", cases=args.cases, retrieve_ms=args.retrieve_ms,
                            generate_ms=args.generate_ms, use_async=args.use_async, concurrency=1)
    system, cases, depth = made["system"], made["cases"], made["depth"]
    tables = (CASES, RETRIEVALS, JUDGMENTS)
    schemas = {table.name: _arrow_schema(pa, table) for table in tables}
    out = workdir / "loop-results" / "runs" / "run_bare_loop"
    out.mkdir(parents=True, exist_ok=True)
    rss_before = rss_now_mb()
    peak_before = peak_rss_mb()
    rows = _Rows("run_bare_loop", made["top_k"], JUDGMENTS.names)
    is_async = inspect.iscoroutinefunction(system.retrieve)

    cpu0, begin = time.process_time(), time.perf_counter()
    calls_s = (asyncio.run(_bare_loop_async(system, cases, depth, rows)) if is_async
               else _bare_loop_sync(system, cases, depth, rows))
    looped = time.perf_counter()
    built = {
        "cases": pa.Table.from_pylist(rows.cases, schema=schemas["cases"]),
        "retrievals": pa.Table.from_pylist(rows.retrievals, schema=schemas["retrievals"]),
        "judgments": pa.Table.from_pylist(rows.judgments, schema=schemas["judgments"]),
    }
    tabled = time.perf_counter()
    for name, table in built.items():
        pq.write_table(table, out / f"{name}.parquet")
    written = time.perf_counter()
    cpu = time.process_time() - cpu0
    total = written - begin
    n = args.cases
    figures: dict[str, Any] = {
        "cases": n, "retrieve_ms": args.retrieve_ms, "generate_ms": args.generate_ms, "async": is_async,
        "total_s": total, "ms_per_case": total / n * 1000,
        "loop_s": looped - begin, "calls_s": calls_s, "rows_and_metrics_s": looped - begin - calls_s,
        "tables_s": tabled - looped, "write_s": written - tabled, "cpu_s": cpu,
        "calls_ms_per_case": calls_s / n * 1000, "cpu_ms_per_case": cpu / n * 1000,
        "peak_rss_mb": peak_rss_mb(), "rss_before_loop_mb": rss_before, "peak_rss_before_loop_mb": peak_before,
        "rows_cases": built["cases"].num_rows, "rows_retrievals": built["retrievals"].num_rows,
        "rows_judgments": built["judgments"].num_rows,
        "parquet_mb": sum((out / f"{name}.parquet").stat().st_size for name in built) / 1e6,
        **{f"mean_{criterion}": total_value / n for criterion, total_value in rows.totals.items()},
        **made["figures"],
        "pyarrow": pa.__version__,
    }
    figures["oloproof_ms_per_case_budget"] = TARGETS["loop"] * figures["ms_per_case"]
    notes = [
        _platform_note(),
        ("total_s: the loop over the cases (stage calls, metrics, row dicts) plus pa.Table.from_pylist and "
        "pq.write_table of the cases, retrievals and judgments tables (snappy); writing the project, importing "
        "the system and loading the dataset are outside it"),
        ("the rows have every column of oloproof.store.CASES/RETRIEVALS/JUDGMENTS; identity keys are null "
        "(a bare loop caches nothing), JSON columns are sorted-key JSON text"),
        ("peak_rss_mb is this process's ru_maxrss (imports included: rss_before_loop_mb); oloproof's "
        "peak_rss_mb in bench_engine is the command's, its ephemeral Prefect server included"),
    ]
    per_case = args.oloproof_ms_per_case
    if args.with_oloproof and per_case is None:
        engine_argv = ["--scenario", "memory", "--cases", str(n), "--retrieve-ms", str(args.retrieve_ms),
                       "--generate-ms", str(args.generate_ms)]
        if args.use_async:
            engine_argv.append("--async")
        engine = run_engine(args, engine_argv, notes)
        per_case = engine.get("flow_ms_per_case")
        for key in ("flow_s", "command_s", "flow_ms_per_case", "command_ms_per_case", "peak_rss_mb",
                    "peak_rss_oloproof_mb", "cpu_oloproof_s"):
            if key in engine:
                figures[f"oloproof_{key}"] = engine[key]
        notes.append("oloproof figures: bench_engine.py --scenario memory with the same cases, run right "
                     "after the bare loop; its per-case cost is flow_s / cases (process and Prefect server "
                     "start-up left out, as the bare loop leaves out its imports)")
    targets = []
    if per_case is not None:
        figures["oloproof_ms_per_case"] = per_case
        figures["oloproof_vs_bare"] = per_case / figures["ms_per_case"]
        if "oloproof_command_ms_per_case" in figures:
            figures["oloproof_command_vs_bare"] = figures["oloproof_command_ms_per_case"] / figures["ms_per_case"]
        if "oloproof_cpu_oloproof_s" in figures:
            # The oloproof process's whole CPU time (imports and start-up included) per case.
            figures["oloproof_cpu_ms_per_case"] = figures["oloproof_cpu_oloproof_s"] / n * 1000
            figures["oloproof_cpu_vs_bare_cpu"] = figures["oloproof_cpu_ms_per_case"] / figures["cpu_ms_per_case"]
        targets.append(target("oloproof_per_case_vs_bare_loop",
                              f"oloproof ms per case (flow_s / cases) <= {TARGETS['loop']} x the bare loop's",
                              figures["oloproof_vs_bare"], TARGETS["loop"]))
    else:
        notes.append(f"target: oloproof's ms per case <= {TARGETS['loop']} x {figures['ms_per_case']:.3f} = "
                     f"{figures['oloproof_ms_per_case_budget']:.3f} ms; --with-oloproof (or "
                     "--oloproof-ms-per-case) evaluates it")
    return figures, targets, notes


# ---------------------------------------------------------------------------
# startup: the 13-case example against a hello-world Prefect flow
# ---------------------------------------------------------------------------

HELLO = '''\
"""A hello-world Prefect flow with one task (benchmarks/bench_baselines.py startup)."""

from prefect import flow, task


@task
def hello(name: str) -> str:
    return f"hello, {name}"


@flow
def hello_flow(name: str = "world") -> str:
    return hello(name)


if __name__ == "__main__":
    print(hello_flow())
'''


def _timed(argv: list[str], env: dict[str, str], cwd: Path, log: Path, timeout: float) -> dict[str, Any]:
    """Run one fresh process; its wall time (spawn to exit) and peak RSS."""
    with log.with_suffix(".out").open("wb") as stdout, log.with_suffix(".err").open("wb") as stderr:
        begin = time.perf_counter()
        process = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env=env, cwd=str(cwd),
                                   start_new_session=True)
        code, usage = load_engine().wait_child(process, timeout)
        wall = time.perf_counter() - begin
    if code != 0:
        tail = log.with_suffix(".err").read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"{' '.join(argv[-2:])} exited with {code} after {wall:.1f} s (--timeout "
                         f"{timeout:.0f} s):\n{tail}")
    # wait4: the process and the descendants it reaped (the ephemeral server among them).
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss * 1024 / 1e6}


def scenario_startup(args: argparse.Namespace, workdir: Path) -> tuple[dict[str, Any], list[Any], list[str]]:
    engine = load_engine()
    example = Path(args.example).resolve()
    if not (example / "oloproof.yaml").exists():
        raise SystemExit(f"{example} holds no oloproof.yaml")
    hello = workdir / "hello_flow.py"
    hello.write_text(HELLO, encoding="utf-8")
    script = Path(sys.executable).with_name("oloproof")
    run_example = [str(script)] if script.exists() else [
        sys.executable, "-c", "import sys; from oloproof._cli.main import main; sys.exit(main())"]
    figures: dict[str, Any] = {"repeat": args.repeat, "example": str(example.relative_to(ROOT))
                               if example.is_relative_to(ROOT) else str(example)}
    targets: list[dict[str, Any]] = []
    best: dict[str, dict[str, float]] = {}
    copies = 0
    for mode in args.modes:
        home = workdir / f"prefect-home-{mode}"
        home.mkdir(parents=True, exist_ok=True)
        bench_args = engine.build_parser().parse_args(["--prefect-home", str(home)])
        bench = engine.Bench(bench_args, workdir)
        try:
            if mode == "server":
                began = time.perf_counter()
                bench.start_server()
                figures["server_start_s"] = time.perf_counter() - began
            env = bench.child_env(workdir / "unused.json")
            env.pop(engine.TIMINGS_ENV, None)
            # The first command in a new PREFECT_HOME (or against a new server) creates its database: not
            # what a repeated run pays, so it is timed apart, with the hello-world flow.
            first = _timed([sys.executable, str(hello)], env, workdir, workdir / f"{mode}-hello-first",
                           args.timeout)
            figures[f"{mode}_hello_first_s"] = first["wall_s"]
            times: dict[str, list[float]] = {"hello": [], "example": []}
            cpus: dict[str, list[float]] = {"hello": [], "example": []}
            rss: dict[str, float] = {"hello": 0.0, "example": 0.0}
            spy = {name: spy_prefix(Path(f"{args.py_spy}-{mode}-{name}.txt")) if args.py_spy else []
                   for name in ("hello", "example")}  # fmt: skip
            for i in range(args.repeat):
                done = _timed([*spy["hello"], sys.executable, str(hello)], env, workdir, workdir / f"{mode}-hello-{i}",
                              args.timeout)  # fmt: skip
                times["hello"].append(done["wall_s"])
                cpus["hello"].append(done["cpu_s"])
                rss["hello"] = max(rss["hello"], done["peak_rss_mb"])
                copies += 1
                copy = workdir / f"example-{copies:02d}"
                shutil.copytree(example, copy, ignore=shutil.ignore_patterns(".oloproof", "__pycache__"))
                done = _timed([*spy["example"], *run_example, "run", str(copy)], env, workdir,
                              workdir / f"{mode}-example-{i}", args.timeout)
                times["example"].append(done["wall_s"])
                cpus["example"].append(done["cpu_s"])
                rss["example"] = max(rss["example"], done["peak_rss_mb"])
                _log(f"{mode} #{i + 1}: hello {times['hello'][-1]:.2f} s, example {times['example'][-1]:.2f} s")
                if not args.keep:
                    shutil.rmtree(copy, ignore_errors=True)
        finally:
            bench.stop_server()
        best[mode] = {name: min(values) for name, values in times.items()}
        for name in ("hello", "example"):
            figures[f"{mode}_{name}_best_s"] = best[mode][name]
            figures[f"{mode}_{name}_all_s"] = times[name]
            figures[f"{mode}_{name}_best_cpu_s"] = min(cpus[name])
            figures[f"{mode}_{name}_peak_rss_mb"] = rss[name]
        ratio = best[mode]["example"] / best[mode]["hello"]
        figures[f"{mode}_example_vs_hello"] = ratio
        figures[f"{mode}_example_minus_hello_s"] = best[mode]["example"] - best[mode]["hello"]
        figures[f"{mode}_example_vs_hello_cpu"] = min(cpus["example"]) / min(cpus["hello"])
        targets.append(target(f"example_vs_hello_{mode}",
                              f"oloproof run of the 13-case example <= {TARGETS['startup']} x a hello-world "
                              f"Prefect flow, both {'ephemeral server' if mode == 'ephemeral' else 'against a running server'}"
                              f" (best of {args.repeat})", ratio, TARGETS["startup"]))
    notes = [
        _platform_note(),
        ("each timing is one fresh process from spawn to exit: `python hello_flow.py` (one @flow calling one "
        "@task) and the `oloproof` console script (`oloproof run <fresh copy of the example, without "
        ".oloproof>`); hello and example alternate; the first command of each mode (database creation) is "
        "timed apart as <mode>_hello_first_s"),
        ("ephemeral: no PREFECT_API_URL, so each process starts Prefect's temporary server (a subprocess) and "
        "stops it at exit; server: one `prefect server start --no-services` started before (not timed) and "
        "PREFECT_API_URL set"),
        ("<mode>_*_best_cpu_s: the least CPU time of a process and the descendants it reaped (the ephemeral "
         "server's included), steadier than wall time on a loaded machine"),
    ]
    if "ephemeral" in best and "server" in best:
        saved_example = best["ephemeral"]["example"] - best["server"]["example"]
        saved_hello = best["ephemeral"]["hello"] - best["server"]["hello"]
        figures["example_saved_by_server_s"] = saved_example
        figures["hello_saved_by_server_s"] = saved_hello
        notes.append(
            "to skip the temporary server's start on repeated runs, run one server (`prefect server start`) and "
            "point every run at it: `export PREFECT_API_URL=http://127.0.0.1:4200/api` (or `prefect config set "
            f"PREFECT_API_URL=...`); measured here: the example {best['ephemeral']['example']:.2f} s -> "
            f"{best['server']['example']:.2f} s ({saved_example:+.2f} s saved a run), the hello-world flow "
            f"{best['ephemeral']['hello']:.2f} s -> {best['server']['hello']:.2f} s ({saved_hello:+.2f} s)"
        )
    return figures, targets, notes


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

SCENARIOS = {"asyncio": scenario_asyncio, "loop": scenario_loop, "startup": scenario_startup}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench_baselines.py",
        description="Baselines for oloproof's engine targets (see the module docstring and benchmarks/README.md).",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true",
                        help='end with one JSON line {"scenario", "figures", "targets", "notes"}')
    common.add_argument("--workdir", default=None, metavar="DIR",
                        help="where projects and logs go (default: a new temp dir, removed unless --keep)")
    common.add_argument("--keep", action="store_true", help="keep the work dir")
    engine = argparse.ArgumentParser(add_help=False)
    engine.add_argument("--async", dest="use_async", action="store_true",
                        help="the synthetic system's methods are `async def` (as bench_engine.py --async)")
    engine.add_argument("--with-oloproof", action="store_true",
                        help="also run bench_engine.py with the same settings and evaluate the target")
    engine.add_argument("--engine-arg", action="append", default=[], metavar="ARGS",
                        help="extra bench_engine.py arguments with --with-oloproof, e.g. '--start-server' "
                             "(repeatable)")
    commands = parser.add_subparsers(dest="scenario", required=True, metavar="SCENARIO")

    bare = commands.add_parser("asyncio", parents=[common, engine],
                               help="the synthetic system under an asyncio.Semaphore; wall vs N*(r+g)/C")
    bare.add_argument("--cases", type=int, default=2000, help="cases (default 2000)")
    bare.add_argument("--retrieve-ms", type=float, default=20.0, help="retrieve() sleep (default 20)")
    bare.add_argument("--generate-ms", type=float, default=200.0, help="generate() sleep (default 200)")
    bare.add_argument("--concurrency", type=int, default=32, help="semaphore size and threads (default 32)")
    bare.add_argument("--oloproof-flow-s", type=float, default=None, metavar="S",
                      help="oloproof's flow_s measured earlier on the same settings (instead of --with-oloproof)")

    loop = commands.add_parser("loop", parents=[common, engine],
                               help="a plain loop: calls, metrics, rows, pyarrow Parquet; ms per case and peak RSS")
    loop.add_argument("--cases", type=int, default=10_000, help="cases (default 10000)")
    loop.add_argument("--retrieve-ms", type=float, default=0.0, help="retrieve() sleep (default 0)")
    loop.add_argument("--generate-ms", type=float, default=0.0, help="generate() sleep (default 0)")
    loop.add_argument("--oloproof-ms-per-case", type=float, default=None, metavar="MS",
                      help="oloproof's flow ms per case measured earlier (instead of --with-oloproof)")

    startup = commands.add_parser("startup", parents=[common],
                                  help="the 13-case example vs a hello-world Prefect flow, ephemeral and server")
    startup.add_argument("--repeat", type=int, default=3, help="timed runs of each, best taken (default 3)")
    startup.add_argument("--modes", default="ephemeral,server",
                         help="comma list of ephemeral and/or server (default: both)")
    startup.add_argument("--example", default=str(EXAMPLE), help="the project to run (default examples/support_rag)")
    startup.add_argument("--timeout", type=float, default=600.0, help="kill a process that takes longer (s, default 600)")
    startup.add_argument("--py-spy", default=None, metavar="PREFIX",
                         help="profile each hello and example process with `py-spy record --gil` (raw stacks to "
                         "PREFIX-<mode>-hello.txt and PREFIX-<mode>-example.txt, the last repeat's); the timings "
                         "are then not comparable")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.scenario == "startup":
        args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        if not args.modes or set(args.modes) - {"ephemeral", "server"}:
            raise SystemExit("--modes takes ephemeral and/or server")
        if args.repeat < 1:
            raise SystemExit("--repeat must be at least 1")
    elif args.cases < 1:
        raise SystemExit("--cases must be at least 1")
    if args.workdir:
        workdir = Path(args.workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        workdir = Path(tempfile.mkdtemp(prefix="oloproof-baseline-"))
    _log(f"work dir {workdir}")
    try:
        figures, targets, notes = SCENARIOS[args.scenario](args, workdir)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        elif args.keep:
            _log(f"kept {workdir}")
    emit(args.scenario, figures, targets, notes, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
