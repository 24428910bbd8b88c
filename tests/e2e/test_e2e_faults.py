"""Faults end to end: a missing bucket, wrong credentials, a dead endpoint, an event
without ``index_version``, and a run that cannot write its records.

Each faulty run is one line on stderr, exit 2, and no run is marked complete anywhere:
not in the store, not in the project folder, not on the REAL Prefect server (every run
here carries a unique ``version:`` tag to look for).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = [pytest.mark.services, pytest.mark.slow]


def _unique_version() -> str:
    return f"fault-{uuid.uuid4().hex[:10]}"


def _closed_endpoint() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def _auth_enforced(moto_server: str):
    """Moto checks request signatures against its IAM only after reset-auth 0; restore with inf."""

    def post(count: str) -> None:
        request = urllib.request.Request(f"{moto_server}/moto-api/reset-auth", data=count.encode(),
                                         method="POST", headers={"Content-Type": "text/plain"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=10):
            pass

    post("0")
    try:
        yield
    finally:
        post("inf")


def _assert_no_complete_run(project: Path, version: str, runs_tagged) -> None:
    local = project / ".oloproof" / "results"
    assert not list(local.rglob("run.json")), "a run.json in the project's local store"
    completed = [r for r in runs_tagged(f"version:{version}") if r["state_type"] == "COMPLETED"]
    assert completed == [], [r["name"] for r in completed]


def _assert_one_line_naming(result: subprocess.CompletedProcess, url: str, err_lines, *words: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-3000:])
    lines = err_lines(result)
    assert len(lines) == 1, result.stderr[-3000:]
    (line,) = lines
    assert line.startswith("oloproof: error:") and url in line, line
    for word in words:
        assert word in line, line
    return line


# -- the store ------------------------------------------------------------------------


def test_a_bucket_that_does_not_exist(project_copy, machine, olo, s3_fs, runs_tagged, err_lines):
    bucket = f"oloproof-missing-{uuid.uuid4().hex[:10]}"
    url = f"s3://{bucket}/oloproof"
    project = project_copy(results=url)
    version = _unique_version()
    ran = olo("run", project, "--set", f"system.version={version}", env=machine(), timeout=120)
    _assert_one_line_naming(ran, url, err_lines, "does not exist")
    assert not s3_fs.exists(bucket), "the run created the bucket"
    _assert_no_complete_run(project, version, runs_tagged)


def test_wrong_credentials(project_copy, machine, olo, s3_fs, new_bucket, moto_server, runs_tagged, err_lines):
    bucket = new_bucket()
    url = f"s3://{bucket}/oloproof"
    project = project_copy(results=url)
    version = _unique_version()
    with _auth_enforced(moto_server):
        ran = olo("run", project, "--set", f"system.version={version}", env=machine(), timeout=120)
    _assert_one_line_naming(ran, url, err_lines, "access denied")
    assert s3_fs.find(bucket) == [], "objects were written with rejected credentials"
    _assert_no_complete_run(project, version, runs_tagged)


@pytest.mark.parametrize("named_in", ["environment", "oloproof.yaml"])
def test_an_endpoint_that_is_down(named_in, project_copy, machine, olo, new_bucket, runs_tagged, err_lines):
    closed = _closed_endpoint()
    url = f"s3://{new_bucket()}/oloproof"
    if named_in == "environment":
        project, env = project_copy(results=url), machine(AWS_ENDPOINT_URL=closed)
    else:
        project = project_copy(results=url, storage_options={"endpoint_url": closed})
        env = machine(endpoint_env=False)
    version = _unique_version()
    # No bound on the time it takes (the suite runs on loaded machines): a hang would meet
    # the subprocess timeout, and the refused connection is retried at once, not waited on.
    ran = olo("run", project, "--set", f"system.version={version}", env=env, timeout=600)
    _assert_one_line_naming(ran, url, err_lines, "unreachable", closed)
    _assert_no_complete_run(project, version, runs_tagged)


# -- an event without index_version -----------------------------------------------------


def test_index_event_without_index_version_is_refused():
    from oloproof._exceptions import ConfigError
    from oloproof.events import index_updated

    for empty in ("", "   ", None):
        with pytest.raises(ConfigError) as caught:
            index_updated(empty)  # type: ignore[arg-type]
        assert caught.value.field == "index_version"
        assert "index_version" in str(caught.value)


def test_index_updated_command_without_index_version(project_copy, machine, olo, err_lines):
    ran = olo("index-updated", "--index-version", "", "--project", project_copy(), env=machine(), timeout=120)
    assert ran.returncode == 2, ran.stderr
    lines = err_lines(ran)
    assert len(lines) == 1 and "index_version" in lines[0], ran.stderr[-2000:]


_FLOW_WITHOUT_VERSION = """
import json, sys
from oloproof._exceptions import ConfigError
from oloproof.flows._index import evaluate_on_index_update
try:
    evaluate_on_index_update(project=sys.argv[1], index_version="")
except ConfigError as error:
    outcome = {"raised": type(error).__name__, "field": error.field, "message": str(error)}
except BaseException as error:
    outcome = {"raised": type(error).__name__, "field": None, "message": str(error)}
else:
    outcome = {"raised": None}
print("OUTCOME " + json.dumps(outcome))
"""


def test_index_flow_without_index_version_raises_config_error(project_copy, machine, server_api):
    project = project_copy()
    ran = subprocess.run([sys.executable, "-c", _FLOW_WITHOUT_VERSION, str(project)], env=machine(),
                         check=False, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    outcome = json.loads(next(l for l in ran.stdout.splitlines() if l.startswith("OUTCOME "))[8:])
    assert outcome["raised"] == "ConfigError", outcome
    assert outcome["field"] == "index_version" and "index_version" in outcome["message"]
    assert not (project / ".oloproof").exists(), "the refused event still evaluated the project"
    refused = server_api("/flow_runs/filter", {
        "flows": {"name": {"any_": ["oloproof-index-updated"]}},
        "flow_runs": {"name": {"any_": ["index  updated"]}},
    }) or []  # fmt: skip
    assert refused and all(r["state_type"] == "FAILED" for r in refused), [r["state_type"] for r in refused]


# -- a run that cannot write its records ------------------------------------------------


def _run_blocked_by_a_file(project_copy, machine, olo):
    """A local store whose ``runs`` is a file: stage records can be written, run records cannot.

    (A read-only directory would not stop root, which runs CI's containers.)
    """
    project = project_copy()
    results = project / ".oloproof" / "results"
    results.mkdir(parents=True)
    (results / "runs").write_text("not a directory\n")
    version = _unique_version()
    ran = olo("run", project, "--set", f"system.version={version}", env=machine(), timeout=180)
    return project, results, version, ran


def test_a_run_that_cannot_write_its_records_fails_loudly_and_stays_invisible(
    project_copy, machine, olo, runs_tagged, err_lines
):
    project, results, version, ran = _run_blocked_by_a_file(project_copy, machine, olo)
    assert ran.returncode == 2, (ran.returncode, ran.stderr[-3000:])
    lines = err_lines(ran)
    assert len(lines) == 1, f"{len(lines)} stderr lines:\n" + "\n".join(lines[:15])
    assert lines[0].startswith("oloproof: error:") and str(results / "runs") in lines[0], lines[0]
    assert "Run run_" not in ran.stdout and "Cache:" not in ran.stdout
    assert list((results / "cache").rglob("*.json")), "the stage records were not written before the failure"
    assert not list(results.rglob("run.json"))
    tagged = runs_tagged(f"version:{version}", flow="oloproof-run")
    assert [r["state_type"] for r in tagged] == ["FAILED"], [(r["name"], r["state_type"]) for r in tagged]
    _assert_no_complete_run(project, version, runs_tagged)


_MANIFEST_WRITE_FAILS = """
import errno, os, sys
import oloproof.store._objects as store_module

original = store_module._atomic_local_write

def failing(full, data, **options):
    if os.path.basename(full) == "run.json":
        raise OSError(errno.ENOSPC, "No space left on device", full)
    return original(full, data, **options)

store_module._atomic_local_write = failing
from oloproof._cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_run_whose_manifest_cannot_be_written_is_invisible(project_copy, machine, olo, err_lines):
    project = project_copy()
    env = machine()
    ran = subprocess.run([sys.executable, "-c", _MANIFEST_WRITE_FAILS, "run", str(project)], env=env,
                         check=False, capture_output=True, text=True, timeout=180)  # fmt: skip
    assert ran.returncode == 2, (ran.returncode, ran.stderr[-3000:])
    last = err_lines(ran)[-1]
    assert last.startswith("oloproof: error:") and "run.json" in last and "No space left" in last, last
    results = project / ".oloproof" / "results"
    (run_dir,) = (results / "runs").iterdir()
    assert (run_dir / "cases.parquet").is_file() and (run_dir / "metrics.parquet").is_file()
    assert not (run_dir / "run.json").exists()
    listed = olo("runs", "--project", project, "--json", env=env)
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stdout + listed.stderr
    counted = olo("query", "SELECT count(*) AS n FROM cases", "--project", project, "--json", env=env)
    assert counted.returncode == 0 and json.loads(counted.stdout) == [{"n": 0}], counted.stdout + counted.stderr


# -- announcing an index with no server to hear it ---------------------------------------


def test_index_updated_without_a_server_is_an_error(project_copy, machine, olo, err_lines):
    env = machine(server=False)
    ran = olo("index-updated", "--index-version", "kb-2026-10-01", "--project", project_copy(), env=env,
              timeout=120)  # fmt: skip
    assert ran.returncode == 2, (ran.returncode, ran.stdout, ran.stderr[-2000:])
    lines = err_lines(ran)
    assert len(lines) == 1 and "PREFECT_API_URL" in lines[0], ran.stderr[-2000:]


def test_index_updated_to_a_server_that_is_down_is_an_error(project_copy, machine, olo):
    env = machine(PREFECT_API_URL=f"{_closed_endpoint()}/api")
    ran = olo("index-updated", "--index-version", "kb-2026-10-01", "--project", project_copy(), env=env,
              timeout=120)  # fmt: skip
    assert ran.returncode != 0, (ran.returncode, ran.stdout, ran.stderr[-2000:])
    assert "Emitted" not in ran.stdout
