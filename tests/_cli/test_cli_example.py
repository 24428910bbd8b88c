"""The example reproduces the product page's figures, and the cache lines across runs."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def _table_row(out: str, criterion: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(f"│ {criterion} "))


def test_example_reproduces_the_page(run_cli, shipped_example):
    code, out, err = run_cli("run", str(shipped_example))
    assert code == 0, err
    assert out.splitlines()[0].startswith("Run run_")
    assert _table_row(out, "answer_correct") == (
        "│ answer_correct  │ 69.2%    │ [38.5%, 91.0%]  │ 9 / 13 observed · 0 missing · 0 excluded     │"
    )
    assert _table_row(out, "citations_valid") == (
        "│ citations_valid │ 100.0%   │ [75.2%, 100.0%] │ 13 / 13 observed · 0 missing · 0 excluded    │"
    )
    ndcg = _table_row(out, "ndcg_at_6")
    assert "│ 0.866    │" in ndcg and "mean of 13 observed · 0 missing · 0 excluded │" in ndcg
    for criterion in ("hit_rate_at_2", "recall_at_2"):
        row = _table_row(out, criterion)
        assert "92.3%" in row and "[63.9%," in row and "12 / 13 observed" in row
    assert "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss" in out
    assert "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss" in out

    # A larger token budget reuses every retrieval and regenerates only changed contexts.
    code, out, err = run_cli("run", str(shipped_example), "--set", "system.rag.token_budget=120")
    assert code == 0, err
    assert "Stages: retrieve 13 hit/0 miss; generate 7 hit/6 miss" in out
    # Judgments are keyed on what they read: only citation_validity sees a changed context.
    assert "Cache: execution 0 hit/13 miss; judgment 59 hit/6 miss" in out


def test_plain_rerun_is_all_execution_hits(run_cli, example_project):
    assert run_cli("run", str(example_project))[0] == 0
    code, out, _ = run_cli("run", str(example_project))
    assert code == 0
    assert "Cache: execution 13 hit/0 miss; judgment 65 hit/0 miss" in out
    assert "Stages: none ran: all 13 cases were served from the execution cache" in out
    # --json keeps the counts themselves.
    code, out, _ = run_cli("run", str(example_project), "--json")
    assert code == 0
    assert json.loads(out)["cache"] == {
        "execution": {"hit": 13, "miss": 0}, "judgment": {"hit": 65, "miss": 0},
        "retrieve": {"hit": 0, "miss": 0}, "generate": {"hit": 0, "miss": 0},
    }


def test_runs_show_and_query_read_the_store(run_cli, example_project):
    code, out, _ = run_cli("run", str(example_project), "--json")
    assert code == 0
    run_id = json.loads(out)["run_id"]
    code, out, _ = run_cli("runs", "--project", str(example_project), "--json")
    assert [row["run_id"] for row in json.loads(out)] == [run_id]
    code, out, _ = run_cli("show", run_id, "--project", str(example_project))
    assert code == 0 and "│ answer_correct  │ 69.2%" in out
    code, out, _ = run_cli(
        "query",
        "SELECT successes, observed FROM metrics WHERE run_id = $1 AND criterion = $2 AND slice IS NULL",
        "--param", run_id, "--param", "answer_correct",
        "--project", str(example_project), "--json",
    )
    assert code == 0
    assert json.loads(out) == [{"successes": 9, "observed": 13}]
    code, out, _ = run_cli(
        "query", "SELECT case_id FROM cases WHERE relevant_position = 'none'",
        "--project", str(example_project),
    )
    assert out.split() == ["case_id", "money_back"]


def test_the_artifacts_inspect_commands_run_as_written_from_anywhere(run_cli, example_project, tmp_path, monkeypatch):
    import re

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from readme_blocks import commands

    code, out, err = run_cli("run", str(example_project), "--json")
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    key = "oloproof-" + run_id.lower().replace("_", "-")
    with get_client(sync_client=True) as client:
        (artifact,) = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])))
    (inspect_line,) = [line for line in artifact.data.splitlines() if line.startswith("Inspect: ")]
    hinted = re.findall(r"`(oloproof [^`]+)`", inspect_line)
    assert len(hinted) == 2 and all(f"--project {example_project}" in hint for hint in hinted)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # a reader of the UI runs them from wherever they are
    for hint in hinted:
        (argv,) = commands(hint)
        code, out, err = run_cli(*argv)
        assert code == 0, f"{hint}: {err}"
        assert run_id in out or "answer_correct" in out
