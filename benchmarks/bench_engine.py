#!/usr/bin/env python
"""Engine benchmarks for oloproof: how close a run comes to the ideal wall time.

The script writes a synthetic project into a temporary folder (a ``@rag_system``
whose ``retrieve``/``generate`` only sleep, N generated cases, the evaluators
``contains``, ``hit_rate k=2`` and ``citation_validity``), then runs the real
``oloproof run`` command on it in a child process and reports where the time
went. See ``benchmarks/README.md`` for what every figure means.

Scenarios:

* ``latency`` (default): one cold run of N cases against the ideal
  ``N * (retrieve + generate) / max_concurrency``; target: within 1.25x.
* ``rerun``: the same project run twice; the second run is all execution-cache
  hits; target: warm/cold under 10%.
* ``memory``: 100,000 cases at 0 ms latency; target: peak RSS under 1.5 GB.
* ``rerun10``: a cold run; then the generations of 10% of the cases (a seeded
  choice) are deleted from the results store and the run is repeated; target:
  that warm run's flow within 20% of the cold run's. A third run, with nothing
  changed, gives the ``rerun`` ratio of the same project.

Every scenario prints one ``name value`` line per figure, then one JSON line
with all of them (the last line of stdout), for machines. With ``--json`` that
last line is instead one object per scenario, ``{"scenario", "figures",
"targets", "notes"}``, each target ``{"name", "target", "measured", "ratio",
"met"}`` where ``ratio`` is ``measured`` over the target's limit (``null`` for a
target that is not a bound).

The child process is ``python bench_engine.py __child__ run <project>``: the
real CLI entry point (``oloproof._cli.main.main``) with a few timers attached
through import hooks, so the command that is timed is the one users run.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib.abc
import importlib.machinery
import json
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

# This folder is on sys.path: the scripts run as files.
from _report import spy_format, spy_prefix

CHILD_FLAG = "__child__"
TIMINGS_ENV = "OLOPROOF_BENCH_TIMINGS"
PRELOAD_ENV = "OLOPROOF_BENCH_PRELOAD"
TARGETS = {
    "latency": 1.25,  # flow (and command) time / ideal
    "rerun": 0.10,  # warm / cold
    "memory_bytes": 1.5e9,  # peak RSS (decimal GB)
    "rerun10": 0.20,  # warm / cold with 10% of the generations invalidated
}
SCENARIO_DEFAULT_CASES = {"latency": [2000], "rerun": [2000], "memory": [100_000], "rerun10": [2000]}


# ---------------------------------------------------------------------------
# The synthetic project
# ---------------------------------------------------------------------------

APP_TEMPLATE = '''\
"""Synthetic RAG system for benchmarks/bench_engine.py: it only sleeps.

retrieve sleeps {retrieve_ms} ms, generate sleeps {generate_ms} ms ({flavour}).
"""

import asyncio
import time

from oloproof import Passage, Retrieval, rag_system

RETRIEVE_S = {retrieve_s!r}
GENERATE_S = {generate_s!r}
DOCS = {docs}
TEXT = "Synthetic passage {{}}: a sentence of filler text that gives every record a realistic size. " * 2


def _retrieval(input, depth):
    n = input["n"]
    candidates = tuple(
        Passage(doc_id=f"doc-{{(n + i) % DOCS:05d}}", score=float(depth - i), text=TEXT.replace("{{}}", str(n + i)))
        for i in range(depth)
    )
    return Retrieval(query=input["question"], depth=depth, candidates=candidates)


def _answer(input, context):
    cited = [context[0].doc_id] if context else []
    return {{"answer": f"The answer is {{input['n']}}.", "citations": cited}}


@rag_system(name="bench-rag", version="v1", depth=4, top_k=2, index_version="bench-index-1")
class BenchRag:
{methods}
'''

SYNC_METHODS = '''\
    def retrieve(self, input, depth):
        if RETRIEVE_S:
            time.sleep(RETRIEVE_S)
        return _retrieval(input, depth)

    def generate(self, input, context):
        if GENERATE_S:
            time.sleep(GENERATE_S)
        return _answer(input, context)
'''

ASYNC_METHODS = '''\
    async def retrieve(self, input, depth):
        if RETRIEVE_S:
            await asyncio.sleep(RETRIEVE_S)
        return _retrieval(input, depth)

    async def generate(self, input, context):
        if GENERATE_S:
            await asyncio.sleep(GENERATE_S)
        return _answer(input, context)
'''

CONFIG_TEMPLATE = """\
# Synthetic project written by benchmarks/bench_engine.py.
system:
  name: bench-rag
  version: v1
  rag:
    object: app:BenchRag
    depth: 4
    top_k: 2
    index_version: bench-index-1

dataset: cases.jsonl

evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
  - {{type: hit_rate, k: 2}}
  - {{type: citation_validity}}

results: {results}
max_concurrency: {concurrency}
{extra}"""

DOCS = 500
TOPICS = ("billing", "account", "shipping", "security", "api")


def write_project(
    directory: Path,
    *,
    cases: int,
    retrieve_ms: float,
    generate_ms: float,
    use_async: bool,
    concurrency: int,
    batch_size: int | None,
) -> Path:
    """Write the synthetic project; returns its folder."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "app.py").write_text(
        APP_TEMPLATE.format(
            retrieve_ms=retrieve_ms,
            generate_ms=generate_ms,
            flavour="async def + asyncio.sleep" if use_async else "def + time.sleep",
            retrieve_s=retrieve_ms / 1000.0,
            generate_s=generate_ms / 1000.0,
            docs=DOCS,
            methods=ASYNC_METHODS if use_async else SYNC_METHODS,
        ),
        encoding="utf-8",
    )
    results = directory / "results"
    extra = f"batch_size: {batch_size}\n" if batch_size else ""
    (directory / "oloproof.yaml").write_text(
        CONFIG_TEMPLATE.format(results=json.dumps(str(results)), concurrency=concurrency, extra=extra),
        encoding="utf-8",
    )
    with (directory / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for n in range(cases):
            # Every other case has its relevant doc at position 1 or 3 (hit_rate@2 ~ 50%).
            relevant = f"doc-{(n + (0 if n % 2 == 0 else 2)) % DOCS:05d}"
            case = {
                "id": f"case-{n:06d}",
                "input": {"question": f"Synthetic question number {n} about {TOPICS[n % len(TOPICS)]}?", "n": n},
                "expected": {"answer": f"answer is {n}.", "relevant": [{"doc_id": relevant}]},
                "metadata": {"topic": TOPICS[n % len(TOPICS)]},
            }
            handle.write(json.dumps(case, separators=(",", ":")) + "\n")
    return directory


# ---------------------------------------------------------------------------
# The child: the real CLI with timers attached
# ---------------------------------------------------------------------------


class _PostImportHook(importlib.abc.MetaPathFinder):
    """Call ``callback(module)`` right after ``name`` is first imported (import order unchanged)."""

    def __init__(self, name: str, callback: Any, durations: dict[str, float] | None = None) -> None:
        self.name = name
        self.callback = callback
        self.durations = durations

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader, callback, durations = spec.loader, self.callback, self.durations
        original = loader.exec_module

        def exec_module(module: Any) -> None:
            begin = time.perf_counter()
            original(module)
            if durations is not None:
                durations[fullname] = time.perf_counter() - begin
            callback(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _child_main(argv: list[str]) -> int:
    """Run ``oloproof <argv>`` in this process with timers; write them at exit."""
    started_epoch = time.time()
    clock0 = time.perf_counter()
    out_path = os.environ[TIMINGS_ENV]
    marks: dict[str, float] = {}
    server_starts: list[float] = []
    imports: dict[str, float] = {}
    stage_lock = threading.Lock()
    stages: dict[str, list[float]] = {}  # stage -> [first_t, last_t, count]

    def now() -> float:
        return time.perf_counter() - clock0

    def write_timings() -> None:
        # Registered first, so it runs last: after Prefect stopped its ephemeral server.
        marks["atexit"] = now()
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        data = {
            "child_start_epoch": started_epoch,
            "marks": marks,
            "server_start_s": sum(server_starts),
            "imports_s": imports,
            "server_started_at": marks.get("server_start_begin"),
            "stages": {name: {"first_s": v[0], "last_s": v[1], "count": v[2]} for name, v in stages.items()},
            "maxrss_self_kb": own.ru_maxrss,
            "maxrss_children_kb": children.ru_maxrss,
            "cpu_user_s": own.ru_utime,
            "cpu_sys_s": own.ru_stime,
            "children_cpu_s": children.ru_utime + children.ru_stime,
        }
        Path(out_path).write_text(json.dumps(data), encoding="utf-8")

    atexit.register(write_timings)

    def progress(stage: str, count: int) -> None:
        t = now()
        with stage_lock:
            entry = stages.get(stage)
            if entry is None:
                stages[stage] = [t, t, count]
            else:
                entry[1] = t
                entry[2] += count

    def patch_server(module: Any) -> None:
        marks["server_import_end"] = now()
        cls = module.SubprocessASGIServer
        original = cls.start

        def start(self: Any, *args: Any, **kwargs: Any) -> Any:
            if getattr(self, "running", False):
                return original(self, *args, **kwargs)
            begin = now()
            marks.setdefault("server_start_begin", begin)
            try:
                return original(self, *args, **kwargs)
            finally:
                server_starts.append(now() - begin)
                marks["server_start_end"] = now()

        cls.start = start

    def patch_tasks(module: Any) -> None:
        original = module.prepare_environment

        def prepare_environment(*args: Any, **kwargs: Any) -> Any:
            marks["prepare_begin"] = now()
            try:
                env = original(*args, **kwargs)
            finally:
                marks["prepare_end"] = now()
            env.on_progress = progress
            return env

        module.prepare_environment = prepare_environment

    def patch_flows(module: Any) -> None:
        import functools

        import oloproof.flows._run as run

        body = run.run_stages

        @functools.wraps(body)
        def timed_body(*args: Any, **kwargs: Any) -> Any:
            marks["flow_body_begin"] = now()
            try:
                return body(*args, **kwargs)
            finally:
                marks["flow_body_end"] = now()

        run.run_stages = timed_body
        call = run.PreparedRun.__call__

        @functools.wraps(call)
        def timed_call(self: Any, **options: Any) -> Any:
            marks["evaluate_begin"] = now()
            try:
                return call(self, **options)
            finally:
                marks["evaluate_end"] = now()

        run.PreparedRun.__call__ = timed_call

    sys.meta_path.insert(0, _PostImportHook("prefect.server.api.server", patch_server, imports))
    sys.meta_path.insert(0, _PostImportHook("oloproof.tasks", patch_tasks))
    sys.meta_path.insert(0, _PostImportHook("oloproof.flows", patch_flows))

    preload = os.environ.get(PRELOAD_ENV)
    if preload:
        # --child-preload: try an engine change (monkeypatch) without editing src/.
        import runpy

        marks["preload_begin"] = now()
        runpy.run_path(preload, run_name="__oloproof_bench_preload__")
        marks["preload_end"] = now()
    marks["main_begin"] = now()
    from oloproof._cli.main import main

    code = main(argv)
    marks["main_end"] = now()
    sys.stdout.flush()
    return code


# ---------------------------------------------------------------------------
# The parent: run the child, collect figures
# ---------------------------------------------------------------------------


class Bench:
    """Shared settings of one benchmark invocation."""

    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.workdir = workdir
        self.prefect_home = Path(args.prefect_home) if args.prefect_home else workdir / "prefect-home"
        self.prefect_home.mkdir(parents=True, exist_ok=True)
        self.api_url: str | None = args.api_url
        self.server: subprocess.Popen[bytes] | None = None
        self.commands = 0
        self.projects = 0

    # -- environment ---------------------------------------------------------

    def child_env(self, timings: Path) -> dict[str, str]:
        env = dict(os.environ)
        for name in list(env):
            if name.startswith("PREFECT_API_") or name == "PREFECT_PROFILE":
                env.pop(name)
        env["PREFECT_HOME"] = str(self.prefect_home)
        env.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
        env.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        env.setdefault("DO_NOT_TRACK", "1")
        if self.api_url:
            env["PREFECT_API_URL"] = self.api_url
        env[TIMINGS_ENV] = str(timings)
        if self.args.child_preload:
            env[PRELOAD_ENV] = str(Path(self.args.child_preload).resolve())
        env.pop("PYTHONPROFILEIMPORTTIME", None)
        return env

    def start_server(self) -> None:
        """``--start-server``: one ``prefect server start`` for every command of this invocation."""
        port = _free_port()
        env = self.child_env(self.workdir / "unused.json")
        env.pop(TIMINGS_ENV)
        log = (self.workdir / "prefect-server.log").open("wb")
        prefect = Path(sys.executable).with_name("prefect")
        command = [str(prefect)] if prefect.exists() else [sys.executable, "-m", "prefect"]
        begin = time.perf_counter()
        self.server = subprocess.Popen(
            [*command, "server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-services"],
            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
        self.api_url = f"http://127.0.0.1:{port}/api"
        import urllib.error
        import urllib.request

        deadline = time.monotonic() + 180
        while True:
            if self.server.poll() is not None:
                raise SystemExit(f"prefect server exited early; see {self.workdir / 'prefect-server.log'}")
            try:
                with urllib.request.urlopen(f"{self.api_url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                raise SystemExit("prefect server did not answer within 180 s")
            time.sleep(0.2)
        _log(f"started prefect server at {self.api_url} in {time.perf_counter() - begin:.1f} s (not counted)")

    def stop_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGTERM)
            try:
                self.server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait()
        self.server = None

    # -- one command -------------------------------------------------------

    def run_cli(self, project: Path, label: str) -> dict[str, Any]:
        """Run ``oloproof run <project>`` in a child; return its figures."""
        self.commands += 1
        base = self.workdir / f"cmd{self.commands:02d}-{label}"
        timings, out, err = (base.with_suffix(s) for s in (".timings.json", ".out", ".err"))
        argv = [sys.executable, str(Path(__file__).resolve()), CHILD_FLAG, "run", str(project)]
        for override in self.args.overrides:
            argv += ["--set", override]
        if self.args.py_spy:
            argv = self.py_spy_prefix(label) + argv
        sampler = _RssSampler(interval=self.args.rss_interval)
        revision = _engine_revision()
        with out.open("wb") as stdout, err.open("wb") as stderr:
            begin_epoch = time.time()
            begin = time.perf_counter()
            process = subprocess.Popen(
                argv, stdout=stdout, stderr=stderr, env=self.child_env(timings),
                cwd=str(project), start_new_session=True,
            )
            sampler.start(process.pid)
            try:
                process.returncode, usage = wait_child(process, self.args.timeout)
            finally:
                sampler.stop()
            command_s = time.perf_counter() - begin
        if process.returncode != 0:
            tail = err.read_text(encoding="utf-8", errors="replace")[-4000:]
            raise SystemExit(f"`oloproof run` ({label}) failed with exit code {process.returncode}:\n{tail}")
        figures = self.figures(command_s, begin_epoch, usage, timings, out, sampler)
        figures["engine_revision"] = revision
        if figures.get("missing_judgments") or "run_id" not in figures:
            raise SystemExit(
                f"`oloproof run` ({label}) left {figures.get('missing_judgments')} judgments missing: the "
                f"synthetic system failed, so the figures would be meaningless; see {out} (kept with --keep)"
            )
        _log(f"{label}: command {command_s:.2f} s, flow {figures.get('flow_s', float('nan')):.2f} s")
        return figures

    def py_spy_prefix(self, label: str) -> list[str]:
        target = Path(self.args.py_spy)
        target = target.with_name(f"{target.stem}-{label}{target.suffix or '.txt'}")
        _log(f"py-spy ({spy_format(target)}) -> {target}")
        return spy_prefix(target, rate=self.args.py_spy_rate, gil=self.args.py_spy_gil)

    def figures(
        self, command_s: float, begin_epoch: float, usage: Any, timings: Path, out: Path, sampler: _RssSampler
    ) -> dict[str, Any]:
        data = json.loads(timings.read_text(encoding="utf-8")) if timings.exists() else {}
        marks = data.get("marks", {})
        figures: dict[str, Any] = {"command_s": command_s}

        def span(a: str, b: str) -> float | None:
            return marks[b] - marks[a] if a in marks and b in marks else None

        figures["interpreter_start_s"] = data["child_start_epoch"] - begin_epoch if data else None
        figures["pre_flow_s"] = marks.get("evaluate_begin")  # imports, validation, dataset load
        figures["prepare_s"] = span("prepare_begin", "prepare_end")
        figures["evaluate_s"] = span("evaluate_begin", "evaluate_end")
        # Ephemeral mode only: the client imports Prefect's server app, then starts it as a subprocess.
        server_import_s = data.get("imports_s", {}).get("prefect.server.api.server", 0.0)
        server_s = data.get("server_start_s", 0.0)

        def in_evaluate(mark: str) -> bool:
            return (
                marks.get(mark) is not None
                and figures["evaluate_s"] is not None
                and marks["evaluate_begin"] <= marks[mark] <= marks["evaluate_end"]
            )

        figures["server_import_s"] = server_import_s
        figures["server_start_s"] = server_s
        figures["flow_s"] = (
            figures["evaluate_s"]
            - (server_s if in_evaluate("server_start_begin") else 0.0)
            - (server_import_s if in_evaluate("server_import_end") else 0.0)
            if figures["evaluate_s"] is not None
            else None
        )
        figures["flow_body_s"] = span("flow_body_begin", "flow_body_end")
        if figures["flow_s"] is not None and figures["flow_body_s"] is not None:
            figures["flow_engine_overhead_s"] = figures["flow_s"] - figures["flow_body_s"]
        figures["report_s"] = span("evaluate_end", "main_end")
        figures["exit_s"] = (
            command_s - (marks["main_end"] + figures["interpreter_start_s"]) if "main_end" in marks else None
        )
        stages = data.get("stages", {})
        ends = [v["last_s"] for k, v in stages.items()]
        firsts = [v["first_s"] for k, v in stages.items()]
        if ends and "flow_body_begin" in marks:
            figures["calls_window_s"] = max(ends) - min(firsts)
            figures["body_before_first_call_s"] = min(firsts) - marks["flow_body_begin"]
            figures["body_after_last_call_s"] = marks["flow_body_end"] - max(ends)
        for name, value in sorted(stages.items()):
            figures[f"stage_{name}_calls"] = value["count"]
            figures[f"stage_{name}_window_s"] = value["last_s"] - value["first_s"]
        # ru_maxrss is in KiB on Linux; wait4 reports max(child, its reaped descendants).
        # Under --py-spy the waited-for child is py-spy, so the child's own figures are used.
        self_kb, children_kb = data.get("maxrss_self_kb", 0), data.get("maxrss_children_kb", 0)
        figures["peak_rss_mb"] = (max(self_kb, children_kb) if self.args.py_spy else usage.ru_maxrss) * 1024 / 1e6
        figures["peak_rss_oloproof_mb"] = self_kb * 1024 / 1e6
        figures["peak_rss_prefect_server_mb"] = children_kb * 1024 / 1e6
        if sampler.samples:
            figures["peak_rss_tree_sampled_mb"] = max(s[1] for s in sampler.samples) / 1e6
        figures["cpu_oloproof_s"] = data.get("cpu_user_s", 0.0) + data.get("cpu_sys_s", 0.0)
        figures["cpu_prefect_server_s"] = data.get("children_cpu_s", 0.0)
        text = out.read_text(encoding="utf-8", errors="replace")
        figures.update(_parse_report(text))
        if self.args.rss_timeline and sampler.samples:
            path = Path(f"{self.args.rss_timeline}-{self.commands:02d}.csv")
            with path.open("w", encoding="utf-8") as handle:
                handle.write("t_s,tree_rss_bytes\n")
                for t, rss in sampler.samples:
                    handle.write(f"{t - (data.get('child_start_epoch', begin_epoch) - begin_epoch):.3f},{rss}\n")
        return {k: v for k, v in figures.items() if v is not None}


class _RssSampler:
    """Samples the RSS of the child's process tree (psutil, when installed)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, pid: int) -> None:
        if self.interval <= 0:
            return
        try:
            import psutil
        except ImportError:
            return
        begin = time.perf_counter()

        def loop() -> None:
            try:
                root = psutil.Process(pid)
            except psutil.Error:
                return
            while not self._stop.is_set():
                try:
                    total = root.memory_info().rss
                    for child in root.children(recursive=True):
                        with contextlib.suppress(psutil.Error):
                            total += child.memory_info().rss
                except psutil.Error:
                    return
                self.samples.append((time.perf_counter() - begin, total))
                self._stop.wait(self.interval)

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


_CACHE_LINE = re.compile(r"Cache: execution (\d+) hit/(\d+) miss; judgment (\d+) hit/(\d+) miss")
_STAGES_LINE = re.compile(r"Stages: retrieve (\d+) hit/(\d+) miss; generate (\d+) hit/(\d+) miss")
_RUN_LINE = re.compile(r"^Run (run_\S+)", re.MULTILINE)
_MISSING = re.compile(r"(\d+) missing")


def _parse_report(text: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if match := _RUN_LINE.search(text):
        found["run_id"] = match.group(1)
    if match := _CACHE_LINE.search(text):
        keys = ("execution_hits", "execution_misses", "judgment_hits", "judgment_misses")
        found.update(zip(keys, map(int, match.groups())))
    found["missing_judgments"] = sum(int(m) for m in _MISSING.findall(text))
    if match := _STAGES_LINE.search(text):
        keys = ("retrieve_hits", "retrieve_misses", "generate_hits", "generate_misses")
        found.update(zip(keys, map(int, match.groups())))
    return found


def _engine_revision() -> str:
    """The checkout's commit (read-only git), with ``+dirty`` when ``src/`` has uncommitted changes."""
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            check=False, capture_output=True, text=True, timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "src"],
            check=False, capture_output=True, text=True, timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (commit or "unknown") + ("+dirty" if dirty else "")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def wait_child(process: subprocess.Popen, timeout: float) -> tuple[int, Any]:
    """Wait for a child started in a session of its own; kill its group past ``timeout``
    (or if the wait is interrupted).

    Returns:
        Its exit code and the ``wait4`` resource usage: the child and the descendants
        it reaped (an ephemeral Prefect server among them).
    """
    killer = threading.Timer(timeout, _kill_group, (process.pid,))
    killer.daemon = True
    killer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    except BaseException:
        _kill_group(process.pid)
        raise
    finally:
        killer.cancel()
    return os.waitstatus_to_exitcode(status), usage


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _log(message: str) -> None:
    print(f"# {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------


def _project(bench: Bench, name: str, cases: int, retrieve_ms: float, generate_ms: float) -> Path:
    args = bench.args
    bench.projects += 1
    begin = time.perf_counter()
    path = write_project(
        bench.workdir / f"p{bench.projects:02d}-{name}", cases=cases, retrieve_ms=retrieve_ms, generate_ms=generate_ms,
        use_async=args.use_async, concurrency=args.concurrency, batch_size=args.batch_size,
    )
    _log(f"wrote {cases} cases to {path} in {time.perf_counter() - begin:.1f} s")
    if not args.prefect_home:
        # A fresh PREFECT_HOME (database included) per scenario project: every first command is cold.
        bench.prefect_home = path / ".prefect-home"
        bench.prefect_home.mkdir(parents=True, exist_ok=True)
    return path


def _ideal(cases: int, retrieve_ms: float, generate_ms: float, concurrency: int) -> float:
    return cases * (retrieve_ms + generate_ms) / 1000.0 / concurrency


def scenario_latency(bench: Bench, cases: int) -> dict[str, Any]:
    args = bench.args
    retrieve_ms, generate_ms = _latencies(args, default=(20.0, 200.0))
    project = _project(bench, f"latency-{cases}", cases, retrieve_ms, generate_ms)
    figures = bench.run_cli(project, f"latency-{cases}")
    ideal = _ideal(cases, retrieve_ms, generate_ms, args.concurrency)
    result = {"cases": cases, "retrieve_ms": retrieve_ms, "generate_ms": generate_ms, "ideal_s": ideal, **figures}
    if ideal > 0:
        result["flow_ratio"] = figures["flow_s"] / ideal
        result["flow_body_ratio"] = figures["flow_body_s"] / ideal
        result["command_ratio"] = figures["command_s"] / ideal
        if "calls_window_s" in figures:
            result["calls_window_ratio"] = figures["calls_window_s"] / ideal
        result["target_ratio"] = TARGETS["latency"]
        result["flow_meets_target"] = result["flow_ratio"] <= TARGETS["latency"]
        result["command_meets_target"] = result["command_ratio"] <= TARGETS["latency"]
    return result


def scenario_rerun(bench: Bench, cases: int) -> dict[str, Any]:
    args = bench.args
    retrieve_ms, generate_ms = _latencies(args, default=(20.0, 200.0))
    project = _project(bench, f"rerun-{cases}", cases, retrieve_ms, generate_ms)
    cold = bench.run_cli(project, f"rerun-{cases}-cold")
    warm = bench.run_cli(project, f"rerun-{cases}-warm")
    result: dict[str, Any] = {"cases": cases, "retrieve_ms": retrieve_ms, "generate_ms": generate_ms,
                              "ideal_s": _ideal(cases, retrieve_ms, generate_ms, args.concurrency)}
    for prefix, figures in (("cold", cold), ("warm", warm)):
        for key, value in figures.items():
            result[f"{prefix}_{key}"] = value
    for key in ("command_s", "flow_s", "flow_body_s"):
        if cold.get(key):
            result[f"warm_cold_{key[:-2]}_ratio"] = warm[key] / cold[key]
    result["target_ratio"] = TARGETS["rerun"]
    result["warm_all_execution_hits"] = warm.get("execution_hits") == cases and warm.get("execution_misses") == 0
    result["flow_meets_target"] = result.get("warm_cold_flow_ratio", math.inf) < TARGETS["rerun"]
    result["command_meets_target"] = result.get("warm_cold_command_ratio", math.inf) < TARGETS["rerun"]
    return result


def scenario_memory(bench: Bench, cases: int) -> dict[str, Any]:
    args = bench.args
    retrieve_ms, generate_ms = _latencies(args, default=(0.0, 0.0))
    project = _project(bench, f"memory-{cases}", cases, retrieve_ms, generate_ms)
    figures = bench.run_cli(project, f"memory-{cases}")
    result = {"cases": cases, "retrieve_ms": retrieve_ms, "generate_ms": generate_ms, **figures}
    result["target_peak_rss_mb"] = TARGETS["memory_bytes"] / 1e6
    result["peak_rss_ratio"] = figures["peak_rss_mb"] / result["target_peak_rss_mb"]
    result["meets_target"] = figures["peak_rss_mb"] * 1e6 <= TARGETS["memory_bytes"]
    result["flow_ms_per_case"] = figures["flow_s"] / cases * 1000
    result["command_ms_per_case"] = figures["command_s"] / cases * 1000
    return result


def _startup_split(figures: dict[str, Any]) -> dict[str, Any]:
    """Process and Prefect start-up of one command, apart from its flow.

    ``process_start_s`` is interpreter start, imports, validation and dataset load
    (up to the flow call); ``prefect_server_start_s`` the ephemeral server's import
    and start (0 against a running server); ``startup_s`` their sum; ``after_flow_s``
    the report and the interpreter's (and ephemeral server's) shutdown.
    """
    out: dict[str, Any] = {}
    if figures.get("pre_flow_s") is not None:
        out["process_start_s"] = figures.get("interpreter_start_s", 0.0) + figures["pre_flow_s"]
    if figures.get("evaluate_s") is not None and figures.get("flow_s") is not None:
        out["prefect_server_start_s"] = figures["evaluate_s"] - figures["flow_s"]  # what flow_s leaves out
    else:
        out["prefect_server_start_s"] = figures.get("server_import_s", 0.0) + figures.get("server_start_s", 0.0)
    if "process_start_s" in out:
        out["startup_s"] = out["process_start_s"] + out["prefect_server_start_s"]
    if figures.get("report_s") is not None and figures.get("exit_s") is not None:
        out["after_flow_s"] = figures["report_s"] + figures["exit_s"]
    return out


def _table_rows(path: Path, columns: str) -> list[tuple[Any, ...]]:
    """Rows of a run table (DuckDB, a dependency of oloproof), in case order."""
    import duckdb

    with duckdb.connect() as connection:
        return connection.execute(
            f"SELECT {columns} FROM read_parquet(?) ORDER BY case_id", [str(path)]
        ).fetchall()


def _invalidate_generations(
    project: Path, run_id: str, fraction: float, seed: int, batch_size: int | None
) -> dict[str, Any]:
    """Delete the generations of a seeded ``fraction`` of the run's cases from the store.

    A generation is cached three ways, and each must go for the case to be
    generated again: its record under ``cache/generate`` (a pack's; forgotten through
    the store's record cache); the case's execution record under ``cache/execute`` (a
    case found there runs no stage at all); and Prefect's record of the batch that generated
    it, ``prefect/oloproof-generate-v<schema>.<format>-<digest>`` (replayed whenever
    a later batch has the same cases and keys: always with one case per batch).
    Batch records are located by recomputing their keys as the engine does; when
    that finds none, every generate batch record is deleted instead (the others
    hold only cases the next run serves from the execution cache).
    """
    import random

    results = project / "results"
    rows = _table_rows(results / "runs" / run_id / "cases.parquet", "case_id, execution_key, generation_key")
    if any(generation is None or execution is None for _, execution, generation in rows):
        raise SystemExit(f"run {run_id} has cases without a generation or execution key")
    k = max(1, round(fraction * len(rows)))
    chosen = sorted(random.Random(seed).sample([case_id for case_id, _, _ in rows], k))
    chosen_set = set(chosen)
    from oloproof.store import ResultsStore

    store = ResultsStore(str(results))
    missing: list[str] = []
    for stage, column in (("generate", 2), ("execute", 1)):
        keys = [row[column] for row in rows if row[0] in chosen_set]
        present = store.record_keys(stage)
        missing += [f"{stage}/{key}" for key in keys if key not in present]
        store.remove_records(stage, keys)
    if missing:
        raise SystemExit(f"expected cache records not found (layout changed?): {missing[:3]}")
    prefect_dir = results / "prefect"
    deleted_batches, how = 0, "recomputed batch keys"
    try:
        from oloproof.stages._batch import plan_batches
        from oloproof.stages._identity import SCHEMA_VERSION, content_hash
        from oloproof.tasks._policy import BATCH_FORMAT

        order = [json.loads(line)["id"] for line in (project / "cases.jsonl").open(encoding="utf-8")]
        generation = {case_id: key for case_id, _, key in rows}
        for batch in plan_batches(order, batch_size):
            if chosen_set.isdisjoint(batch.case_ids):
                continue
            pairs = sorted((case_id, generation[case_id]) for case_id in batch.case_ids)
            digest = content_hash({"stage": "generate", "cases": pairs})
            record = prefect_dir / f"oloproof-generate-v{SCHEMA_VERSION}.{BATCH_FORMAT}-{digest}"
            if record.exists():
                record.unlink()
                deleted_batches += 1
    except ImportError:
        pass
    if deleted_batches == 0:
        how = "every generate batch record (batch keys not found)"
        for record in prefect_dir.glob("oloproof-generate-*"):
            record.unlink()
            deleted_batches += 1
    return {"cases": chosen, "generate_records": k, "execute_records": k,
            "prefect_batch_records": deleted_batches, "prefect_batch_records_by": how}


def _check_invalidated(project: Path, warm: dict[str, Any], chosen: list[str], cases: int) -> dict[str, Any]:
    """Whether the warm run generated exactly the invalidated cases again."""
    k = len(chosen)
    expected = {"execution_hits": cases - k, "execution_misses": k, "retrieve_hits": k, "retrieve_misses": 0,
                "generate_hits": 0, "generate_misses": k}
    stages_ok = all(warm.get(key) == value for key, value in expected.items())
    rows = _table_rows(project / "results" / "runs" / warm["run_id"] / "cases.parquet",
                       "case_id, execution_hit, generate_hit")
    generated = sorted(case_id for case_id, execution_hit, generate_hit in rows
                       if not execution_hit and not generate_hit)
    return {
        "stages_line": (f"Stages: retrieve {warm.get('retrieve_hits')} hit/{warm.get('retrieve_misses')} miss; "
                        f"generate {warm.get('generate_hits')} hit/{warm.get('generate_misses')} miss"),
        "stages_expected": (f"Stages: retrieve {k} hit/0 miss; generate 0 hit/{k} miss "
                            f"(execution {cases - k} hit/{k} miss)"),
        "stages_match": stages_ok,
        "generated_cases_match": generated == chosen,
        "generated_cases": len(generated),
    }


def scenario_rerun10(bench: Bench, cases: int) -> dict[str, Any]:
    args = bench.args
    retrieve_ms, generate_ms = _latencies(args, default=(20.0, 200.0))
    project = _project(bench, f"rerun10-{cases}", cases, retrieve_ms, generate_ms)
    cold = bench.run_cli(project, f"rerun10-{cases}-cold")
    invalidated = _invalidate_generations(project, cold["run_id"], args.invalidate, args.seed, args.batch_size)
    chosen = invalidated.pop("cases")
    _log(f"invalidated the generations of {len(chosen)} cases ({invalidated})")
    warm = bench.run_cli(project, f"rerun10-{cases}-warm")
    check = _check_invalidated(project, warm, chosen, cases)
    unchanged = bench.run_cli(project, f"rerun10-{cases}-unchanged")
    result: dict[str, Any] = {
        "cases": cases, "retrieve_ms": retrieve_ms, "generate_ms": generate_ms,
        "ideal_s": _ideal(cases, retrieve_ms, generate_ms, args.concurrency),
        # The warm run's own ideal: only the invalidated cases' generate calls.
        "warm_ideal_s": len(chosen) * generate_ms / 1000.0 / args.concurrency,
        "invalidated_fraction": args.invalidate, "invalidated_cases": len(chosen), "seed": args.seed,
        "invalidated_first": chosen[0], **{f"deleted_{key}": value for key, value in invalidated.items()},
        **check,
    }
    for key in ("flow_s", "command_s", "flow_body_s"):
        if cold.get(key):
            result[f"warm_cold_{key[:-2]}_ratio"] = warm[key] / cold[key]
            result[f"unchanged_cold_{key[:-2]}_ratio"] = unchanged[key] / cold[key]
    result["target_ratio"] = TARGETS["rerun10"]
    result["unchanged_target_ratio"] = TARGETS["rerun"]
    result["unchanged_all_execution_hits"] = (
        unchanged.get("execution_hits") == cases and unchanged.get("execution_misses") == 0
    )
    for prefix, figures in (("cold", cold), ("warm", warm), ("unchanged", unchanged)):
        for key, value in {**figures, **_startup_split(figures)}.items():
            result[f"{prefix}_{key}"] = value
        if figures.get("flow_s") is not None:
            result[f"{prefix}_command_minus_flow_s"] = figures["command_s"] - figures["flow_s"]
    if result.get("cold_startup_s") and result.get("warm_startup_s") is not None:
        # The command's ratio with each run's process and Prefect start-up left out.
        result["warm_cold_command_less_startup_ratio"] = (
            (warm["command_s"] - result["warm_startup_s"]) / (cold["command_s"] - result["cold_startup_s"])
        )
    result["flow_meets_target"] = result.get("warm_cold_flow_ratio", math.inf) <= TARGETS["rerun10"]
    result["command_meets_target"] = result.get("warm_cold_command_ratio", math.inf) <= TARGETS["rerun10"]
    return result


SCENARIOS = {"latency": scenario_latency, "rerun": scenario_rerun, "memory": scenario_memory,
             "rerun10": scenario_rerun10}


def _target(name: str, text: str, measured: float | None, limit: float, strict: bool = False) -> dict[str, Any]:
    """One entry of ``targets``: ``measured`` is the quotient the target bounds, so ``ratio`` is unset."""
    if measured is None:
        return {"name": name, "target": text, "measured": None, "ratio": None, "met": False}
    met = measured < limit if strict else measured <= limit
    return {"name": name, "target": text, "measured": measured, "ratio": None,
            "met": bool(met)}


def scenario_targets(scenario: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets of one scenario's result, in the ``--json`` shape."""
    if "runs" in result:  # several case counts: each run's targets, named by its count
        return [
            {**entry, "name": f"{entry['name']}[{run['cases']}]"}
            for run in result["runs"]
            for entry in scenario_targets(scenario, run)
        ]
    get = result.get
    if scenario == "latency":
        limit = TARGETS["latency"]
        return [
            _target("flow_ratio", f"flow_s <= {limit} x ideal_s", get("flow_ratio"), limit),
            _target("command_ratio", f"command_s <= {limit} x ideal_s (ideally)", get("command_ratio"), limit),
        ]
    if scenario == "rerun":
        limit = TARGETS["rerun"]
        return [
            _target("warm_cold_flow_ratio", f"warm flow_s < {limit} x cold flow_s", get("warm_cold_flow_ratio"),
                    limit, strict=True),
            _target("warm_cold_command_ratio", f"warm command_s < {limit} x cold command_s",
                    get("warm_cold_command_ratio"), limit, strict=True),
        ]
    if scenario == "memory":
        limit = TARGETS["memory_bytes"] / 1e6
        return [_target("peak_rss_mb", f"peak_rss_mb <= {limit:g}", get("peak_rss_mb"), limit)]
    if scenario == "rerun10":
        limit, unchanged = TARGETS["rerun10"], TARGETS["rerun"]
        k = get("invalidated_cases")
        return [
            _target("warm_cold_flow_ratio",
                    f"flow_s with {get('invalidated_fraction', 0.1):.0%} of the generations invalidated "
                    f"<= {limit} x the cold run's flow_s", get("warm_cold_flow_ratio"), limit),
            _target("unchanged_cold_flow_ratio", f"flow_s with nothing changed <= {unchanged} x the cold run's flow_s",
                    get("unchanged_cold_flow_ratio"), unchanged),
            {"name": "warm_generate_misses", "target": f"the warm run generates the {k} invalidated cases "
             f"and no other ({get('stages_expected')})", "measured": get("warm_generate_misses"), "ratio": None,
             "met": bool(get("stages_match") and get("generated_cases_match"))},
        ]
    return []


def scenario_notes(scenario: str, result: dict[str, Any], everything: dict[str, Any]) -> list[str]:
    flavour = "async def" if everything["async"] else "def"
    notes = [(f"{everything['cpus']} CPUs; Prefect API: {everything['prefect_api']}; {flavour} system methods; "
              f"max_concurrency {everything['concurrency']}")]
    runs = result.get("runs") or [result]  # several case counts: one result per count
    if runs[0].get("repeats"):
        notes.append(f"medians of {runs[0]['repeats']} repeats (_min/_max where they differ)")
    for run in runs if scenario == "rerun10" else ():
        notes.append(
            f"invalidation: forgot {run.get('deleted_generate_records')} generate records "
            f"(cache/generate), as many execution records (cache/execute: a case found there runs no stage) and "
            f"{run.get('deleted_prefect_batch_records')} Prefect batch records of the generate stage "
            f"({run.get('deleted_prefect_batch_records_by')}); retrievals and judgments stay cached"
        )
        if not (run.get("stages_match") and run.get("generated_cases_match")):
            notes.append(f"warm run's stages: {run.get('stages_line')}, expected {run.get('stages_expected')}; "
                         f"{run.get('generated_cases')} cases generated again")
    if scenario == "rerun10":
        notes.append("warm = the run after the invalidation; unchanged = a third run with nothing changed; "
                     "startup_s = process start (interpreter, imports, validation, dataset) + Prefect server "
                     "import and start (ephemeral mode only), all before the flow; command_s = startup_s + "
                     "flow_s + after_flow_s")
    return notes


def _latencies(args: argparse.Namespace, default: tuple[float, float]) -> tuple[float, float]:
    return (
        default[0] if args.retrieve_ms is None else args.retrieve_ms,
        default[1] if args.generate_ms is None else args.generate_ms,
    )


def _slopes(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Least-squares slope and intercept of the main figures over case counts."""
    out: dict[str, Any] = {}
    xs = [r["cases"] for r in runs]
    if len(set(xs)) < 2:
        return out
    for key in ("peak_rss_mb", "peak_rss_oloproof_mb", "flow_s", "command_s"):
        ys = [r.get(key) for r in runs]
        if any(y is None for y in ys):
            continue
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        out[f"slope_{key}_per_1k_cases"] = slope * 1000
        out[f"intercept_{key}"] = my - slope * mx
        if key == "peak_rss_mb":
            out["extrapolated_peak_rss_mb_at_100k"] = my + slope * (100_000 - mx)
        if key == "command_s":
            out["extrapolated_command_s_at_100k"] = my + slope * (100_000 - mx)
    return out


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per figure: the median of numbers, all() of booleans, the first of anything else."""
    import statistics

    out: dict[str, Any] = {}
    for key in runs[0]:
        values = [r.get(key) for r in runs]
        if all(isinstance(v, bool) for v in values):
            out[key] = all(values)
        elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            out[key] = statistics.median(values)
            if len(set(values)) > 1 and key.endswith(("_s", "_ratio", "_mb")):
                out[f"{key}_min"], out[f"{key}_max"] = min(values), max(values)
        else:
            out[key] = values[0]
    return out


def _print_figures(scenario: str, result: dict[str, Any]) -> None:
    for key, value in result.items():
        if key == "each":
            continue
        if isinstance(value, float):
            text = f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"
        else:
            text = str(value)
        print(f"{scenario}.{key} {text}")
    sys.stdout.flush()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench_engine.py",
        description=textwrap.dedent(
            """\
            Benchmark the oloproof engine on a synthetic project (see benchmarks/README.md).

            latency: a cold `oloproof run` of N cases vs the ideal N*(retrieve+generate)/C (target <= 1.25x).
            rerun:   the same project twice; warm/cold (target < 10%).
            memory:  100,000 cases at 0 ms latency; peak RSS (target < 1.5 GB).
            rerun10: cold run; delete 10% of the generations (seeded); warm run (target <= 20% of cold, from
                     flow start); then a run with nothing changed."""
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="latency",
                        help="what to measure (default: latency)")
    parser.add_argument("--cases", default=None, metavar="N[,N...]",
                        help="case count; a comma list runs the scenario once per count and reports slopes "
                             "(default: 2000; 100000 for memory)")
    parser.add_argument("--retrieve-ms", type=float, default=None,
                        help="retrieve() sleep in ms (default: 20; 0 for memory)")
    parser.add_argument("--generate-ms", type=float, default=None,
                        help="generate() sleep in ms (default: 200; 0 for memory)")
    parser.add_argument("--async", dest="use_async", action="store_true",
                        help="make retrieve/generate `async def` with asyncio.sleep (default: sync, time.sleep)")
    parser.add_argument("--concurrency", type=int, default=32, help="max_concurrency of the project (default: 32)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="batch_size of the project (default: unset, the engine chooses)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="passed to `oloproof run --set` (repeatable)")
    parser.add_argument("--api-url", default=None, metavar="URL",
                        help="use this running Prefect server (PREFECT_API_URL) instead of an ephemeral one")
    parser.add_argument("--start-server", action="store_true",
                        help="start one `prefect server start` up front (not timed) and use it for every command")
    parser.add_argument("--prefect-home", default=None, metavar="DIR",
                        help="PREFECT_HOME of the commands (default: a fresh folder in the work dir)")
    parser.add_argument("--workdir", default=None, metavar="DIR",
                        help="where projects, results and logs go (default: a new temp dir, removed unless --keep)")
    parser.add_argument("--keep", action="store_true", help="keep the work dir")
    parser.add_argument("--repeat", type=int, default=1, metavar="K",
                        help="run each scenario K times (fresh project each time); report medians (and min/max)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="kill a command after this many s (default 1800)")
    parser.add_argument("--py-spy", default=None, metavar="FILE",
                        help="profile each command with `py-spy record --threads --nonblocking` (.svg flamegraph, .json "
                             "speedscope, else raw collapsed stacks); timings then include the sampler's cost")
    parser.add_argument("--py-spy-rate", type=int, default=50, help="py-spy samples per second (default 50)")
    parser.add_argument("--py-spy-gil", action="store_true",
                        help="sample only the thread holding the GIL (py-spy --gil): where the CPU-bound time goes")
    parser.add_argument("--rss-interval", type=float, default=0.25,
                        help="psutil RSS sampling period of the process tree in s (0: off; default 0.25)")
    parser.add_argument("--child-preload", default=None, metavar="FILE",
                        help="run this Python file in each command's process before the CLI starts (e.g. a "
                             "monkeypatch of the engine, to A/B a change without editing src/)")
    parser.add_argument("--rss-timeline", default=None, metavar="PREFIX",
                        help="write the sampled tree RSS of each command to PREFIX-NN.csv")
    parser.add_argument("--invalidate", type=float, default=0.10, metavar="FRACTION",
                        help="rerun10: share of the cases whose generations are deleted (default 0.10)")
    parser.add_argument("--seed", type=int, default=0, help="rerun10: seed of the choice of cases (default 0)")
    parser.add_argument("--json", action="store_true",
                        help='end with one line per scenario {"scenario", "figures", "targets", "notes"} '
                             "instead of the combined JSON line")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.api_url and args.start_server:
        raise SystemExit("--api-url and --start-server exclude each other")
    if not 0 < args.invalidate <= 1:
        raise SystemExit("--invalidate must be in (0, 1]")
    if args.workdir:
        workdir = Path(args.workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        workdir = Path(tempfile.mkdtemp(prefix="oloproof-bench-"))
    bench = Bench(args, workdir)
    _log(f"work dir {workdir}; PREFECT_HOME {args.prefect_home or 'fresh per scenario project'}; "
         f"{'API ' + args.api_url if args.api_url else 'one prefect server' if args.start_server else 'ephemeral Prefect server per command'}")
    scenarios = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    everything: dict[str, Any] = {
        "concurrency": args.concurrency, "async": args.use_async, "cpus": os.cpu_count(),
        "prefect_api": "server" if (args.api_url or args.start_server) else "ephemeral",
    }
    try:
        if args.start_server:
            bench.start_server()
        for scenario in scenarios:
            counts = (
                [int(c) for c in str(args.cases).split(",") if c.strip()]
                if args.cases else SCENARIO_DEFAULT_CASES[scenario]
            )
            runs = []
            for n in counts:
                repeats = [SCENARIOS[scenario](bench, n) for _ in range(args.repeat)]
                run = repeats[0] if len(repeats) == 1 else {**_median(repeats), "repeats": len(repeats)}
                runs.append(run)
                _print_figures(scenario if len(counts) == 1 else f"{scenario}[{n}]", run)
                if len(repeats) > 1:
                    run["each"] = repeats
            if len(runs) == 1:
                everything[scenario] = runs[0]
            else:
                slopes = _slopes(runs)
                _print_figures(scenario, slopes)
                everything[scenario] = {"runs": runs, **slopes}
    finally:
        bench.stop_server()
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        elif args.keep:
            _log(f"kept {workdir}")
    if args.json:
        for scenario in scenarios:
            result = everything[scenario]
            figures = {key: value for key, value in result.items() if key != "each"}
            print(json.dumps({
                "scenario": scenario, "figures": figures, "targets": scenario_targets(scenario, result),
                "notes": scenario_notes(scenario, result, everything),
            }))
    else:
        print(json.dumps({"benchmark": "oloproof-engine", "scenario": args.scenario, **everything}, sort_keys=True))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == CHILD_FLAG:
        sys.exit(_child_main(sys.argv[2:]))
    sys.exit(main())
