"""``oloproof query`` ends: at its ``--timeout``, on Ctrl-C and on SIGTERM, with one line and
the exit codes of the other commands, however long DuckDB would have run the statement."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from judged_runs import judged_run, write_run

from oloproof._cli.main import main
from oloproof.store import ResultsStore

CLI = [sys.executable, "-m", "oloproof._cli.main"]
ENDLESS = "SELECT count(*) FROM range(10000000000000)"
LIMIT_S = 300  # generous: the machine may be loaded; nothing here measures time


@pytest.fixture
def url(tmp_path) -> str:
    store = ResultsStore(str(tmp_path / "store"))
    write_run(store, judged_run("run_Q", [5, 1]))
    return store.url


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_statement_past_its_timeout_is_stopped(url, capsys):
    code, out, err = _cli(capsys, "query", ENDLESS, "--timeout", "0.5", "--results", url)
    assert (code, out) == (2, "")
    assert err.splitlines() == ["oloproof: error: the query ran past its timeout of 0.5 s and was stopped"]


def test_a_statement_within_its_timeout_answers(url, capsys):
    assert _cli(capsys, "query", "SELECT 1 AS one", "--timeout", "0", "--results", url)[:2] == (0, "one\n1\n")
    assert _cli(capsys, "query", "SELECT 1 AS one", "--timeout", "30", "--results", url)[:2] == (0, "one\n1\n")


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-inf"])
def test_a_timeout_that_is_not_a_finite_number_of_at_least_0_is_refused(url, capsys, value):
    code, out, err = _cli(capsys, "query", "SELECT 1", f"--timeout={value}", "--results", url)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and "field '--timeout': must be a finite number of seconds" in err


def _default_signals() -> None:
    # As from a terminal: a shell's background job would pass SIGINT on ignored.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _busy_threads(pid: int) -> bool:
    """Whether a thread other than the main one has run for a while: DuckDB executing the statement."""
    ticks = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").iterdir():
        if task.name == str(pid):
            continue
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if (int(fields[11]) + int(fields[12])) / ticks >= 0.5:  # utime + stime
            return True
    return False


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="tells a running statement by /proc")
@pytest.mark.parametrize(("signum", "code", "line"), [
    (signal.SIGINT, 130, "oloproof: interrupted"),
    (signal.SIGTERM, 143, "oloproof: terminated"),
])
def test_a_signal_stops_a_running_statement(url, signum, code, line):
    # preexec_fn only resets signal dispositions: it takes no lock another thread could hold.
    process = subprocess.Popen([*CLI, "query", ENDLESS, "--results", url],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=_default_signals)  # noqa: PLW1509  # fmt: skip
    try:
        deadline = time.monotonic() + LIMIT_S
        while not _busy_threads(process.pid):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the statement never ran"
            time.sleep(0.05)
        process.send_signal(signum)
        out, err = process.communicate(timeout=LIMIT_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert (process.returncode, out) == (code, ""), err[-2000:]
    assert err.splitlines() == [line]


_STALLING = """
import sys, time
import oloproof.store._queries as queries
from oloproof._cli.main import entry

queries.STOP_GRACE_S = 0.2
build = queries.build_connection

def stalling(*args, **kwargs):
    con = build(*args, **kwargs)
    def stall(x: int) -> int:  # Python inside DuckDB: an interrupt cannot stop it
        end = time.monotonic() + 30
        while time.monotonic() < end:
            time.sleep(0.001)
        return x
    con.create_function("stall", stall)
    return con

queries.build_connection = stalling
sys.argv = ["oloproof", "query", "SELECT stall(1)", "--timeout", "0.3", "--results", sys.argv[1]]
entry()
"""


def test_a_statement_that_outlives_its_grace_does_not_abort_the_process(url, tmp_path):
    # Left running, the statement's thread would meet the interpreter's finalization
    # inside DuckDB: "terminate called ... exception not rethrown", SIGABRT.
    script = tmp_path / "stalling.py"
    script.write_text(_STALLING)
    done = subprocess.run([sys.executable, str(script), url], check=False, capture_output=True, text=True,
                          timeout=LIMIT_S)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, ""), done.stderr[-2000:]
    assert done.stderr.splitlines() == ["oloproof: error: the query ran past its timeout of 0.3 s and was stopped"]
