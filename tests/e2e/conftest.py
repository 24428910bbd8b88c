"""Fixtures of the end-to-end tests: a REAL Prefect server, "machines", the CLI, S3 buckets.

Every test here talks to real local services only: a ``prefect server start``
subprocess (one per session), the moto S3 server of ``tests/conftest.py`` and
``oloproof`` command-line subprocesses. A "machine" is a fresh process
environment with its own ``PREFECT_HOME``; nothing is shared between machines
except the Prefect server and the bucket.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from processes import clean_env, free_port, stop_process, tail
from projects import copy_project

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "support_rag"

ACCESS_KEY_ID = "E2ETESTKEYID00000001"
SECRET_ACCESS_KEY = "e2e-Secret/Key+MustNeverBeStored-7f3a9c"
"""Moto accepts any credentials while it does not enforce auth; these are distinctive
so that a test can look for them in every object and in the Prefect database."""

CLI = [sys.executable, "-m", "oloproof._cli.main"]

@dataclass(frozen=True)
class PrefectServer:
    url: str
    """The API URL, ``http://127.0.0.1:<port>/api``."""
    ui: str
    """The UI's root URL."""
    home: Path
    """The server's own PREFECT_HOME (its SQLite database lives here)."""
    log: Path


@pytest.fixture(scope="session")
def prefect_server_info(tmp_path_factory) -> Iterator[PrefectServer]:
    """A REAL ``prefect server start`` subprocess for the whole session."""
    home = tmp_path_factory.mktemp("prefect-server-home")
    log = home / "server.log"
    port = free_port()
    ui = f"http://127.0.0.1:{port}"
    url = f"{ui}/api"
    env = clean_env()
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        PREFECT_UI_API_URL=url,  # the UI's browser code calls this API (default: port 4200)
        PREFECT_SERVER_LOGGING_LEVEL="WARNING",
    )
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=str(home), start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"prefect server exited with {process.returncode}:\n{tail(log)}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"prefect server did not answer /api/health within 120 s:\n{tail(log)}")
            time.sleep(0.3)
        yield PrefectServer(url=url, ui=ui, home=home, log=log)
    finally:
        stop_process(process)


@pytest.fixture(scope="session")
def prefect_server(prefect_server_info) -> str:
    """The API URL of the session's REAL Prefect server."""
    return prefect_server_info.url


@pytest.fixture(scope="session")
def server_api(prefect_server) -> Callable[..., Any]:
    """``server_api(path, body=None, method=None)``: JSON over the real server's REST API."""

    def call(path: str, body: Any = None, method: str | None = None, timeout: float = 15) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{prefect_server}/{path.lstrip('/')}",
            data=data,
            method=method or ("GET" if body is None else "POST"),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise AssertionError(f"{method or ''} {path} -> {error.code}: {error.read()[:500]!r}") from error
        return json.loads(text) if text else None

    return call


@pytest.fixture
def machine(tmp_path_factory, prefect_server, moto_server) -> Callable[..., dict[str, str]]:
    """``machine(server=True, endpoint_env=True, **extra)``: the environment of a fresh machine.

    A fresh PREFECT_HOME; PREFECT_API_URL of the real server (unless ``server=False``);
    test AWS credentials; ``AWS_ENDPOINT_URL`` of the moto server (unless
    ``endpoint_env=False``, for projects that name it in ``storage_options``).
    """

    def make(server: bool = True, endpoint_env: bool = True, **extra: str) -> dict[str, str]:
        env = clean_env()
        env.update(
            PREFECT_HOME=str(tmp_path_factory.mktemp("machine-prefect-home")),
            PREFECT_SERVER_ANALYTICS_ENABLED="false",
            DO_NOT_TRACK="1",
            AWS_ACCESS_KEY_ID=ACCESS_KEY_ID,
            AWS_SECRET_ACCESS_KEY=SECRET_ACCESS_KEY,
            AWS_DEFAULT_REGION="us-east-1",
            COLUMNS="200",
        )
        if server:
            env["PREFECT_API_URL"] = prefect_server
        if endpoint_env:
            env["AWS_ENDPOINT_URL"] = moto_server
        env.update(extra)
        return env

    return make


@pytest.fixture(scope="session")
def olo() -> Callable[..., subprocess.CompletedProcess]:
    """``olo(*args, env=..., cwd=None, timeout=240)``: run the ``oloproof`` CLI in a subprocess."""

    def run(*args: str, env: dict[str, str], cwd: str | Path | None = None,
            timeout: float = 240) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*CLI, *map(str, args)], env=env, cwd=str(cwd) if cwd else None,
            check=False, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip

    return run


@pytest.fixture(scope="session")
def s3_fs(moto_server) -> Any:
    """An s3fs filesystem on the moto server (never caching listings)."""
    import s3fs

    return s3fs.S3FileSystem(
        endpoint_url=moto_server, key=ACCESS_KEY_ID, secret=SECRET_ACCESS_KEY,
        skip_instance_cache=True, use_listings_cache=False,
    )  # fmt: skip


@pytest.fixture
def new_bucket(s3_fs) -> Callable[[], str]:
    """``new_bucket()``: create a fresh, empty bucket; returns its name."""

    def make() -> str:
        name = f"oloproof-e2e-{uuid.uuid4().hex[:12]}"
        s3_fs.mkdir(name)
        return name

    return make


@pytest.fixture
def project_copy(tmp_path) -> Callable[..., Path]:
    """``project_copy(name, **settings)``: a private copy of examples/support_rag.

    Keyword settings replace top-level keys of its ``oloproof.yaml`` (e.g.
    ``results="s3://b/p"``, ``storage_options={...}``).
    """

    def make(name: str = "support_rag", **settings: Any) -> Path:
        target = copy_project(EXAMPLE, tmp_path / name)
        if settings:
            config_file = target / "oloproof.yaml"
            config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
            config.update(settings)
            config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        return target

    return make


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 1.0,
             on_timeout: Callable[[], str] | None = None) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            extra = on_timeout() if on_timeout else ""
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}\n{extra}")
        time.sleep(interval)


@pytest.fixture(scope="session")
def poll() -> Callable[..., Any]:
    """``poll(predicate, timeout, what, ...)``: see :func:`wait_for`."""
    return wait_for


def flow_runs_tagged(server_api: Callable[..., Any], *tags: str, flow: str | None = None) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"flow_runs": {"tags": {"all_": list(tags)}}, "limit": 200}
    if flow:
        body["flows"] = {"name": {"any_": [flow]}}
    return server_api("/flow_runs/filter", body) or []


@pytest.fixture(scope="session")
def runs_tagged(server_api) -> Callable[..., list[dict[str, Any]]]:
    """``runs_tagged(*tags, flow=None)``: the server's flow runs carrying every tag."""
    return lambda *tags, flow=None: flow_runs_tagged(server_api, *tags, flow=flow)


def stderr_lines(result: subprocess.CompletedProcess) -> list[str]:
    """The non-blank lines a command wrote to stderr."""
    return [line for line in result.stderr.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def aws_test_credentials() -> dict[str, str]:
    """The test AWS credentials every machine carries in its environment."""
    return {"key": ACCESS_KEY_ID, "secret": SECRET_ACCESS_KEY}


@pytest.fixture(scope="session")
def err_lines() -> Callable[[subprocess.CompletedProcess], list[str]]:
    return stderr_lines
