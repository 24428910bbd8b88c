"""Two runs at once: two ``oloproof run``s of one project on one store, started together.

On a local store and on an S3 store (the moto server), both runs exit 0 and are
complete, each with all of its own per-case records; their outputs and metrics
agree; the stage records they both wrote are whole (every record under ``cache/``
and ``prefect/`` parses, one per identity), and a third run afterwards is served
every stage from them. On the local store each batch is computed by one of the
two and replayed by the other (they share its lock); on S3 both compute at once.

Each ``oloproof`` process is a fresh machine (its own ``PREFECT_HOME``) reporting to
the session's real Prefect server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from processes import stop_process

pytestmark = [pytest.mark.services, pytest.mark.slow]

CLI = [sys.executable, "-m", "oloproof._cli.main"]
CASES = 16
CRITERIA = ("answer_correct", "hit_rate_at_2", "citations_valid")



CONFIG = """\
system:
  name: twin-rag
  version: twin-1
  rag: {object: twin_system:TwinRag, depth: 3, top_k: 2, token_budget: 1000, index_version: twin-kb-1}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: hit_rate, k: 2}
  - {type: citation_validity}
slices: [metadata.parity]
min_slice_support: 4
max_concurrency: 2
batch_size: 4                   # four Prefect task runs (and result records) per stage
"""

SYSTEM = '''\
"""A slow, deterministic RAG system: case n's relevant passage sits at rank n % 4."""

import os
import time
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

DELAY = 0.15


def _rendezvous(at):
    # With $TWIN_RAG_RENDEZVOUS set and $TWIN_RAG_MEET naming this point ("start": the
    # system is made; "call": a retrieval), neither process passes it before both have
    # reached it: the runs then overlap, however far apart they started.
    folder = os.environ.get("TWIN_RAG_RENDEZVOUS")
    if not folder or os.environ.get("TWIN_RAG_MEET") != at:
        return
    (Path(folder) / str(os.getpid())).touch()
    deadline = time.monotonic() + 120
    while len(os.listdir(folder)) < 2:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the other run did not reach its {at} within 120 s")
        time.sleep(0.01)


@rag_system(name="twin-rag", version="twin-1", depth=3, top_k=2, token_budget=1000, index_version="twin-kb-1")
class TwinRag:
    def __init__(self):
        _rendezvous("start")

    def retrieve(self, input, depth):
        _rendezvous("call")
        time.sleep(DELAY)
        n = input["n"]
        ids = [f"t{n:02d}-filler{i}" for i in range(depth)]
        if n % 4 < depth:  # rank 3 is beyond the depth: never retrieved
            ids[n % 4] = f"t{n:02d}-gold"
        candidates = tuple(
            Passage(doc_id=doc_id, score=float(depth - i), text=f"Passage {doc_id} of case {n:02d}.")
            for i, doc_id in enumerate(ids)
        )
        return Retrieval(query=input["question"], depth=depth, candidates=candidates)

    def generate(self, input, context):
        time.sleep(DELAY)
        n = input["n"]
        gold = [p.doc_id for p in context if p.doc_id.endswith("-gold")]
        if gold:
            return {"answer": f"It is answer-{n:02d}.", "citations": gold}
        return {"answer": "No answer found.", "citations": [context[0].doc_id]}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
'''

ANSWERED = sum(1 for n in range(CASES) if n % 4 < 2)
"""Cases whose relevant passage is in the top 2: they are answered (and hit)."""


def _write_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "twin_system.py").write_text(SYSTEM, encoding="utf-8")
    lines = [
        json.dumps({
            "id": f"case_{n:02d}",
            "input": {"question": f"What does case {n} say?", "n": n},
            "expected": {"answer": f"answer-{n:02d}", "relevant": [{"doc_id": f"t{n:02d}-gold"}]},
            "metadata": {"parity": "even" if n % 2 == 0 else "odd"},
        })
        for n in range(CASES)
    ]  # fmt: skip
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _run_together(project: Path, url: str, envs: list[dict[str, str]], logs: Path,
                  *extra: str) -> list[dict[str, Any]]:
    """Start one ``oloproof run --json`` per environment at once; wait for all; their reports."""
    processes: list[subprocess.Popen] = []
    try:
        for number, env in enumerate(envs):
            with open(logs / f"run{number}.out", "wb") as out, open(logs / f"run{number}.err", "wb") as err:
                processes.append(subprocess.Popen(
                    [*CLI, "run", str(project), "--results", url, "--json", *extra],
                    stdout=out, stderr=err, env=env, start_new_session=True,
                ))  # fmt: skip
        codes = [process.wait(timeout=240) for process in processes]
    finally:
        for process in processes:
            stop_process(process)
    for number, code in enumerate(codes):
        assert code == 0, f"run {number} exited {code}:\n{(logs / f'run{number}.err').read_text()[-3000:]}"
    return [json.loads((logs / f"run{number}.out").read_text(encoding="utf-8")) for number in range(len(envs))]


def _query(olo: Callable[..., Any], env: dict[str, str], url: str, sql: str, *params: str) -> list[dict[str, Any]]:
    args = ["query", sql, "--results", url, "--json"]
    for param in params:
        args += ["--param", param]
    done = olo(*args, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


_COUNTS_SQL = (
    "SELECT r.run_id, r.status, (SELECT count(*) FROM cases c WHERE c.run_id = r.run_id) AS cases, "
    "(SELECT count(*) FROM judgments j WHERE j.run_id = r.run_id) AS judgments FROM runs r"
)
"""Each complete run with how many case and judgment rows are its own."""

_RECORDS_SQL = {
    "cases": "SELECT run_id, case_id, status, error, execution_key, retrieval_key, assembly_key, generation_key, "
    "output, context, dropped, relevant_position FROM cases ORDER BY run_id, case_id",
    "judgments": "SELECT run_id, case_id, criterion, status, reason, value, passed, detail, judgment_key "
    "FROM judgments ORDER BY run_id, case_id, criterion",
    "metrics": "SELECT run_id, criterion, slice, slice_value, estimate, low, high, method, observed, successes, "
    "missing, excluded FROM metrics ORDER BY run_id, criterion, slice NULLS FIRST, slice_value NULLS FIRST",
}
"""Every run's per-case records and metrics, without timings or hit flags."""


def _records(olo, env: dict[str, str], url: str) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``{run_id: {table: rows}}`` of every complete run, rows without their run id."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for table, sql in _RECORDS_SQL.items():
        for row in _query(olo, env, url, sql):
            out.setdefault(row.pop("run_id"), {}).setdefault(table, []).append(row)
    return out


class _Store:
    """Reads a local or S3 store's files by path relative to its root."""

    def __init__(self, url: str, fs: Any = None) -> None:
        self.url, self.fs = url, fs

    def files(self, prefix: str) -> dict[str, bytes]:
        if self.fs is None:
            root = Path(self.url)
            return {p.relative_to(root).as_posix(): p.read_bytes()
                    for p in (root / prefix).rglob("*") if p.is_file()}  # fmt: skip
        base = self.url.removeprefix("s3://")
        paths = self.fs.find(f"{base}/{prefix}")
        return {path.removeprefix(f"{base}/"): data for path, data in self.fs.cat(paths).items()} if paths else {}


def _assert_whole_records(store: _Store, cases: list[dict[str, Any]]) -> None:
    """One parseable record per identity of ``cases`` in the packs under ``cache/``, every index
    segment whole and naming packs that are there; Prefect's records parse too."""
    cache = store.files("cache")
    by_stage: dict[str, dict[str, dict[str, Any]]] = {}
    indexed: dict[str, set[str]] = {}
    for path, data in cache.items():
        parts = path.split("/")
        # cache/<stage>/packs/<pack>.json and cache/<stage>/index/<segment>.json
        assert len(parts) == 4 and parts[2] in ("packs", "index") and parts[3].endswith(".json"), path
        assert not parts[3].startswith("."), path
        content = json.loads(data)  # a torn or interleaved pack or segment fails here
        assert isinstance(content, dict), path
        if parts[2] == "index":
            indexed.setdefault(parts[1], set()).update(content["packs"])
            continue
        for key, record in content.items():
            assert isinstance(record, dict), (path, key)
            by_stage.setdefault(parts[1], {})[key] = record
    # Every pack an index segment names is there.
    for stage, packs in indexed.items():
        assert {f"cache/{stage}/packs/{pack}.json" for pack in packs} <= set(cache), stage
    columns = {"execute": "execution", "retrieve": "retrieval", "assemble": "assembly", "generate": "generation"}
    keys = {stage: {row[f"{column}_key"] for row in cases} for stage, column in columns.items()}
    for stage, expected in keys.items():
        assert set(by_stage.get(stage, {})) == expected, stage
    assert len(by_stage.get("judge", {})) == CASES * len(CRITERIA)
    # An execution record holds the output its case recorded.
    outputs = {row["execution_key"]: json.loads(row["output"]) for row in cases}
    for key, record in by_stage["execute"].items():
        assert record["output"] == outputs[key], key
    prefect = store.files("prefect")
    assert prefect, "no Prefect result records in the store"
    for path, data in prefect.items():
        assert isinstance(json.loads(data), dict), path


@pytest.fixture(params=["local", "s3"])
def store_url(request, tmp_path, new_bucket, s3_fs) -> tuple[str, _Store]:
    """A fresh, empty results store: a local folder, or a prefix in a fresh moto bucket."""
    if request.param == "local":
        url = str(tmp_path / "store")
        return url, _Store(url)
    url = f"s3://{new_bucket()}/oloproof"
    return url, _Store(url, s3_fs)


def test_two_runs_at_once_on_one_store(store_url, machine, olo, tmp_path):
    url, store = store_url
    project = _write_project(tmp_path / "twin_rag")
    reader = machine()

    rendezvous = tmp_path / "rendezvous"
    rendezvous.mkdir()
    # On one machine's local store the runs take each batch's lock in turn, so they
    # meet as they start (meeting at a call would wait on a lock the other holds); on
    # S3, each process a machine of its own, they meet at their first retrievals.
    meet = "start" if store.fs is None else "call"
    envs = [machine(TWIN_RAG_RENDEZVOUS=str(rendezvous), TWIN_RAG_MEET=meet) for _ in range(2)]
    first, second = _run_together(project, url, envs, tmp_path)
    ids = {first["run_id"], second["run_id"]}
    assert len(ids) == 2
    for report in (first, second):
        assert report["status"] == "complete" and report["case_count"] == CASES
        cache = report["cache"]
        assert cache["execution"]["hit"] + cache["execution"]["miss"] == CASES, cache
        assert cache["judgment"]["hit"] + cache["judgment"]["miss"] == CASES * len(CRITERIA), cache
    misses = {stage: first["cache"][stage]["miss"] + second["cache"][stage]["miss"] for stage in ("retrieve", "generate")}
    if meet == "start":
        # Each batch was computed by one run and replayed by the other: one miss a case between them.
        assert misses == {"retrieve": CASES, "generate": CASES}, (first["cache"], second["cache"])
    else:
        # Neither found the other's records before its first call: both computed.
        assert first["cache"]["retrieve"]["miss"] > 0 and second["cache"]["retrieve"]["miss"] > 0

    # Both are complete, each with all of its own rows.
    listed = olo("runs", "--results", url, "--json", env=reader, timeout=120)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert {row["run_id"] for row in json.loads(listed.stdout)} == ids
    counts = _query(olo, reader, url, _COUNTS_SQL)
    assert {(r["run_id"], r["status"], r["cases"], r["judgments"]) for r in counts} == {
        (run_id, "complete", CASES, CASES * len(CRITERIA)) for run_id in ids
    }

    # A third run whose assembly changes nothing is served every stage from what they wrote.
    third = tmp_path / "third"
    third.mkdir()
    (report,) = _run_together(project, url, [machine()], third, "--set", "system.rag.token_budget=2000")
    assert report["cache"] == {
        "execution": {"hit": 0, "miss": CASES}, "retrieve": {"hit": CASES, "miss": 0},
        "generate": {"hit": CASES, "miss": 0}, "judgment": {"hit": CASES * len(CRITERIA), "miss": 0},
    }, report["cache"]  # fmt: skip

    # The two agree on every output, verdict and metric; neither lost a row to the other.
    records = _records(olo, reader, url)
    assert set(records) == ids | {report["run_id"]}
    assert records[first["run_id"]] == records[second["run_id"]]
    cases = records[first["run_id"]]["cases"]
    assert [row["case_id"] for row in cases] == [f"case_{n:02d}" for n in range(CASES)]
    assert {row["status"] for row in cases} == {"ok"}
    answers = {row["case_id"]: json.loads(row["output"])["answer"] for row in cases}
    assert answers["case_00"] == "It is answer-00." and answers["case_03"] == "No answer found."
    metrics = records[first["run_id"]]["metrics"]
    overall = {m["criterion"]: (m["successes"], m["observed"]) for m in metrics if m["slice"] is None}
    assert overall == {"answer_correct": (ANSWERED, CASES), "hit_rate_at_2": (ANSWERED, CASES),
                       "citations_valid": (CASES, CASES)}  # fmt: skip

    # The third run's records are theirs, apart from the keys that name its token budget.
    again = records[report["run_id"]]
    stable = ("case_id", "status", "retrieval_key", "generation_key", "output", "context", "dropped")
    assert [{k: r[k] for k in stable} for r in again["cases"]] == [{k: r[k] for k in stable} for r in cases]
    assert again["judgments"] == records[first["run_id"]]["judgments"]
    assert again["metrics"] == metrics

    # Every record the three wrote is whole, and there is exactly one per identity.
    _assert_whole_records(store, cases + again["cases"])
