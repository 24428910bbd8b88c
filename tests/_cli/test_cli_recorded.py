"""Recorded data, the catalogue's way: its example rows and its ``testing_criteria``
run unchanged (no system, no ``oloproof.yaml``) against a local OpenAI-compatible
server, and ``oloproof results`` prints the catalogue's result shape.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from providers_wire import Script, chat_json, serve

pytestmark = pytest.mark.slow

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "rag-evaluators.md"

ROWS = [
    {"query": "What are the store hours?", "context": "Our store is open Monday-Friday 9am-6pm and Saturday 10am-4pm.",
     "response": "The store is open weekdays from 9am to 6pm and Saturdays from 10am to 4pm."},
    {"query": "What is the return policy?", "context": "Items can be returned within 30 days with original receipt for full refund.",
     "response": "You can return items within 30 days if you have your receipt."},
]  # fmt: skip
"""The catalogue's example rows, verbatim."""

CRITERIA = [
    {"type": "azure_ai_evaluator", "name": "groundedness", "evaluator_name": "builtin.groundedness",
     "initialization_parameters": {"deployment_name": "gpt-4o"},
     "data_mapping": {"context": "{{item.context}}", "response": "{{item.response}}"}},
    {"type": "azure_ai_evaluator", "name": "relevance", "evaluator_name": "builtin.relevance",
     "initialization_parameters": {"deployment_name": "gpt-4o"},
     "data_mapping": {"query": "{{item.query}}", "response": "{{item.response}}"}},
    {"type": "azure_ai_evaluator", "name": "retrieval", "evaluator_name": "builtin.retrieval",
     "initialization_parameters": {"deployment_name": "gpt-4o"},
     "data_mapping": {"query": "{{item.query}}", "context": "{{item.context}}"}},
]  # fmt: skip
"""The catalogue's ``testing_criteria`` example, with ``model_deployment = "gpt-4o"``."""

SCORES = {"groundedness": 5, "relevance": 4, "retrieval": 2}


def _grade(seen):
    name = seen.body["response_format"]["json_schema"]["name"].removesuffix("_verdict")
    score = SCORES[name]
    return chat_json({"score": score, "reason": f"scripted {name} {score}"})


@pytest.fixture
def folder(tmp_path, monkeypatch, server):
    script = serve(server, "/v1/chat/completions", Script(_grade))
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    (tmp_path / "testing_criteria.json").write_text(json.dumps(CRITERIA, indent=4), encoding="utf-8")
    for name in ("OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "ANTHROPIC_API_KEY", "OLOPROOF_RESULTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url_for("/v1"))
    monkeypatch.chdir(tmp_path)
    return tmp_path, script


def test_the_fixture_rows_are_the_catalogues():
    if not SPEC.is_file():
        pytest.skip("the spec is not beside this checkout")
    text = SPEC.read_text(encoding="utf-8")
    for row in ROWS:
        assert json.dumps(row, ensure_ascii=False) in text
    assert '"evaluator_name": "builtin.retrieval"' in text


def test_the_catalogue_example_runs_unchanged_and_prints_its_result_shape(run_cli, folder):
    _tmp_path, script = folder
    code, out, err = run_cli("run", "--criteria", "testing_criteria.json", "--dataset", "rows.jsonl", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert len(script.seen) == 6  # two rows, three judges
    assert {request.body["model"] for request in script.seen} == {"gpt-4o"}
    assert report["case_count"] == 2
    assert report["system"]["kind"] == "recorded"
    overall = {m["criterion"]: m for m in report["metrics"] if m["slice"] is None}
    assert overall["groundedness"]["estimate"] == 1.0 and overall["retrieval"]["estimate"] == 0.0

    code, out, err = run_cli("results", report["run_id"])
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["id"] for line in lines] == ["line-1", "line-2"]
    first = {result["name"]: result for result in lines[0]["results"]}
    assert first["groundedness"] == {
        "type": "azure_ai_evaluator", "name": "groundedness", "metric": "groundedness", "score": 5.0,
        "label": "pass", "reason": "scripted groundedness 5", "threshold": 3.0, "passed": True, "status": "observed",
    }  # fmt: skip
    assert first["retrieval"]["label"] == "fail" and first["retrieval"]["passed"] is False

    # Nothing changed: a second run asks the judge nothing.
    code, out, err = run_cli("run", "--criteria", "testing_criteria.json", "--dataset", "rows.jsonl")
    assert code == 0, err
    assert len(script.seen) == 6
    assert re.search(r"ids: 2 rows without an id are named by their line", out)


DOCUMENT_CRITERIA = [
    {"type": "azure_ai_evaluator", "name": "document_retrieval", "evaluator_name": "builtin.document_retrieval",
     "initialization_parameters": {"ground_truth_label_min": 1, "ground_truth_label_max": 5},
     "data_mapping": {"retrieval_ground_truth": "{{item.retrieval_ground_truth}}",
                      "retrieved_documents": "{{item.retrieved_documents}}"}},
]  # fmt: skip
"""The catalogue's ``document_retrieval`` criterion, verbatim."""

DOCUMENT_ROW = {
    "id": "q1",
    "retrieval_ground_truth": [{"document_id": "1", "query_relevance_label": 4},
                               {"document_id": "2", "query_relevance_label": 2}],
    "retrieved_documents": [{"document_id": "2", "relevance_score": 45.1},
                            {"document_id": "6", "relevance_score": 35.8}],
}  # fmt: skip
"""The catalogue's two example lists as one row."""


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_document_retrieval_from_the_catalogue_needs_no_provider(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "rows.jsonl", [DOCUMENT_ROW, {**DOCUMENT_ROW, "id": "q2", "retrieved_documents": []}])
    (tmp_path / "criteria.yaml").write_text(json.dumps(DOCUMENT_CRITERIA), encoding="utf-8")
    code, out, err = run_cli("run", "--criteria", "criteria.yaml", "--dataset", "rows.jsonl", "--json")
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    code, out, err = run_cli("results", run_id)
    assert code == 0, err
    first = json.loads(out.splitlines()[0])
    assert first["id"] == "q1"
    metrics = {r["metric"]: r for r in first["results"]}
    assert set(metrics) == {"ndcg@3", "xdcg@3", "fidelity", "top1_relevance", "top3_max_relevance", "holes",
                            "holes_ratio", "total_retrieved_documents", "total_ground_truth_documents"}
    assert {r["type"] for r in first["results"]} == {"azure_ai_evaluator"}
    assert metrics["holes"]["score"] == 1.0 and metrics["holes"]["passed"] is False  # lower is better, threshold 0
    assert metrics["top1_relevance"]["score"] == 2.0


def test_two_recorded_logs_compare_by_row_id_and_diagnose_refuses(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "criteria.json").write_text(json.dumps(DOCUMENT_CRITERIA), encoding="utf-8")
    rows = [{**DOCUMENT_ROW, "id": f"q{i}"} for i in range(6)]
    better = [{**row, "retrieved_documents": [{"document_id": "1", "relevance_score": 9.0}]} for row in rows]
    ran = {}
    for name, data in (("v1", rows), ("v2", better)):
        _write(tmp_path / f"{name}.jsonl", data)
        code, out, err = run_cli("run", "--criteria", "criteria.json", "--dataset", f"{name}.jsonl", "--json")
        assert code == 0, err
        ran[name] = json.loads(out)["run_id"]
    code, out, err = run_cli("compare", ran["v2"], ran["v1"], "--json")
    assert code == 0, err
    compared = json.loads(out)
    ndcg = next(m for m in compared["metrics"] if m["criterion"] == "document_retrieval.ndcg@3")
    assert ndcg["paired"] == 6
    code, out, err = run_cli("diagnose", ran["v1"], "--intervention", "gold-context",
                             "--criterion", "document_retrieval.ndcg@3")  # fmt: skip
    assert code == 2
    assert "recorded data" in err and "nothing to re-execute" in err and len(err.strip().splitlines()) == 1


def test_a_kernel_judged_rerun_replays_every_judgment_without_a_prefect_batch_record(run_cli, tmp_path, monkeypatch):
    # document_retrieval calls nothing: its batches are judged again from the per-judgment
    # records (every row a hit, the same values), and Prefect records no batch of them.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "criteria.json").write_text(json.dumps(DOCUMENT_CRITERIA), encoding="utf-8")
    shown = [[{"document_id": str(i + 1), "relevance_score": 9.0}] for i in range(5)]  # five distinct judgments
    _write(tmp_path / "rows.jsonl", [{**DOCUMENT_ROW, "id": f"q{i}", "retrieved_documents": s} for i, s in enumerate(shown)])
    runs = []
    for _ in range(2):
        code, out, err = run_cli("run", "--criteria", "criteria.json", "--dataset", "rows.jsonl", "--results", "store",
                                 "--json")  # fmt: skip
        assert code == 0, err
        runs.append(json.loads(out)["run_id"])
    import duckdb

    def judged(run_id: str) -> list[tuple]:
        path = tmp_path / "store" / "runs" / run_id / "judgments.parquet"
        return duckdb.sql(f"SELECT case_id, criterion, value, judgment_key, hit FROM '{path}' "
                          "ORDER BY case_id, criterion").fetchall()  # fmt: skip

    cold, warm = judged(runs[0]), judged(runs[1])
    assert len(cold) == 5 * 9 and not any(row[4] for row in cold)
    assert all(row[4] for row in warm)
    assert [row[:4] for row in warm] == [row[:4] for row in cold]
    prefect = tmp_path / "store" / "prefect"
    assert not list(prefect.glob("oloproof-judge-*")) if prefect.exists() else True
