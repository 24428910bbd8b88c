#!/usr/bin/env python
"""Recorded rows scored by ``document_retrieval``: `oloproof run` against ``evaluate()``.

Writes N seeded rows (default 100,000), each with 10 ground-truth labels and 10
retrieved documents, and the catalogue's ``document_retrieval`` criterion
(``ground_truth_label_min`` 0, ``ground_truth_label_max`` 4), then times, each in a
fresh process from spawn to exit:

* ``oloproof run --criteria criteria.json --dataset rows.jsonl`` against one
  ``prefect server start`` started before (not timed), with its peak RSS (the
  process and the children it reaped, ``wait4``);
* ``azure.ai.evaluation.evaluate()`` with ``DocumentRetrievalEvaluator`` over the
  same file, in the reference's own virtual environment (``--azure-python``;
  never the project's), when it is installed; else the row says why not.

    python benchmarks/bench_recorded.py --rows 100000 --json
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
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from _report import load_engine, print_closing, spy_prefix

HERE = Path(__file__).resolve().parent
WALL_TARGET_S = 60.0
RSS_TARGET_MB = 1500.0
CRITERIA = [{
    "type": "azure_ai_evaluator", "name": "document_retrieval", "evaluator_name": "builtin.document_retrieval",
    "initialization_parameters": {"ground_truth_label_min": 0, "ground_truth_label_max": 4},
    "data_mapping": {"retrieval_ground_truth": "{{item.retrieval_ground_truth}}",
                     "retrieved_documents": "{{item.retrieved_documents}}"},
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


def write_rows(folder: Path, rows: int, seed: int) -> Path:
    """``rows.jsonl``: per row 10 labelled documents of 30 and 10 retrieved, seeded."""
    rng = random.Random(seed)
    path = folder / "rows.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for n in range(rows):
            docs = [f"doc{i}" for i in range(30)]
            truth = [{"document_id": d, "query_relevance_label": rng.randint(0, 4)} for d in rng.sample(docs, 10)]
            shown = [{"document_id": d, "relevance_score": round(rng.uniform(0, 100), 3)} for d in rng.sample(docs, 10)]
            handle.write(json.dumps({"id": f"q{n}", "retrieval_ground_truth": truth, "retrieved_documents": shown}) + "\n")
    (folder / "criteria.json").write_text(json.dumps(CRITERIA, indent=2), encoding="utf-8")
    return path


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


def run_oloproof(folder: Path, engine: ModuleType, timeout: float, prefix: Sequence[str] = ()) -> dict[str, Any]:
    """One `oloproof run` of the rows against a running server, with a fresh store (``prefix``:
    a profiler's command line that runs it)."""
    with server_env(folder, engine) as env:
        env["OLOPROOF_SERVER"] = "temporary"
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
    return figures


def targets(rows: int, ours: dict[str, Any], azure: dict[str, Any]) -> list[dict[str, Any]]:
    """The scenario's targets, each ``{"name", "target", "measured", "ratio", "met"}``."""
    ok = ours.get("code") == 0
    out = [
        {"name": "recorded_wall_s", "target": f"oloproof run of {rows:,} recorded rows <= {WALL_TARGET_S:g} s",
         "measured": ours["wall_s"], "ratio": ours["wall_s"] / WALL_TARGET_S, "met": ok and ours["wall_s"] <= WALL_TARGET_S},
        {"name": "recorded_peak_rss_mb", "target": f"peak RSS <= {RSS_TARGET_MB:,.0f} MB",
         "measured": ours["peak_rss_mb"], "ratio": ours["peak_rss_mb"] / RSS_TARGET_MB,
         "met": ok and ours["peak_rss_mb"] <= RSS_TARGET_MB},
    ]  # fmt: skip
    if "wall_s" in azure and azure.get("code") == 0:
        ratio = ours["wall_s"] / azure["wall_s"]
        out.append({"name": "recorded_vs_azure", "target": "oloproof run < azure-ai-evaluation evaluate() on the same rows",
                    "measured": ratio, "ratio": ratio, "met": ok and ratio < 1})  # fmt: skip
    else:
        why = azure.get("error") or f"evaluate() exited {azure.get('code')}: {azure.get('stderr_tail', '')[-200:]}"
        out.append({"name": "recorded_vs_azure", "target": f"faster than azure-ai-evaluation (not measured: {why})",
                    "measured": None, "ratio": None, "met": None})  # fmt: skip
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--azure-python", default=os.environ.get("OLOPROOF_AZURE_PYTHON", "/tmp/azref/bin/python"))
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--py-spy", default=None, metavar="FILE",
                        help="profile the oloproof run with `py-spy record --gil` (raw collapsed stacks to FILE); "
                        "azure is then not run: a profiled run's figures compare with nothing")
    args = parser.parse_args()
    engine = load_engine()
    with tempfile.TemporaryDirectory(prefix="oloproof-recorded-") as tmp:
        folder = Path(tmp)
        write_rows(folder, args.rows, args.seed)
        ours = run_oloproof(folder, engine, args.timeout, spy_prefix(Path(args.py_spy)) if args.py_spy else ())
        if args.py_spy:
            azure: dict[str, Any] = {"error": "not run: the oloproof run was profiled (--py-spy)"}
        elif Path(args.azure_python).exists():
            azure = run_azure(folder, args.azure_python, engine, args.timeout)
        else:
            azure = {"error": f"{args.azure_python} does not exist"}
    notes = [
        f"{os.cpu_count()} CPUs; Python {platform.python_version()}",
        "rows: 10 ground-truth labels (0-4) of 30 documents and 10 retrieved documents with scores each, seeded",
        ("oloproof: `oloproof run --criteria --dataset` in a fresh process against one running Prefect server "
         "(started before, not timed), fresh store; peak RSS of the process and the children it reaped"),
        "azure: `evaluate()` with DocumentRetrievalEvaluator in its own venv, same rows file, fresh process",
    ]  # fmt: skip
    figures = {"rows": args.rows, "oloproof": ours, "azure": azure}
    for side in ("oloproof", "azure"):
        for key, value in figures[side].items():
            if key != "stderr_tail":
                print(f"recorded.{side}.{key} {value}")
    print_closing("recorded", figures, targets(args.rows, ours, azure), notes, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
