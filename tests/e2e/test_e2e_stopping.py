"""A run never hangs: contract errors, timeouts, user code that exits, signals.

Each run is a real ``oloproof run`` subprocess against the session's Prefect
server. A hang would show as the subprocess outliving its generous time limit;
nothing here times how fast anything is.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from descriptors import open_files

from oloproof.store import ResultsStore

pytestmark = [pytest.mark.services, pytest.mark.slow]

_LIMIT = 120  # seconds: far beyond any of these runs; reaching it means a hang
_CLI = [sys.executable, "-m", "oloproof._cli.main"]

SYSTEM = '''
import asyncio, datetime, sys, time
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

FLAG = Path(__file__).with_name("slow.flag")


@rag_system(name="stopper", version="v1", depth=2, top_k=2, index_version="i1")
class Stopper:
    def retrieve(self, input, depth):
        mode = input["mode"]
        passages = [Passage(doc_id=f"d{i}", text=f"passage {i}") for i in range(depth)]
        if mode == "too_many":
            passages.append(Passage(doc_id="extra", text="one too many"))
        return Retrieval(query=input["q"], depth=depth, candidates=tuple(passages))

    def generate(self, input, context):
        mode = input["mode"]
        if mode == "slow" and FLAG.exists():
            time.sleep(float(input.get("seconds", 0.3)))
        if mode == "hang":
            time.sleep(3600)
        if mode == "exit":
            sys.exit(3)
        if mode == "interrupt":
            raise KeyboardInterrupt
        if mode == "set":
            return {"answer": {1, 2}}
        if mode == "bytes":
            return {"answer": b"raw"}
        if mode == "datetime":
            return {"answer": datetime.datetime(2026, 1, 1)}
        if mode == "object":
            return {"answer": object()}
        return {"answer": "ok " + input["q"]}
'''

ASYNC_HANG = '''

class AsyncRetrieve(Stopper):
    async def retrieve(self, input, depth):
        if input["mode"] == "ahang":
            await asyncio.sleep(3600)
        return super().retrieve(input, depth)
'''


def _project(root: Path, modes: list[str], *, generate_timeout: float | None = 60, object: str = "Stopper",
             retrieve_timeout: float = 60,
             max_concurrency: int = 4, seconds: float = 0.3) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(SYSTEM + ASYNC_HANG)
    (root / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{n:03d}-{mode}", "input": {"q": f"q{n}", "mode": mode, "seconds": seconds},
                    "expected": {"answer": "ok"}}) + "\n"
        for n, mode in enumerate(modes)
    ))  # fmt: skip
    timeouts = "null" if generate_timeout is None else generate_timeout
    (root / "oloproof.yaml").write_text(textwrap.dedent(f"""\
        system:
          rag:
            object: app:{object}
        dataset: cases.jsonl
        evaluators:
          - {{type: contains, criterion: answered, field: answer, expected_field: answer}}
        max_concurrency: {max_concurrency}
        batch_size: 4
        timeouts: {{retrieve: {retrieve_timeout}, generate: {timeouts}}}
    """))
    return root


def _run(olo, env, project: Path, *extra: str) -> subprocess.CompletedProcess:
    return olo("run", project, "--json", *extra, env=env, timeout=_LIMIT)


def _cases(olo, env, project: Path, run_id: str) -> dict[str, dict]:
    result = olo("query", "select case_id, status, error_stage, error from cases where run_id = $1",
                 "--param", run_id, "--project", project, "--json", env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return {row["case_id"]: row for row in json.loads(result.stdout)}


def _complete_runs(olo, env, project: Path) -> list[dict]:
    result = olo("runs", "--project", project, "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_contract_error_stops_every_batch_and_the_process_exits(tmp_path, machine, olo):
    # One retrieval breaks the contract while other batches hold calls that would
    # take an hour (with no timeout, and slots to spare for the retrieval): the run
    # stops them, prints one line and exits.
    modes = ["hang"] * 3 + ["ok"] * 10 + ["too_many"] + ["ok"] * 10
    project = _project(tmp_path / "p", modes, generate_timeout=None, max_concurrency=8)
    result = _run(olo, machine(), project)
    assert result.returncode == 2, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("oloproof:")]
    assert len(lines) == 1 and "3 candidates" in lines[0] and "depth is 2" in lines[0], result.stderr[-2000:]
    assert _complete_runs(olo, machine(), project) == []


def test_a_call_past_its_timeout_is_a_missing_case(tmp_path, machine, olo):
    # A blocking generate is abandoned; an async retrieve is cancelled.
    project = _project(tmp_path / "p", ["ok", "hang", "ahang", "ok"], generate_timeout=1, retrieve_timeout=1,
                       object="AsyncRetrieve")
    result = _run(olo, machine(), project)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    cases = _cases(olo, machine(), project, report["run_id"])
    assert (cases["c001-hang"]["status"], cases["c001-hang"]["error_stage"], cases["c001-hang"]["error"]) == (
        "missing", "generate", "timeout after 1s")
    assert (cases["c002-ahang"]["status"], cases["c002-ahang"]["error_stage"], cases["c002-ahang"]["error"]) == (
        "missing", "retrieve", "timeout after 1s")
    assert [cases[k]["status"] for k in ("c000-ok", "c003-ok")] == ["ok", "ok"]


def test_user_code_that_exits_or_returns_no_json_is_a_missing_case(tmp_path, machine, olo):
    modes = ["ok", "exit", "interrupt", "set", "bytes", "datetime", "object", "ok"]
    project = _project(tmp_path / "p", modes)
    result = _run(olo, machine(), project)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    (answered,) = [m for m in report["metrics"] if m["criterion"] == "answered" and m["slice"] is None]
    assert (answered["observed"], answered["missing"]) == (2, 6)
    cases = _cases(olo, machine(), project, report["run_id"])
    assert cases["c001-exit"]["error"].startswith("SystemExit: 3 (at ")
    assert cases["c002-interrupt"]["error"].startswith("KeyboardInterrupt (at ")
    for case_id, kind in (("c003-set", "set"), ("c004-bytes", "bytes"), ("c005-datetime", "datetime"),
                          ("c006-object", "object")):  # fmt: skip
        error = cases[case_id]["error"]
        assert "not JSON" in error and kind in error, error
        assert cases[case_id]["error_stage"] == "generate"


def _default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stage_records(store: Path, stage: str) -> int:
    return len(ResultsStore(str(store)).record_keys(stage)) if store.exists() else 0


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_run_cleanly_and_the_next_run_resumes(tmp_path, machine, olo, signum):
    modes = ["slow"] * 24
    project = _project(tmp_path / "p", modes, max_concurrency=2, seconds=0.4)
    (project / "slow.flag").write_text("")
    store = project / ".oloproof" / "results"
    env = machine()
    # As from a terminal: a shell's background job (CI's, say) would pass SIGINT on ignored.
    # preexec_fn only resets signal dispositions: it takes no lock another thread could hold.
    process = subprocess.Popen([*_CLI, "run", str(project), "--json"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=_default_signals)  # noqa: PLW1509  # fmt: skip
    try:
        deadline = time.monotonic() + _LIMIT
        while _stage_records(store, "generate") < 4:
            assert process.poll() is None, process.stderr.read()[-2000:]
            assert time.monotonic() < deadline, "no generation was recorded"
            time.sleep(0.05)
        process.send_signal(signum)
        _, err = process.communicate(timeout=_LIMIT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == (130 if signum == signal.SIGINT else 143), err[-2000:]
    assert err.strip().splitlines()[-1].startswith("oloproof: ")
    assert _complete_runs(olo, env, project) == []
    durable = _stage_records(store, "generate")
    assert 4 <= durable < len(modes)

    (project / "slow.flag").unlink()
    result = _run(olo, env, project)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    # Only what was not yet durable runs again: a case whose whole batch finished
    # comes back through the execution cache, the others through the stage cache.
    cache = report["cache"]
    assert cache["execution"]["hit"] + cache["generate"]["hit"] == durable, cache
    assert cache["generate"]["miss"] == len(modes) - durable, cache
    assert [run["run_id"] for run in _complete_runs(olo, env, project)] == [report["run_id"]]


def _open_under(pid: int, folder: Path) -> set[str]:
    """The files under ``folder`` that process ``pid`` has open."""
    return {path for path in open_files(pid) if path.startswith(f"{folder}/")}


def test_a_run_waiting_for_another_runs_batch_stops_on_a_signal(tmp_path, machine, olo):
    # The first run holds its generation batch's lock in a call that takes an hour;
    # the second, on the same store, waits for that lock (its lock file open) and
    # must still stop at once on SIGTERM.
    project = _project(tmp_path / "p", ["hang"] * 4, generate_timeout=None)
    locks = project / ".oloproof" / "results" / "prefect" / ".locks"
    env = machine()
    runs = [subprocess.Popen([*_CLI, "run", str(project), "--json"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)]  # fmt: skip
    try:
        deadline = time.monotonic() + _LIMIT
        while _stage_records(project / ".oloproof" / "results", "retrieve") < 4:
            assert runs[0].poll() is None and time.monotonic() < deadline, "the first run never retrieved"
            time.sleep(0.05)
        runs.append(subprocess.Popen([*_CLI, "run", str(project), "--json"], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True))  # fmt: skip
        # One lock file open in both: the first holds it, so the second is waiting on it.
        while not _open_under(runs[0].pid, locks) & _open_under(runs[1].pid, locks):
            assert runs[1].poll() is None, runs[1].communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the second run never waited for a lock"
            time.sleep(0.05)
        runs[1].send_signal(signal.SIGTERM)
        _, err = runs[1].communicate(timeout=_LIMIT)
        assert runs[1].returncode == 143, err[-2000:]
        assert err.strip().splitlines()[-1].startswith("oloproof: ")
    finally:
        for process in runs:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
