"""``oloproof serve`` against a REAL Prefect server, with the project's results in S3.

One serve process for the module: the index event triggers a real deployment run,
the nightly schedule is registered as prefect.yaml declares it, and SIGTERM pauses
the trigger's automation. The SIGTERM test stops the serve process, so it comes last.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from projects import copy_project

pytestmark = [pytest.mark.services, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
PREFECT_YAML = REPO / "prefect.yaml"
INDEX_VERSION = "kb-2026-10-01"


def _declared(name: str) -> dict[str, Any]:
    spec = yaml.safe_load(PREFECT_YAML.read_text(encoding="utf-8"))
    return next(d for d in spec["deployments"] if d["name"] == name)


def _log_tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no serve log)"


@pytest.fixture(scope="module")
def served(tmp_path_factory, prefect_server, moto_server):
    """``oloproof serve --project <copy>`` running against the real server; the copy's results in S3."""
    import os
    import uuid

    import s3fs

    root = tmp_path_factory.mktemp("served")
    project = root / "support_rag"
    copy_project(REPO / "examples" / "support_rag", project)
    bucket = f"oloproof-serve-{uuid.uuid4().hex[:10]}"
    key, secret = "AKIAE2ESERVE0000001", "e2e-serve-secret/NeverStored"
    fs = s3fs.S3FileSystem(endpoint_url=moto_server, key=key, secret=secret,
                           skip_instance_cache=True, use_listings_cache=False)  # fmt: skip
    fs.mkdir(bucket)
    config_file = project / "oloproof.yaml"
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    config["results"] = f"s3://{bucket}/oloproof"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "AWS_", "OLOPROOF_"))}
    env.update(
        PREFECT_HOME=str(tmp_path_factory.mktemp("serve-prefect-home")), PREFECT_API_URL=prefect_server,
        PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1", AWS_ACCESS_KEY_ID=key,
        AWS_SECRET_ACCESS_KEY=secret, AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL=moto_server,
    )  # fmt: skip
    log = root / "serve.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "oloproof._cli.main", "serve", "--project", str(project),
             "--prefect-yaml", str(PREFECT_YAML)],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=str(root), start_new_session=True,
        )  # fmt: skip
    state = {"process": process, "project": project, "bucket": bucket, "fs": fs, "env": env, "log": log}
    try:
        yield state
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        try:
            os.killpg(process.pid, signal.SIGKILL)  # flow-run subprocesses it may have left
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture(scope="module")
def registered(served, server_api, poll):
    """The served deployments, once all four and the trigger's automation exist on the server."""
    process, log = served["process"], served["log"]
    names = [f"{flow}/{name}" for flow, name in (
        ("oloproof-run", "nightly"), ("oloproof-index-updated", "on-index-rebuild"),
        ("oloproof-diagnose", "diagnose"), ("oloproof-compare", "compare"))]  # fmt: skip

    def ready():
        if process.poll() is not None:
            pytest.fail(f"oloproof serve exited with {process.returncode}:\n{_log_tail(log)}")
        found = {name: server_api(f"/deployments/name/{name}") for name in names}
        if not all(found.values()):
            return None
        rebuild = found["oloproof-index-updated/on-index-rebuild"]["id"]
        if not _automations_for(server_api, rebuild):
            return None
        return found

    return poll(ready, 90, "oloproof serve to register its deployments and trigger", 1.0,
                lambda: _log_tail(log))  # fmt: skip


def _automations_for(server_api, deployment_id: str) -> list[dict[str, Any]]:
    automations = server_api("/automations/filter", {}) or []
    return [
        a for a in automations
        if any(action.get("deployment_id") == deployment_id for action in a.get("actions") or [])
    ]  # fmt: skip


def test_index_event_runs_the_served_deployment(served, registered, server_api, olo, machine, poll,
                                                runs_tagged):  # fmt: skip
    project, fs, bucket, log = served["project"], served["fs"], served["bucket"], served["log"]
    rebuild_id = registered["oloproof-index-updated/on-index-rebuild"]["id"]

    emitted = olo("index-updated", "--index-version", INDEX_VERSION, "--project", project, env=machine())
    assert emitted.returncode == 0, emitted.stderr
    assert f"index_version {INDEX_VERSION}" in emitted.stdout

    def triggered_run():
        runs = server_api("/flow_runs/filter", {"flow_runs": {"deployment_id": {"any_": [rebuild_id]}}}) or []
        for run in runs:
            if run["state_type"] in ("FAILED", "CRASHED", "CANCELLED"):
                pytest.fail(f"the triggered run ended {run['state_type']}: {run['state']}\n{_log_tail(log)}")
        done = [run for run in runs if run["state_type"] == "COMPLETED"]
        return done[0] if done else None

    parent = poll(triggered_run, 120, "the on-index-rebuild deployment run to complete", 2.0,
                  lambda: _log_tail(log))  # fmt: skip
    assert parent["parameters"]["index_version"] == INDEX_VERSION
    assert parent["parameters"]["project"] == str(Path(project).resolve())
    assert parent["name"] == f"index {INDEX_VERSION} updated"

    children = [r for r in runs_tagged(f"index_version:{INDEX_VERSION}", flow="oloproof-run")
                if r["state_type"] == "COMPLETED"]  # fmt: skip
    assert children, "no completed oloproof-run flow run tagged with the new index_version"
    assert re.fullmatch(r"run support-rag slice-b-example · 13 cases · config [0-9a-f]{8}", children[0]["name"])
    # The deployment's run was named before its first log line: no line names it otherwise.
    logs = server_api("/logs/filter", {"logs": {"flow_run_id": {"any_": [children[0]["id"]]}},
                                       "sort": "TIMESTAMP_ASC", "limit": 200}) or []  # fmt: skip
    assert any(log["message"].startswith(f"Beginning subflow run {children[0]['name']!r}") for log in logs), logs[:3]
    assert not [log["message"] for log in logs if "'run " in log["message"] and children[0]["name"] not in log["message"]]
    # The worker's flow-run process keeps Prefect's per-task-run state lines out of them too.
    assert not [log for log in logs if log["task_run_id"] and log["message"].startswith("Finished in state")]

    # Its records landed in S3, at exactly the announced index_version, every retrieval a miss.
    queried = olo("query", "SELECT run_id, index_version FROM runs", "--project", project, "--json",
                  env=served["env"])  # fmt: skip
    assert queried.returncode == 0, queried.stderr
    rows = json.loads(queried.stdout)
    assert [row["index_version"] for row in rows] == [INDEX_VERSION]
    manifest = json.loads(fs.cat(f"{bucket}/oloproof/runs/{rows[0]['run_id']}/run.json"))
    assert manifest["index_version"] == INDEX_VERSION
    assert manifest["cache"]["retrieve"] == {"hit": 0, "miss": 13}
    assert manifest["project"] == str(Path(project).resolve())

    # The run's page links its HTML report, written to S3 beside it, and a deployment's run
    # shows the criterion's trend across the store's runs.
    run_id = rows[0]["run_id"]
    assert "Failure funnel" in fs.cat(f"{bucket}/oloproof/runs/{run_id}/report.html").decode()
    artifacts = server_api("/artifacts/filter", {"artifacts": {"flow_run_id": {"any_": [children[0]["id"]]}},
                                                 "limit": 50}) or []  # fmt: skip
    by_key = {a["key"]: a for a in artifacts}
    suffix = run_id.lower().replace("_", "-")
    assert f"s3://{bucket}/oloproof/runs/{run_id}/report.html" in by_key[f"oloproof-run-report-{suffix}"]["data"]
    assert by_key[f"oloproof-trend-{suffix}"]["type"] == "table"
    assert INDEX_VERSION in by_key[f"oloproof-trend-{suffix}"]["data"]


def test_nightly_schedule_is_registered_as_declared(registered, server_api):
    declared = _declared("nightly")
    deployment = server_api("/deployments/name/oloproof-run/nightly")
    assert deployment is not None
    schedules = [s["schedule"] for s in deployment["schedules"]]
    assert [(s.get("cron"), s.get("timezone")) for s in schedules] == [
        (item["cron"], item["timezone"]) for item in declared["schedules"]
    ]
    assert all(s["active"] for s in deployment["schedules"])
    assert set(declared["tags"]) <= set(deployment["tags"])
    assert deployment["description"] == declared["description"]

    # The on-index-rebuild trigger is registered as declared too.
    trigger = _declared("on-index-rebuild")["triggers"][0]
    rebuild = server_api("/deployments/name/oloproof-index-updated/on-index-rebuild")
    (automation,) = _automations_for(server_api, rebuild["id"])
    assert automation["trigger"]["match"] == trigger["match"]
    assert automation["trigger"]["expect"] == trigger["expect"]
    (action,) = automation["actions"]
    assert action["type"] == "run-deployment" and action["parameters"] == trigger["parameters"]


def test_sigterm_stops_serve_and_pauses_the_trigger(served, registered, server_api):
    process = served["process"]
    rebuild_id = registered["oloproof-index-updated/on-index-rebuild"]["id"]
    assert [a["enabled"] for a in _automations_for(server_api, rebuild_id)] == [True]
    process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=300)
    assert code == 0, _log_tail(served["log"])
    automations = _automations_for(server_api, rebuild_id)
    assert automations and [a["enabled"] for a in automations] == [False]
    # Nor does the nightly schedule keep queueing runs that nothing will execute.
    nightly = server_api("/deployments/name/oloproof-run/nightly")
    assert nightly["paused"] is True
    scheduled = server_api("/flow_runs/filter", {"flow_runs": {
        "deployment_id": {"any_": [nightly["id"]]}, "state": {"type": {"any_": ["SCHEDULED"]}}}}) or []
    assert scheduled == [], [r["name"] for r in scheduled]
