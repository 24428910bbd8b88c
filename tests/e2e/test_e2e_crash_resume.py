"""Nothing finished is lost: ``oloproof run`` killed with SIGKILL, then run again.

A slow synthetic RAG project (40 cases, every system call sleeps) is first run
uninterrupted into a store of its own. Then, for each kill point, a fresh store
gets a run that is SIGKILLed (its whole process group) at a moment a seeded RNG
picks across the run's progress, or during the final writes of the run's tables.
After the kill no reader shows a half-written run; the next run completes,
re-executes exactly the cases whose stage records were not yet durable (its cache
counts and the system's own call log say so), and records the same per-case
results and metrics as the uninterrupted run.

Stage records are written in packs (a batch's records together, flushed at the
batch's end or every two seconds), so a kill loses at most what the batches in
flight computed since their last flush; "durable" is what a fresh reader of the
store's pack index finds.

Every ``oloproof`` process gets a fresh ``PREFECT_HOME`` and reports to the
session's real Prefect server.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from processes import clean_env, stop_process, tail

from oloproof.flows._orphans import project_tag
from oloproof.store import ResultsStore

pytestmark = [pytest.mark.services, pytest.mark.slow]

CLI = [sys.executable, "-m", "oloproof._cli.main"]
CASES = 40
CRITERIA = ("answer_correct", "hit_rate_at_2", "ndcg_at_4", "citations_valid")
PER_CASE_STAGES = ("retrieve", "generate", "execute")
"""Stages with one record per case; their records measure how far a run got."""
SEED = 20260916
RUN_TABLES = ("cases.parquet", "retrievals.parquet", "judgments.parquet", "metrics.parquet")




# -- the synthetic project ---------------------------------------------------------------

CONFIG = """\
system:
  name: slow-rag
  version: crash-1
  rag: {object: slow_system:SlowRag, depth: 4, top_k: 2, token_budget: 24, index_version: slow-kb-1}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: hit_rate, k: 2}
  - {type: ndcg, k: 4}
  - {type: citation_validity}
slices: [metadata.parity, relevant_position, context_truncated]
min_slice_support: 4
max_concurrency: 2
"""

SYSTEM = '''\
"""A slow, deterministic RAG system: case n's relevant passage sits at rank n % 5."""

import os
import time

from oloproof import Passage, Retrieval, rag_system

DELAY = float(os.environ.get("SLOW_RAG_DELAY", "0.03"))


def _log(stage, input):
    # One line per system call, appended atomically, when $SLOW_RAG_CALLS names a file.
    path = os.environ.get("SLOW_RAG_CALLS")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, f"{stage} {input['n']}\\n".encode())
        finally:
            os.close(fd)


@rag_system(name="slow-rag", version="crash-1", depth=4, top_k=2, token_budget=24, index_version="slow-kb-1")
class SlowRag:
    def retrieve(self, input, depth):
        _log("retrieve", input)
        time.sleep(DELAY)
        n = input["n"]
        texts = [f"Filler passage {i} for case {n:02d} says nothing." for i in range(depth)]
        ids = [f"c{n:02d}-filler{i}" for i in range(depth)]
        rank = n % 5  # rank 4 is beyond the depth: never retrieved
        if rank < depth:
            ids[rank] = f"c{n:02d}-gold"
            texts[rank] = f"Answer-{n:02d} is the reference fact for case {n:02d}."
            if n % 6 == 0:  # too long for the token budget
                texts[rank] += " It goes on" + " and on" * 10 + "."
        candidates = tuple(
            Passage(doc_id=doc_id, score=float(depth - i), text=text)
            for i, (doc_id, text) in enumerate(zip(ids, texts))
        )
        return Retrieval(query=input["question"], depth=depth, candidates=candidates)

    def generate(self, input, context):
        _log("generate", input)
        time.sleep(DELAY)
        n = input["n"]
        gold = [p.doc_id for p in context if p.doc_id.endswith("-gold")]
        if n % 11 == 10:
            return {"answer": "See the manual.", "citations": ["nowhere"]}
        if gold and n % 7 != 3:
            return {"answer": f"It is answer-{n:02d}.", "citations": gold}
        if gold:
            return {"answer": "I am not sure.", "citations": gold}
        return {"answer": "No answer found.", "citations": [context[0].doc_id] if context else []}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
'''


def _write_project(root: Path) -> Path:
    """The slow project: ``oloproof.yaml``, ``slow_system.py`` and 40 cases."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "slow_system.py").write_text(SYSTEM, encoding="utf-8")
    lines = [
        json.dumps({
            "id": f"case_{n:02d}",
            "input": {"question": f"What is the fact of case {n}?", "n": n},
            "expected": {"answer": f"answer-{n:02d}", "relevant": [{"doc_id": f"c{n:02d}-gold"}]},
            "metadata": {"parity": "even" if n % 2 == 0 else "odd"},
        })
        for n in range(CASES)
    ]  # fmt: skip
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


# -- processes ----------------------------------------------------------------------------


def _machine_env(prefect_server: str, home: Path, calls: Path | None = None) -> dict[str, str]:
    """A fresh machine's environment: its own PREFECT_HOME, the session's server."""
    env = clean_env()
    env.update(PREFECT_HOME=str(home), PREFECT_API_URL=prefect_server, PREFECT_SERVER_ANALYTICS_ENABLED="false",
               DO_NOT_TRACK="1", COLUMNS="200")  # fmt: skip
    if calls is not None:
        env["SLOW_RAG_CALLS"] = str(calls)
    return env


def _start_run(project: Path, store: Where, env: dict[str, str], out: Path) -> subprocess.Popen:
    """``oloproof run PROJECT --json`` in a session of its own (so its group can be killed)."""
    with open(out.with_suffix(".out"), "wb") as stdout, open(out.with_suffix(".err"), "wb") as stderr:
        return subprocess.Popen(
            [*CLI, "run", str(project), "--results", store.url, "--json"],
            stdout=stdout, stderr=stderr, env=env, start_new_session=True,
        )  # fmt: skip


def _complete_run(project: Path, store: Where, env: dict[str, str], out: Path) -> dict[str, Any]:
    """Run to the end; returns the ``--json`` report."""
    process = _start_run(project, store, env, out)
    try:
        code = process.wait(timeout=240)
    finally:
        stop_process(process)
    stderr = tail(out.with_suffix(".err"))
    assert code == 0, f"oloproof run exited {code}:\n{stderr}"
    return json.loads(out.with_suffix(".out").read_text(encoding="utf-8"))


def _cli(env: dict[str, str], *args: str) -> Any:
    """A read command with ``--json``; returns its parsed output."""
    done = subprocess.run([*CLI, *args, "--json"], env=env, check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (args, done.stderr[-2000:])
    return json.loads(done.stdout)


def _query(env: dict[str, str], store: Where, sql: str, *params: str) -> list[dict[str, Any]]:
    args = ["query", sql, "--results", store.url]
    for param in params:
        args += ["--param", param]
    return _cli(env, *args)


# -- the store ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Where:
    """A store: a local folder, or a prefix of a moto bucket."""

    url: str
    options: dict[str, Any] = field(default_factory=dict)
    """Storage options of this test's own reader."""
    env: dict[str, str] = field(default_factory=dict)
    """What an ``oloproof`` process needs in its environment to reach it."""

    def reader(self) -> ResultsStore:
        return ResultsStore(self.url, self.options or None)


def _durable_keys(store: Where) -> dict[str, set[str]]:
    """The keys of every stage record a reader of the store finds (a fresh reader each
    time, as a resumed run is); each record must parse as a JSON object."""
    reader = store.reader()
    keys: dict[str, set[str]] = {}
    for stage in (*PER_CASE_STAGES, "judge"):
        keys[stage] = reader.record_keys(stage)
        found = reader.get_records(stage, sorted(keys[stage]))  # a torn pack or record fails here
        assert set(found) == keys[stage] and all(isinstance(r, dict) for r in found.values()), stage
    return keys


def _progress(store: Where) -> int:
    """How many per-case stage records the store holds (0 to 3 x CASES)."""
    reader = store.reader()
    return sum(len(reader.record_keys(stage)) for stage in PER_CASE_STAGES)


def _run_dirs(store: Where) -> list[str]:
    """The run ids with a directory in the store, complete or not."""
    return store.reader().objects.list_children("runs")


def _run_files(store: Where, run_id: str) -> set[str]:
    return set(store.reader().objects.list_children(f"runs/{run_id}"))


def _final_write_started(store: Where, name: str) -> bool:
    """Whether the run's directory (``name == "dir"``) or one of its tables exists."""
    dirs = _run_dirs(store)
    return bool(dirs) and (name == "dir" or name in _run_files(store, dirs[0]))


def _kill_points() -> list[tuple[str, Any]]:
    """One progress threshold in each half of the run, drawn by a seeded RNG, one final
    write, and one on S3."""
    rng = random.Random(SEED)
    total = len(PER_CASE_STAGES) * CASES
    thresholds = [rng.randrange(max(2, total * i // 2), total * (i + 1) // 2 - 2) for i in range(2)]
    # Each of these leaves at least two tables and the manifest still to write.
    final = rng.choice(("dir", "cases.parquet", "retrievals.parquet"))
    # On S3 (slower to poll, and its calls made slower to match): once the retrievals are
    # durable, while the generations are in flight.
    return [("progress", t) for t in thresholds] + [("final-writes", final), ("s3-progress", CASES + 1)]


KILL_POINTS = _kill_points()


def _kill_when(process: subprocess.Popen, ready: Callable[[], bool], err: Path, timeout: float = 180) -> None:
    """SIGKILL the process's whole group as soon as ``ready()``; fail if it ends first."""
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"the kill point was not reached within {timeout:.0f} s:\n{tail(err)}")
        time.sleep(0.002)
    if process.poll() is not None:
        pytest.fail(f"the run ended ({process.returncode}) before the kill point:\n{tail(err)}")
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


# -- what readers see ---------------------------------------------------------------------

_VISIBLE_SQL = (
    "SELECT 'runs' AS t, run_id, status, 0 AS n FROM runs "
    "UNION ALL SELECT 'cases', run_id, NULL, count(*) FROM cases GROUP BY run_id "
    "UNION ALL SELECT 'retrievals', run_id, NULL, count(*) FROM retrievals GROUP BY run_id "
    "UNION ALL SELECT 'judgments', run_id, NULL, count(*) FROM judgments GROUP BY run_id "
    "UNION ALL SELECT 'metrics', run_id, NULL, count(*) FROM metrics GROUP BY run_id"
)
"""Every run the views show, and how many rows of each table belong to which run."""


def _assert_only_complete_runs(env: dict[str, str], store: Where, expected: set[str]) -> None:
    """``oloproof runs`` and the DuckDB views show exactly the complete runs ``expected``."""
    listed = [row["run_id"] for row in _cli(env, "runs", "--results", store.url)]
    assert sorted(listed) == sorted(expected), listed
    visible: dict[str, dict[str, Any]] = {}
    for row in _query(env, store, _VISIBLE_SQL):
        visible.setdefault(row["t"], {})[row["run_id"]] = row["status"] if row["t"] == "runs" else row["n"]
    assert visible.get("runs", {}) == {run_id: "complete" for run_id in expected}, visible
    # No table shows rows of a run without a manifest, and a complete run has all its rows.
    assert visible.get("cases", {}) == {run_id: CASES for run_id in expected}, visible
    assert visible.get("judgments", {}) == {run_id: CASES * len(CRITERIA) for run_id in expected}, visible
    for table in ("retrievals", "metrics"):
        assert set(visible.get(table, {})) == expected, (table, visible)
    for run_id in expected:
        files = _run_files(store, run_id)
        assert {"run.json", *RUN_TABLES} <= files, files


_SNAPSHOT_SQL = {
    "cases": "SELECT case_id, status, error_stage, error, execution_key, retrieval_key, assembly_key, "
    "generation_key, query, output, context, dropped, best_relevant_position, relevant_position, "
    "context_truncated, execution_hit, retrieve_hit, generate_hit FROM cases WHERE run_id = $1 ORDER BY case_id",
    "retrievals": "SELECT case_id, position, doc_id, score, text, in_top_k, in_context, drop_reason, "
    "relevant_grade FROM retrievals WHERE run_id = $1 ORDER BY case_id, position",
    "judgments": "SELECT case_id, criterion, evaluator, spec_hash, status, reason, value, passed, detail, "
    "judgment_key, hit FROM judgments WHERE run_id = $1 ORDER BY case_id, criterion",
    "metrics": "SELECT criterion, kind, slice, slice_value, estimate, low, high, confidence, method, observed, "
    "successes, missing, excluded, scored FROM metrics WHERE run_id = $1 "
    "ORDER BY criterion, slice NULLS FIRST, slice_value NULLS FIRST",
}
"""A run's records without run ids or timings; :func:`_stable` drops the hit flags too."""

_HIT_FLAGS = ("execution_hit", "retrieve_hit", "generate_hit", "hit")


def _snapshot(env: dict[str, str], store: Where, run_id: str) -> dict[str, list[dict[str, Any]]]:
    return {table: _query(env, store, sql, run_id) for table, sql in _SNAPSHOT_SQL.items()}


def _stable(snapshot: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """What two runs of the same project must agree on, however much each found cached."""
    return {table: [{k: v for k, v in row.items() if k not in _HIT_FLAGS} for row in rows]
            for table, rows in snapshot.items()}  # fmt: skip


def _calls(log: Path) -> dict[str, list[int]]:
    """The system's call log: case numbers per stage, in call order."""
    calls: dict[str, list[int]] = {"retrieve": [], "generate": []}
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            stage, n = line.split()
            calls[stage].append(int(n))
    return calls


# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return _write_project(tmp_path_factory.mktemp("crash") / "slow_rag")


@pytest.fixture(scope="module")
def reference(project, prefect_server, tmp_path_factory) -> dict[str, Any]:
    """The uninterrupted run: its report, stable records and every case's stage keys."""
    work = tmp_path_factory.mktemp("reference")
    store = Where(str(work / "store"))
    env = _machine_env(prefect_server, work / "home", calls=work / "calls.log")
    report = _complete_run(project, store, env, work / "run")
    assert report["cache"] == {
        "execution": {"hit": 0, "miss": CASES}, "retrieve": {"hit": 0, "miss": CASES},
        "generate": {"hit": 0, "miss": CASES}, "judgment": {"hit": 0, "miss": CASES * len(CRITERIA)},
    }  # fmt: skip
    snapshot = _snapshot(env, store, report["run_id"])
    cases = snapshot["cases"]
    assert [row["case_id"] for row in cases] == [f"case_{n:02d}" for n in range(CASES)]
    assert {row["status"] for row in cases} == {"ok"}
    overall = {m["criterion"]: (m["successes"], m["observed"]) for m in snapshot["metrics"] if m["slice"] is None}
    # The planted faults show in the metrics, so equal metrics below are not trivially equal.
    assert overall["hit_rate_at_2"] == (16, CASES) and overall["citations_valid"] == (37, CASES), overall
    assert 0 < overall["answer_correct"][0] < overall["hit_rate_at_2"][0], overall
    assert any(row["context_truncated"] for row in cases)
    # Every key is unique to its case, so a record counts exactly one case (or judgment).
    keys = {
        stage: {row["case_id"]: row[f"{column}_key"] for row in cases}
        for stage, column in (("execute", "execution"), ("retrieve", "retrieval"), ("generate", "generation"))
    }
    keys["judge"] = {(row["case_id"], row["criterion"]): row["judgment_key"] for row in snapshot["judgments"]}
    for stage, by_case in keys.items():
        assert len(set(by_case.values())) == len(by_case), stage
    assert _durable_keys(store) == {stage: set(by_case.values()) for stage, by_case in keys.items()}
    calls = _calls(work / "calls.log")
    assert sorted(calls["retrieve"]) == sorted(calls["generate"]) == list(range(CASES))
    return {"report": report, "snapshot": _stable(snapshot), "keys": keys}


# -- the test -----------------------------------------------------------------------------


def _flow_run_of(runs_tagged: Callable[..., Any], project: Path, pid: int) -> dict[str, Any]:
    """The flow run the process ``pid`` of this host recorded for ``project``."""
    runs = runs_tagged(project_tag(str(project)), flow="oloproof-run")
    mine = [run for run in runs if run["infrastructure_pid"] == f"{socket.gethostname()}:{pid}"]
    assert len(mine) == 1, [(run["name"], run["infrastructure_pid"]) for run in runs]
    return mine[0]


def _store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Where:
    if not kind.startswith("s3-"):
        return Where(str(tmp_path / "store"))
    moto = request.getfixturevalue("moto_server")
    bucket = request.getfixturevalue("new_bucket")()
    creds = request.getfixturevalue("aws_test_credentials")
    env = {"AWS_ACCESS_KEY_ID": creds["key"], "AWS_SECRET_ACCESS_KEY": creds["secret"],
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": moto, "SLOW_RAG_DELAY": "0.15"}  # fmt: skip
    options = {"endpoint_url": moto, "key": creds["key"], "secret": creds["secret"]}
    return Where(f"s3://{bucket}/oloproof", options, env)


@pytest.mark.parametrize("kill_point", KILL_POINTS, ids=[f"{kind}-{at}" for kind, at in KILL_POINTS])
def test_a_killed_run_resumes_and_loses_nothing(kill_point, project, reference, prefect_server, runs_tagged, tmp_path,
                                                request):  # fmt: skip
    kind, at = kill_point
    store = _store(kind, tmp_path, request)

    def _env(server: str, home: Path, calls: Path | None = None) -> dict[str, str]:
        return {**_machine_env(server, home, calls), **store.env}

    reader = _env(prefect_server, tmp_path / "reader-home")

    # The interrupted run.
    killed_calls = tmp_path / "killed-calls.log"
    process = _start_run(project, store, _env(prefect_server, tmp_path / "killed-home", killed_calls),
                         tmp_path / "killed")  # fmt: skip
    try:
        if kind in ("progress", "s3-progress"):
            _kill_when(process, lambda: _progress(store) >= at, tmp_path / "killed.err")
        else:
            _kill_when(process, lambda: _final_write_started(store, at), tmp_path / "killed.err")
    finally:
        stop_process(process)
    assert process.returncode == -signal.SIGKILL
    # Nothing told the server the run ended.
    assert _flow_run_of(runs_tagged, project, process.pid)["state_type"] == "RUNNING"

    durable = _durable_keys(store)
    killed_dirs = _run_dirs(store)
    if kind in ("progress", "s3-progress"):
        # Killed mid-run: past the threshold, short of the last stage record.
        assert at <= _progress(store) < len(PER_CASE_STAGES) * CASES, _progress(store)
    else:
        # Killed while writing its tables: the directory is there, the manifest is not.
        assert len(killed_dirs) == 1 and "run.json" not in _run_files(store, killed_dirs[0]), killed_dirs
        counts = {stage: len(keys) for stage, keys in durable.items()}
        assert all(counts[stage] == CASES for stage in PER_CASE_STAGES), counts
    # What is durable was computed by the killed run, for this project's cases.
    killed_by_stage = _calls(killed_calls)
    for stage in ("retrieve", "generate"):
        by_case = reference["keys"][stage]
        assert durable[stage] <= set(by_case.values()), stage
        done = {int(case_id.removeprefix("case_")) for case_id, key in by_case.items() if key in durable[stage]}
        assert done <= set(killed_by_stage[stage]), stage

    # No reader shows a half-written run, in any view.
    _assert_only_complete_runs(reader, store, expected=set())
    for directory in killed_dirs:
        shown = subprocess.run([*CLI, "show", directory, "--results", store.url], env=reader,
                               check=False, capture_output=True, text=True, timeout=120)  # fmt: skip
        assert shown.returncode == 2 and "no complete run" in shown.stderr, (shown.returncode, shown.stderr[-500:])

    # The next run completes and re-executes only what was not durable.
    resume_calls = tmp_path / "resume-calls.log"
    report = _complete_run(project, store, _env(prefect_server, tmp_path / "resume-home", resume_calls),
                           tmp_path / "resume")  # fmt: skip
    keys = reference["keys"]
    have = {stage: {case for case, key in keys[stage].items() if key in durable[stage]} for stage in keys}
    executed = CASES - len(have["execute"])
    assert report["cache"] == {
        "execution": {"hit": len(have["execute"]), "miss": executed},
        "retrieve": {"hit": len(have["retrieve"]) - len(have["execute"]), "miss": CASES - len(have["retrieve"])},
        "generate": {"hit": len(have["generate"]) - len(have["execute"]), "miss": CASES - len(have["generate"])},
        "judgment": {"hit": len(have["judge"]), "miss": CASES * len(CRITERIA) - len(have["judge"])},
    }, (report["cache"], {stage: len(cases) for stage, cases in have.items()})

    # The system itself was called exactly for the cases without a durable record.
    calls = _calls(resume_calls)
    for stage in ("retrieve", "generate"):
        missing = sorted(int(case.removeprefix("case_")) for case in set(keys[stage]) - have[stage])
        assert sorted(calls[stage]) == missing, stage

    # The next run of the project marked the killed one's flow run crashed, saying why.
    orphan = _flow_run_of(runs_tagged, project, process.pid)
    assert orphan["state_type"] == "CRASHED", orphan["state_type"]
    assert "ended without reporting" in orphan["state"]["message"], orphan["state"]

    # Per case, the hit flags name exactly the durable records.
    run_id = report["run_id"]
    snapshot = _snapshot(reader, store, run_id)
    assert len(snapshot["cases"]) == CASES
    for row in snapshot["cases"]:
        case = row["case_id"]
        assert row["execution_hit"] == (case in have["execute"]), row
        if not row["execution_hit"]:
            expected = (case in have["retrieve"], case in have["generate"])
            assert (row["retrieve_hit"], row["generate_hit"]) == expected, row
    assert {(r["case_id"], r["criterion"]) for r in snapshot["judgments"] if r["hit"]} == have["judge"]

    # The same records and metrics as the uninterrupted run, and still no half-written run.
    stable = _stable(snapshot)
    for table, rows in reference["snapshot"].items():
        assert stable[table] == rows, table
    _assert_only_complete_runs(reader, store, expected={run_id})
    assert _durable_keys(store) == {stage: set(by_case.values()) for stage, by_case in keys.items()}
