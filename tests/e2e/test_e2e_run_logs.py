"""A run's flow run as a REAL Prefect server holds it: its name, its tags and its logs.

Three runs of a copy of the example (one task run per case and stage, as shipped)
against the session's server: one where a case fails, one with a ``--set``
override, and one whose retriever breaks its contract and fails the run. Each flow
run is read back from the API: named from its first log line on, tagged with its run
id and a hash of its settings, its logs the run's own lines (the stages, the counts,
the failing case's error, the failed run's traceback) without one state line per
task run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from processes import clean_env
from projects import copy_project

from oloproof.flows._orphans import project_tag

pytestmark = [pytest.mark.services, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
NAME = re.compile(r"run support-rag slice-b-example · 13 cases · config (?P<config>[0-9a-f]{8})")

APPS = '''

class FailsOnMoneyBack(SupportRag):
    """Raises on one case."""

    def generate(self, input, context):
        if input["question"] == "Can I get my money back?":
            raise RuntimeError("model endpoint timed out")
        return super().generate(input, context)


class BreaksItsContract(SupportRag):
    """Returns something that is not a Retrieval."""

    def retrieve(self, input, depth):
        return "not a retrieval"
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the example whose system fails on one case."""
    target = copy_project(REPO / "examples" / "support_rag", tmp_path_factory.mktemp("logs") / "support_rag",
                          batched=False)  # fmt: skip
    (target / "logs_app.py").write_text((target / "app.py").read_text() + APPS)
    config = target / "oloproof.yaml"
    config.write_text(config.read_text().replace("object: app:SupportRag", "object: logs_app:FailsOnMoneyBack"))
    return target


@pytest.fixture(scope="module")
def run(project, prefect_server, tmp_path_factory):
    """``run(*args)``: ``oloproof run <project> *args`` against the real server."""
    env = clean_env()
    env.update(PREFECT_HOME=str(tmp_path_factory.mktemp("logs-prefect-home")), PREFECT_API_URL=prefect_server,
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")  # fmt: skip

    def invoke(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "oloproof._cli.main", "run", str(project), *args],
                              env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip

    return invoke


def _flow_run(server_api, run_id: str) -> dict[str, Any]:
    found = server_api("/flow_runs/filter", {"flow_runs": {"tags": {"all_": [f"run:{run_id}"]}}, "limit": 10}) or []
    assert len(found) == 1, f"{len(found)} flow runs tagged run:{run_id}"
    return found[0]


def _logs(server_api, poll, flow_run: dict[str, Any]) -> list[dict[str, Any]]:
    """The flow run's logs, once its last line (the flow run's final state) is in."""

    def read() -> list[dict[str, Any]] | None:
        logs = server_api("/logs/filter", {"logs": {"flow_run_id": {"any_": [flow_run["id"]]}},
                                           "sort": "TIMESTAMP_ASC", "limit": 200}) or []  # fmt: skip
        finished = [log for log in logs if log["task_run_id"] is None and log["message"].startswith("Finished in state")]
        return logs if finished else None

    return poll(read, 120, f"the logs of flow run {flow_run['name']!r}", 0.5)


@pytest.fixture(scope="module")
def recorded(run, server_api, poll) -> dict[str, Any]:
    """The run with a failing case and the one with an override: their reports, flow runs and logs."""
    runs = {}
    for label, args in (("failing case", ()), ("override", ("--set", "system.rag.top_k=1"))):
        ran = run("--json", *args)
        assert ran.returncode == 0, ran.stderr
        report = json.loads(ran.stdout)
        flow_run = _flow_run(server_api, report["run_id"])
        runs[label] = {"report": report, "flow_run": flow_run, "logs": _logs(server_api, poll, flow_run)}
    return runs


def test_flow_runs_are_named_and_tagged_with_their_run_id_and_settings(recorded):
    configs = []
    for label, seen in recorded.items():
        report, flow_run = seen["report"], seen["flow_run"]
        named = NAME.fullmatch(flow_run["name"])
        assert named, (label, flow_run["name"])
        assert flow_run["state_type"] == "COMPLETED"
        assert {"oloproof", f"run:{report['run_id']}", "system:support-rag", "version:slice-b-example",
                "index_version:kb-2026-09-16", f"config:{named['config']}"} <= set(flow_run["tags"])  # fmt: skip
        configs.append(named["config"])
    # Runs that differ only by a --set override are told apart by name and tags.
    assert len(set(configs)) == 2


def test_the_logs_open_with_the_runs_name(recorded, project):
    for seen in recorded.values():
        name, messages = seen["flow_run"]["name"], [log["message"] for log in seen["logs"]]
        assert messages[0] == f"Beginning flow run {name!r} for flow 'oloproof-run'"
        assert not [m for m in messages if f"run {project}" in m or "'run " in m and name not in m]


def test_the_logs_hold_the_stages_counts_and_the_failing_cases_error(recorded):
    seen = recorded["failing case"]
    run_id, messages = seen["report"]["run_id"], [log["message"] for log in seen["logs"]]
    assert messages[1] == (f"Run {run_id}: 13 cases of support-rag slice-b-example "
                           f"(config {NAME.fullmatch(seen['flow_run']['name'])['config']}); "
                           "stages: retrieve, assemble, generate, judge")  # fmt: skip
    [failure] = [log for log in seen["logs"] if log["message"].startswith("generate money_back: missing: ")]
    assert failure["level"] == 30 and failure["task_run_id"] is not None
    assert "RuntimeError: model endpoint timed out (at " in failure["message"]
    assert "logs_app.py:" in failure["message"]
    [report] = [m for m in messages if m.startswith(f"Run {run_id}\n")]
    assert "│ answer_correct  │ 75.0%    │" in report
    assert "\nCache: execution 0 hit/13 miss; judgment 0 hit/60 miss\n" in report
    assert report.endswith("\nStages: retrieve 0 hit/13 miss; generate 0 hit/13 miss")
    assert messages[-1] == "Finished in state Completed()"


def test_the_logs_hold_no_state_line_per_task_run(recorded):
    for seen in recorded.values():
        task_lines = [log["message"] for log in seen["logs"] if log["task_run_id"] is not None]
        assert not [m for m in task_lines if m.startswith("Finished in state")], task_lines[:5]
    # The failing case's run: its name, its report, its failing case and its final state.
    assert len(recorded["failing case"]["logs"]) == 5, [log["message"][:80] for log in recorded["failing case"]["logs"]]
    # A run served partly from the execution cache says so.
    report = next(log["message"] for log in recorded["override"]["logs"] if log["message"].startswith("Run run_")
                  and "\n" in log["message"])  # fmt: skip
    assert "Stages: retrieve 13 hit/0 miss; generate " in report


def test_a_failed_runs_traceback_reaches_its_logs(run, project, server_api, poll, recorded):
    # A new index_version: retrievals cached by the runs before are not this retriever's.
    ran = run("--set", "system.rag.object=logs_app:BreaksItsContract", "--set", "system.rag.index_version=kb-new")
    assert ran.returncode != 0
    assert "expected Retrieval" in ran.stderr
    failed = server_api("/flow_runs/filter", {
        "flow_runs": {"tags": {"all_": [project_tag(str(project.resolve()))]}, "state": {"type": {"any_": ["FAILED"]}}},
        "limit": 10}) or []  # fmt: skip
    assert len(failed) == 1, [r["name"] for r in failed]
    (flow_run,) = failed
    assert NAME.fullmatch(flow_run["name"]), flow_run["name"]
    logs = _logs(server_api, poll, flow_run)
    errors = [log for log in logs if log["level"] >= 40]
    flow_errors = [log["message"] for log in errors if log["task_run_id"] is None]
    assert any(m.startswith("Encountered exception during execution") and "Traceback" in m
               and "SystemContractError" in m and "expected Retrieval" in m for m in flow_errors), flow_errors
    # The failing batches' own errors are kept too, not the state line of every task run
    # downstream of them, nor the tracebacks of the batches their error stopped.
    task_lines = [log["message"] for log in logs if log["task_run_id"] is not None]
    assert task_lines and all(m.startswith("Task run failed with exception: SystemContractError(") for m in task_lines)
