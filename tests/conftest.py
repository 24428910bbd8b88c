"""Fixtures shared by the whole test suite."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

# The suite starts hundreds of Python processes (servers, command-line runs, Dask
# workers), each importing Prefect. Where the environment forbids writing bytecode,
# every one of them compiles those modules from source again (about 3 s each):
# let them cache it, once, as Python does by default.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# A command run from a terminal keeps a local Prefect server for later commands; the suite's
# commands (whatever terminal pytest runs in) start and stop their own, unless a test asks.
os.environ.setdefault("OLOPROOF_SERVER", "temporary")
sys.dont_write_bytecode = False

# Every process the suite starts inherits this mark (the e2e tests' clean environments
# keep it: they strip only Prefect, AWS and Oloproof settings), so the session can tell,
# at its end, whether any of them outlived it.
PROCESS_MARK = "TESTS_PROCESS_MARK"
os.environ.setdefault(PROCESS_MARK, f"{os.getpid()}-{time.time_ns()}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """A real moto S3 server on 127.0.0.1, for the whole session.

    Yields:
        The endpoint URL, e.g. ``http://127.0.0.1:54321``.
    """
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    env = dict(os.environ)
    env.pop("INITIAL_NO_AUTH_ACTION_COUNT", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                pytest.fail(f"the moto server exited with code {process.returncode}")
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1):
                    break
            except urllib.error.HTTPError:  # any HTTP answer means it is up
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail("the moto server did not answer within 30 s")
                time.sleep(0.1)
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def _server() -> Iterator[object]:
    """One threaded HTTP server on 127.0.0.1 for the session (stopping one takes up to 0.5 s)."""
    from pytest_httpserver import HTTPServer

    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


@pytest.fixture
def server(_server) -> Iterator[object]:
    """The session's HTTP server with no handlers, for scripted provider endpoints;
    an error inside a handler fails the test."""
    _server.clear()
    yield _server
    _server.check_handler_errors()
    _server.clear()


REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "support_rag"


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory) -> Iterator[None]:
    """One temporary Prefect server (own PREFECT_HOME and database) for the session.

    Started the way ``oloproof`` starts one, waiting on the clock (a loaded machine
    takes minutes to create and migrate a first database).
    """
    os.environ.setdefault("PREFECT_HOME", str(tmp_path_factory.mktemp("prefect-home")))
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "CRITICAL")
    from oloproof._cli._common import quiet_prefect

    quiet_prefect()
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from oloproof.flows._api import connect_prefect_api

    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        api = connect_prefect_api(notify=lambda line: None)
    try:
        with temporary_settings(updates={PREFECT_API_URL: api.url}):
            yield
            APILogWorker.drain_all(timeout=30)
            EventsWorker.drain_all(timeout=30)
    finally:
        SubprocessASGIServer().stop()


@pytest.fixture
def example_project(tmp_path) -> __import__("pathlib").Path:
    """A private copy of examples/support_rag, with its own results store, in batches."""
    from projects import copy_project

    return copy_project(EXAMPLE, tmp_path / "support_rag")


@pytest.fixture
def shipped_example(tmp_path) -> __import__("pathlib").Path:
    """A private copy of examples/support_rag exactly as shipped (one task run per case)."""
    from projects import copy_project

    return copy_project(EXAMPLE, tmp_path / "support_rag", batched=False)


@pytest.fixture
def run_cli(prefect_api, capsys) -> Iterator[object]:
    """Run ``oloproof`` in-process; returns (exit code, stdout, stderr)."""
    from oloproof._cli.main import main

    def invoke(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    yield invoke


def _ancestors() -> set[int]:
    """This process and the processes it runs under (a session started inside another's)."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            pid = int(__import__("pathlib").Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return pids


def _marked_processes(mark: str) -> dict[int, str]:
    """Live processes (not this one) whose environment carries ``mark``, with their command lines."""
    needle = f"{PROCESS_MARK}={mark}".encode()
    found: dict[int, str] = {}
    ours = _ancestors()
    for entry in __import__("pathlib").Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in ours:
            continue
        try:
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
    return found


def pytest_sessionfinish(session, exitstatus) -> None:
    """Fail the session if a process it started outlives it (a server, a run, a worker)."""
    if hasattr(session.config, "workerinput") or not sys.platform.startswith("linux"):
        return  # the controller checks once every worker has exited
    mark = os.environ[PROCESS_MARK]
    deadline = time.monotonic() + 60  # processes being stopped may take a moment to exit
    left = _marked_processes(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = _marked_processes(mark)
    if left:
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        lines = "\n".join(f"  {pid}: {command[:200]}" for pid, command in sorted(left.items()))
        print(f"\nthe suite left {len(left)} process(es) behind (now killed):\n{lines}", file=sys.stderr)
        session.exitstatus = 1


def pytest_collection_modifyitems(config, items) -> None:
    """Run the files that start real services first, then the other slow ones.

    The suite runs on several workers, each taking whole files (``--dist
    loadfile``); a long file started last would keep one worker busy while the
    others sit idle. The order within a file is kept.
    """
    rank: dict[str, int] = {}
    for item in items:
        path = str(item.path)
        weight = 0 if item.get_closest_marker("services") else 1 if item.get_closest_marker("slow") else 2
        rank[path] = min(rank.get(path, 2), weight)
    items.sort(key=lambda item: rank[str(item.path)])
