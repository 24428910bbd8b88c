#!/usr/bin/env python
"""Recorded rows scored by ``document_retrieval`` (or an LLM judge): `oloproof run` against ``evaluate()``.

Writes N seeded rows (default 100,000) and times, each in a fresh process from
spawn to exit:

* ``oloproof run --criteria criteria.json --dataset rows.jsonl`` against one
  ``prefect server start`` started before (not timed), with its peak RSS (the
  process and the children it reaped, ``wait4``);
* ``azure.ai.evaluation.evaluate()`` with ``DocumentRetrievalEvaluator`` over the
  same file, in the reference's own virtual environment (``--azure-python``;
  never the project's), when it is installed; else the row says why not.

``--judge document_retrieval`` (the default): each row has 10 ground-truth labels
and 10 retrieved documents, scored by the catalogue's ``document_retrieval``
criterion (``ground_truth_label_min`` 0, ``ground_truth_label_max`` 4).
``--judge groundedness``: each row a distinct query, context and response, judged
by the catalogue's ``groundedness`` over an OpenAI-compatible server in this
process that answers every request at once (azure is then not run: its
groundedness would call a real model).

    python benchmarks/bench_recorded.py --rows 100000 --json
    python benchmarks/bench_recorded.py --rows 1000000 --azure-timeout 1800 --json
    python benchmarks/bench_recorded.py --rows 100000 --judge groundedness --json
    python3 -m venv /tmp/azref && /tmp/azref/bin/pip install 'azure-ai-evaluation>=1.18,<1.19'

With ``--json`` the last line of stdout is ``{"scenario", "figures", "targets", "notes"}``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

from _report import load_engine, print_closing, spy_prefix

HERE = Path(__file__).resolve().parent
WALL_TARGET_S = 30.0
"""At 100,000 rows; at other sizes the target scales with the rows (wall linear in rows)."""
RSS_TARGET_MB = 1000.0
"""At 100,000 rows or fewer."""
RSS_TARGET_LARGE_MB = 1500.0
"""Above 100,000 rows: memory flat in the row count."""
AZURE_RATIO_TARGET = 0.5
"""oloproof's wall over ``evaluate()``'s on the same rows."""
CRITERIA = [{
    "type": "azure_ai_evaluator", "name": "document_retrieval", "evaluator_name": "builtin.document_retrieval",
    "initialization_parameters": {"ground_truth_label_min": 0, "ground_truth_label_max": 4},
    "data_mapping": {"retrieval_ground_truth": "{{item.retrieval_ground_truth}}",
                     "retrieved_documents": "{{item.retrieved_documents}}"},
}]  # fmt: skip
JUDGE_CRITERIA = [{
    "type": "azure_ai_evaluator", "name": "groundedness", "evaluator_name": "builtin.groundedness",
    "initialization_parameters": {"deployment_name": "bench"},
    "data_mapping": {"context": "{{item.context}}", "response": "{{item.response}}"},
}]  # fmt: skip

PROBE = "import importlib.metadata as m, azure.ai.evaluation; print(m.version('azure-ai-evaluation'))"

AZURE_SCRIPT = """\
import sys
from azure.ai.evaluation import DocumentRetrievalEvaluator, evaluate

evaluator = DocumentRetrievalEvaluator(ground_truth_label_min=0, ground_truth_label_max=4)
result = evaluate(
    data=sys.argv[1],
    evaluators={"document_retrieval": evaluator},
    evaluator_config={"document_retrieval": {"column_mapping": {
        "retrieval_ground_truth": "${data.retrieval_ground_truth}",
        "retrieved_documents": "${data.retrieved_documents}",
    }}},
    output_path=sys.argv[2],
)
print(len(result["rows"]))
"""


def write_rows(folder: Path, rows: int, seed: int, judge: str = "document_retrieval") -> Path:
    """``rows.jsonl`` and ``criteria.json``, seeded: per row 10 labelled documents of 30
    and 10 retrieved (``document_retrieval``), or a distinct query, context and response
    (``groundedness``)."""
    rng = random.Random(seed)
    path = folder / "rows.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for n in range(rows):
            if judge == "groundedness":
                hours = rng.randint(6, 11)
                row: dict[str, Any] = {
                    "id": f"q{n}", "query": f"When does store {n} open?",
                    "context": f"Store {n} opens at {hours}am on weekdays and at {hours + 1}am on Saturdays.",
                    "response": f"Store {n} opens at {hours}am on weekdays.",
                }  # fmt: skip
            else:
                docs = [f"doc{i}" for i in range(30)]
                row = {"id": f"q{n}",
                       "retrieval_ground_truth": [{"document_id": d, "query_relevance_label": rng.randint(0, 4)}
                                                  for d in rng.sample(docs, 10)],
                       "retrieved_documents": [{"document_id": d, "relevance_score": round(rng.uniform(0, 100), 3)}
                                               for d in rng.sample(docs, 10)]}  # fmt: skip
            handle.write(json.dumps(row) + "\n")
    criteria = JUDGE_CRITERIA if judge == "groundedness" else CRITERIA
    (folder / "criteria.json").write_text(json.dumps(criteria, indent=2), encoding="utf-8")
    return path


class _Verdicts(ThreadingHTTPServer):
    """An OpenAI-compatible chat completions server that answers every request at once."""

    daemon_threads = True
    requests = 0


class _VerdictHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Verdicts

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # http.server dispatches on this name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.server.requests += 1
        content = json.dumps({"score": 4, "reason": "supported by the context"})
        data = json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": "bench",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 12, "total_tokens": 132},
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def verdict_server() -> Iterator[_Verdicts]:
    """The stub judge, on a free port of 127.0.0.1, for as long as the block runs."""
    server = _Verdicts(("127.0.0.1", 0), _VerdictHandler)
    thread = threading.Thread(target=server.serve_forever, name="stub-judge", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def timed(argv: list[str], env: dict[str, str], cwd: Path, timeout: float, engine: ModuleType,
          name: str = "") -> dict[str, Any]:  # fmt: skip
    """One child from spawn to exit: its exit code, wall time and peak RSS (``wait4``); its
    output in ``out{name}.txt`` and ``err{name}.txt`` under ``cwd``."""
    begin = time.perf_counter()
    with (cwd / f"out{name}.txt").open("wb") as out, (cwd / f"err{name}.txt").open("wb") as err:
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=str(cwd), start_new_session=True)
        code, usage = engine.wait_child(process, timeout)
    wall = time.perf_counter() - begin
    return {"code": code, "wall_s": wall, "peak_rss_mb": usage.ru_maxrss / 1024,
            "stderr_tail": (cwd / f"err{name}.txt").read_text(encoding="utf-8", errors="replace")[-400:]}  # fmt: skip


@contextlib.contextmanager
def server_env(folder: Path, engine: ModuleType) -> Iterator[dict[str, str]]:
    """The environment of a child run against one Prefect server started here (not timed)."""
    args = argparse.Namespace(prefect_home=None, api_url=None, child_preload=None)
    bench = engine.Bench(args, folder / "work")
    bench.start_server()
    try:
        env = bench.child_env(folder / "unused.json")
        env.pop(engine.TIMINGS_ENV, None)
        yield env
    finally:
        bench.stop_server()


def run_oloproof(folder: Path, engine: ModuleType, timeout: float, prefix: Sequence[str] = (),
                 judge_url: str | None = None) -> dict[str, Any]:  # fmt: skip
    """One `oloproof run` of the rows against a running server, with a fresh store (``prefix``:
    a profiler's command line that runs it; ``judge_url``: the stub judge's base URL)."""
    with server_env(folder, engine) as env:
        env["OLOPROOF_SERVER"] = "temporary"
        for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
            env.pop(name, None)
        if judge_url is not None:
            env.update(OPENAI_BASE_URL=judge_url, OPENAI_API_KEY="bench-key")
        oloproof = Path(sys.executable).with_name("oloproof")
        argv = [*prefix, str(oloproof), "run", "--criteria", "criteria.json", "--dataset", "rows.jsonl",
                "--results", str(folder / "store"), "--json"]  # fmt: skip
        figures = timed(argv, env, folder, timeout, engine)
        if figures["code"] == 0:
            report = json.loads((folder / "out.txt").read_text(encoding="utf-8"))
            overall = next(m for m in report["metrics"] if m["slice"] is None)
            figures.update(case_count=report["case_count"], observed=overall["observed"])
        return figures


def run_azure(folder: Path, python: str, engine: ModuleType, timeout: float) -> dict[str, Any]:
    """``evaluate()`` over the same rows in the reference's own interpreter."""
    probe = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, check=False, timeout=300)
    if probe.returncode != 0:
        return {"error": f"azure-ai-evaluation not importable by {python}"}
    script = folder / "azure_evaluate.py"
    script.write_text(AZURE_SCRIPT, encoding="utf-8")
    azure = folder / "azure"
    azure.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_"))}
    env["PF_DISABLE_TRACING"] = "true"
    figures = timed([python, str(script), str(folder / "rows.jsonl"), str(azure / "result.json")], env, azure,
                     timeout, engine)  # fmt: skip
    figures["version"] = probe.stdout.strip()
    if figures["code"] != 0 and figures["wall_s"] >= timeout:
        figures["error"] = f"did not finish within {timeout:,.0f} s (stopped)"
    return figures


def targets(rows: int, judge: str, ours: dict[str, Any], azure: dict[str, Any]) -> list[dict[str, Any]]:
    """The scenario's targets, each ``{"name", "target", "measured", "ratio", "met"}``.

    Wall scales with the rows from 30 s at 100,000; peak RSS is 1,000 MB at 100,000 rows
    or fewer, 1,500 MB above. An LLM judge's run is judged beside the
    ``document_retrieval`` run by ``run_all.py`` (at most twice its wall); here its
    figures are reported.
    """
    ok = ours.get("code") == 0
    wall, rss = ours["wall_s"], ours["peak_rss_mb"]
    if judge != "document_retrieval":
        return [
            {"name": "recorded_judge_wall_s", "target": f"oloproof run of {rows:,} rows, {judge} over a stub judge: reported",
             "measured": wall, "ratio": None, "met": None if ok else False},
            {"name": "recorded_judge_peak_rss_mb", "target": "peak RSS: reported", "measured": rss, "ratio": None,
             "met": None if ok else False},
        ]  # fmt: skip
    wall_target = WALL_TARGET_S * rows / 100_000
    rss_target = RSS_TARGET_MB if rows <= 100_000 else RSS_TARGET_LARGE_MB
    out = [
        {"name": "recorded_wall_s", "target": f"oloproof run of {rows:,} recorded rows <= {wall_target:,.0f} s",
         "measured": wall, "ratio": wall / wall_target, "met": ok and wall <= wall_target},
        {"name": "recorded_peak_rss_mb", "target": f"peak RSS <= {rss_target:,.0f} MB",
         "measured": rss, "ratio": rss / rss_target, "met": ok and rss <= rss_target},
    ]  # fmt: skip
    if "wall_s" in azure and azure.get("code") == 0:
        ratio = wall / azure["wall_s"]
        out.append({"name": "recorded_vs_azure",
                    "target": f"oloproof run <= {AZURE_RATIO_TARGET}x azure-ai-evaluation evaluate() on the same rows",
                    "measured": ratio, "ratio": ratio / AZURE_RATIO_TARGET, "met": ok and ratio <= AZURE_RATIO_TARGET})  # fmt: skip
    else:
        why = azure.get("error") or f"evaluate() exited {azure.get('code')}: {azure.get('stderr_tail', '')[-200:]}"
        out.append({"name": "recorded_vs_azure",
                    "target": f"<= {AZURE_RATIO_TARGET}x azure-ai-evaluation evaluate() (not measured: {why})",
                    "measured": None, "ratio": None, "met": None})  # fmt: skip
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", choices=("document_retrieval", "groundedness"), default="document_retrieval")
    parser.add_argument("--azure-python", default=os.environ.get("OLOPROOF_AZURE_PYTHON", "/tmp/azref/bin/python"))
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--azure-timeout", type=float, default=None,
                        help="stop evaluate() after this many s (default: --timeout); the row then says so")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--py-spy", default=None, metavar="FILE",
                        help="profile the oloproof run with `py-spy record --gil` (raw collapsed stacks to FILE); "
                        "azure is then not run: a profiled run's figures compare with nothing")
    args = parser.parse_args()
    engine = load_engine()
    prefix = spy_prefix(Path(args.py_spy)) if args.py_spy else ()
    with tempfile.TemporaryDirectory(prefix="oloproof-recorded-") as tmp:
        folder = Path(tmp)
        write_rows(folder, args.rows, args.seed, args.judge)
        requests = None
        if args.judge == "groundedness":
            with verdict_server() as stub:
                url = f"http://127.0.0.1:{stub.server_address[1]}/v1"
                ours = run_oloproof(folder, engine, args.timeout, prefix, judge_url=url)
                requests = stub.requests
            azure: dict[str, Any] = {"error": "not run: groundedness would call a real model"}
        else:
            ours = run_oloproof(folder, engine, args.timeout, prefix)
            if args.py_spy:
                azure = {"error": "not run: the oloproof run was profiled (--py-spy)"}
            elif Path(args.azure_python).exists():
                azure = run_azure(folder, args.azure_python, engine, args.azure_timeout or args.timeout)
            else:
                azure = {"error": f"{args.azure_python} does not exist"}
    notes = [
        f"{os.cpu_count()} CPUs; Python {platform.python_version()}",
        ("rows: 10 ground-truth labels (0-4) of 30 documents and 10 retrieved documents with scores each, seeded"
         if args.judge == "document_retrieval" else
         f"rows: a distinct query, context and response each; groundedness over a stub server answering at once "
         f"(requests it received: {requests})"),
        ("oloproof: `oloproof run --criteria --dataset` in a fresh process against one running Prefect server "
         "(started before, not timed), fresh store; peak RSS of the process and the children it reaped"),
    ]  # fmt: skip
    if args.judge == "document_retrieval":
        notes.append("azure: `evaluate()` with DocumentRetrievalEvaluator in its own venv, same rows file, fresh process")
    figures = {"rows": args.rows, "judge": args.judge, "oloproof": ours, "azure": azure, "judge_requests": requests}
    for side in ("oloproof", "azure"):
        for key, value in figures[side].items():
            if key != "stderr_tail":
                print(f"recorded.{side}.{key} {value}")
    print_closing("recorded", figures, targets(args.rows, args.judge, ours, azure), notes, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
