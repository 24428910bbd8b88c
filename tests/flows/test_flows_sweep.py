"""The sweep flow deployments run: its parameters, and the deployment prefect.yaml declares."""

from __future__ import annotations

from pathlib import Path

import pytest
from projects import copy_project

from oloproof.flows import sweep

REPO = Path(__file__).resolve().parents[2]


def test_prefect_yaml_declares_a_scheduled_sweep():
    from oloproof._serve import build_deployments

    (deployment,) = [d for d in build_deployments(REPO / "prefect.yaml") if d.flow_name == "oloproof-sweep"]
    assert deployment.name == "sweep-weekly"
    assert deployment.parameters["objective"] == "answer_correct"
    assert deployment.parameters["grids"] == ["system.rag.top_k=1,2,3,4,6", "system.rag.token_budget=40,80,120"]
    assert [schedule.schedule.cron for schedule in deployment.schedules] == ["0 3 * * 0"]


@pytest.mark.slow
def test_the_flow_sweeps_a_project_and_answers_again_from_the_store(prefect_api, tmp_path):
    project = copy_project(REPO / "examples" / "support_rag", tmp_path / "support_rag")
    first = sweep(project=str(project), grids=["system.rag.top_k=1,2"], objective="answer_correct")
    assert [entry["label"] for entry in first["settings"]] == ["baseline", "top_k=1", "top_k=2"]
    assert first["compared"] == 2 and first["winner"] is None
    again = sweep(project=str(project), grids=["system.rag.top_k=1,2"], objective="answer_correct")
    assert [entry["run_id"] for entry in again["settings"]] == [entry["run_id"] for entry in first["settings"]]
