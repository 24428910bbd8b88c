"""Recorded rows: ``oloproof run --criteria --dataset`` killed with SIGKILL, then the same command.

Seeded rows scored by the catalogue's ``document_retrieval`` are run uninterrupted
into a store of their own. Then, in a local folder and in a moto bucket, the same
command is SIGKILLed (its whole process group) once a quarter of the judgments are
durable, and run again: the second run completes, replays every judgment the killed
run made durable (its cache counts say so) and writes the same tables, row for row,
as the uninterrupted run.

What a kill can lose is the judgments of the batches in flight since their records'
last flush; they are judged again. The row count is ``OLOPROOF_RESUME_ROWS`` (2,000 by
default; ``benchmarks/recorded_resume.py`` runs 100,000). With
``OLOPROOF_RESUME_REPORT`` set, each store's figures are appended to that file as a
JSON line.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from processes import clean_env, stop_process, tail

from oloproof.store import CASES, JUDGMENTS, METRICS, RETRIEVALS, ResultsStore

pytestmark = [pytest.mark.services, pytest.mark.slow]

CLI = [sys.executable, "-m", "oloproof._cli.main"]
ROWS = int(os.environ.get("OLOPROOF_RESUME_ROWS", "2000"))
TIMEOUT = 240 + ROWS / 200
"""Seconds one run may take: generous, for a loaded machine (about a second per 1,000 rows idle)."""
CRITERIA = [{
    "type": "azure_ai_evaluator", "name": "document_retrieval", "evaluator_name": "builtin.document_retrieval",
    "initialization_parameters": {"ground_truth_label_min": 0, "ground_truth_label_max": 4},
    "data_mapping": {"retrieval_ground_truth": "{{item.retrieval_ground_truth}}",
                     "retrieved_documents": "{{item.retrieved_documents}}"},
}]  # fmt: skip
VARYING = ("run_id", "execution_hit", "retrieve_hit", "generate_hit", "hit", "retrieve_ms", "generate_ms", "latency_ms")
"""What two runs of the same rows may differ in: the run, the cache hits, timings."""


def _write_rows(folder: Path) -> None:
    rng = random.Random(20261207)
    docs = [f"doc{i}" for i in range(30)]
    with (folder / "rows.jsonl").open("w", encoding="utf-8") as handle:
        for n in range(ROWS):
            truth = [{"document_id": d, "query_relevance_label": rng.randint(0, 4)} for d in rng.sample(docs, 10)]
            shown = [{"document_id": d, "relevance_score": round(rng.uniform(0, 100), 3)} for d in rng.sample(docs, 10)]
            handle.write(json.dumps({"id": f"q{n}", "retrieval_ground_truth": truth, "retrieved_documents": shown}) + "\n")
    (folder / "criteria.json").write_text(json.dumps(CRITERIA), encoding="utf-8")


def _start(folder: Path, url: str, env: dict[str, str], name: str) -> subprocess.Popen:
    with open(folder / f"{name}.out", "wb") as stdout, open(folder / f"{name}.err", "wb") as stderr:
        return subprocess.Popen(
            [*CLI, "run", "--criteria", "criteria.json", "--dataset", "rows.jsonl", "--results", url, "--json"],
            stdout=stdout, stderr=stderr, env=env, cwd=folder, start_new_session=True,
        )  # fmt: skip


def _complete(folder: Path, url: str, env: dict[str, str], name: str) -> dict[str, Any]:
    process = _start(folder, url, env, name)
    try:
        code = process.wait(timeout=TIMEOUT)
    finally:
        stop_process(process)
    assert code == 0, f"oloproof run exited {code}:\n{tail(folder / f'{name}.err')}"
    return json.loads((folder / f"{name}.out").read_text(encoding="utf-8"))


def _fingerprints(folder: Path, url: str, env: dict[str, str], run_id: str) -> dict[str, Any]:
    """Each table's rows of the run (less what may vary) as a count and two order-free hashes."""
    out = {}
    for schema in (CASES, RETRIEVALS, JUDGMENTS, METRICS):
        kept = ", ".join(name for name in schema.names if name not in VARYING)
        sql = (f"SELECT count(*) AS n, bit_xor(hash(r)) AS x, sum(hash(r)::HUGEINT)::VARCHAR AS s "
               f"FROM (SELECT {kept} FROM {schema.name} WHERE run_id = $1) AS r")  # fmt: skip
        done = subprocess.run([*CLI, "query", sql, "--param", run_id, "--results", url, "--json"], env=env, cwd=folder,
                              check=False, capture_output=True, text=True, timeout=TIMEOUT)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        out[schema.name] = json.loads(done.stdout)[0]
    return out


def _judgment_records(reader: ResultsStore) -> int:
    return len(reader.record_keys("judge"))


@pytest.fixture(scope="module")
def reference(prefect_server, tmp_path_factory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("recorded-reference")
    _write_rows(folder)
    env = {**clean_env(), "PREFECT_HOME": str(folder / "home"), "PREFECT_API_URL": prefect_server,
           "DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}  # fmt: skip
    report = _complete(folder, str(folder / "store"), env, "reference")
    judgments = report["cache"]["judgment"]
    records = _judgment_records(ResultsStore(str(folder / "store")))
    # document_retrieval's nine outputs are nine judgments of one record a row.
    assert report["case_count"] == records == ROWS and judgments == {"hit": 0, "miss": 9 * ROWS}, (judgments, records)
    return {"folder": folder, "report": report,
            "tables": _fingerprints(folder, str(folder / "store"), env, report["run_id"])}  # fmt: skip


@pytest.mark.parametrize("where", ["local", "s3"])
def test_a_killed_recorded_run_resumes_with_the_uninterrupted_runs_tables(where, reference, prefect_server, tmp_path,
                                                                         request):  # fmt: skip
    folder = tmp_path
    for name in ("rows.jsonl", "criteria.json"):
        (folder / name).write_bytes((reference["folder"] / name).read_bytes())
    env = {**clean_env(), "PREFECT_HOME": str(folder / "home"), "PREFECT_API_URL": prefect_server,
           "DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}  # fmt: skip
    if where == "local":
        url, reader = str(folder / "store"), ResultsStore(str(folder / "store"))
    else:
        moto, creds = request.getfixturevalue("moto_server"), request.getfixturevalue("aws_test_credentials")
        url = f"s3://{request.getfixturevalue('new_bucket')()}/oloproof"
        env.update(AWS_ACCESS_KEY_ID=creds["key"], AWS_SECRET_ACCESS_KEY=creds["secret"],
                   AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL=moto)  # fmt: skip
        reader = ResultsStore(url, {"endpoint_url": moto, "key": creds["key"], "secret": creds["secret"]})

    started = time.monotonic()
    process = _start(folder, url, env, "killed")
    try:
        while _judgment_records(reader) < ROWS // 4:
            if process.poll() is not None:
                pytest.fail(f"the run ended ({process.returncode}) before the kill point:\n{tail(folder / 'killed.err')}")
            if time.monotonic() - started > TIMEOUT:
                pytest.fail(f"no quarter of the judgments was durable in time:\n{tail(folder / 'killed.err')}")
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        stop_process(process)
    assert process.returncode == -signal.SIGKILL
    durable = _judgment_records(reader)
    assert ROWS // 4 <= durable <= ROWS, durable

    resumed = _complete(folder, url, env, "resumed")
    # Every durable judgment is replayed; only the rest is judged again.
    assert resumed["cache"]["judgment"] == {"hit": 9 * durable, "miss": 9 * (ROWS - durable)}, (resumed["cache"], durable)
    assert _fingerprints(folder, url, env, resumed["run_id"]) == reference["tables"]
    assert {m["criterion"]: m["estimate"] for m in resumed["metrics"]} == {
        m["criterion"]: m["estimate"] for m in reference["report"]["metrics"]}  # fmt: skip
    report = os.environ.get("OLOPROOF_RESUME_REPORT")
    if report:
        with open(report, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"store": where, "rows": ROWS, "durable_at_kill": durable,
                                     "resumed_cache": resumed["cache"]["judgment"], "tables_equal": True}) + "\n")
