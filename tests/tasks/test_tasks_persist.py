"""A run's table rows, built as typed records: the values each table has always held."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from oloproof.dataset import Case
from oloproof.records import CaseRow, JudgmentRow, MetricRow, RetrievalRow
from oloproof.report._facts import case_facts
from oloproof.report._summary import summarize_metrics
from oloproof.stages._assemble import assemble_context
from oloproof.store import CASES, JUDGMENTS, METRICS, RETRIEVALS, ResultsStore
from oloproof.tasks import CaseResult
from oloproof.tasks._persist import case_rows, metric_rows, retrieval_rows

CASE = Case(
    id="c1",
    input={"question": "How long do refunds take?"},
    expected={"answer": "14 days", "relevant": [{"doc_id": "kb-2", "grade": 2}]},
    metadata={"topic": "billing"},
)
CANDIDATES = [
    {"doc_id": "kb-1", "chunk_id": None, "score": 0.9, "text": "Plans renew yearly."},
    {"doc_id": "kb-2", "chunk_id": "c3", "score": 0.7, "text": "Refunds take 14 days."},
    {"doc_id": "kb-3", "chunk_id": None, "score": 0.1, "text": "Contact support."},
]


def _ok_result() -> CaseResult:
    context, dropped = assemble_context(CANDIDATES, top_k=2, token_budget=None, token_counts=None)
    return CaseResult(
        case_id="c1", status="ok", error_stage=None, error=None,
        execution_key="sha256:e", execution_hit=False, retrieve_hit=True, generate_hit=False,
        retrieve_ran=True, generate_ran=True, retrieve_ms=2.5, generate_ms=40.0,
        retrieval_key="sha256:r", assembly_key="sha256:a", generation_key="sha256:g",
        query="refund duration", candidates=CANDIDATES, context=context, dropped=dropped,
        output="Refunds take 14 days.",
    )  # fmt: skip


def _missing_result() -> CaseResult:
    return CaseResult(
        case_id="c2", status="missing", error_stage="retrieve", error="TimeoutError: slow",
        execution_key="sha256:e2", execution_hit=False, retrieve_hit=False, generate_hit=False,
        retrieve_ran=True, generate_ran=False, retrieve_ms=5000.0, generate_ms=None,
        retrieval_key="sha256:r2", assembly_key=None, generation_key=None,
    )  # fmt: skip


CASES_BY_ID = {"c1": CASE, "c2": Case(id="c2", input="plain question")}
RESULTS = [_ok_result(), _missing_result()]
FACTS = {(r.case_id, r.repeat): case_facts(CASES_BY_ID[r.case_id], r.candidates if r.ok else None, r.dropped, 2)
         for r in RESULTS}

EXPECTED_CASES = [
    {
        "run_id": "run_1", "case_id": "c1", "status": "ok", "error_stage": None, "error": None,
        "execution_key": "sha256:e", "retrieval_key": "sha256:r", "assembly_key": "sha256:a",
        "generation_key": "sha256:g", "query": "refund duration", "execution_hit": False,
        "retrieve_hit": True, "generate_hit": False, "input": {"question": "How long do refunds take?"},
        "expected": {"answer": "14 days", "relevant": [{"doc_id": "kb-2", "grade": 2.0}]},
        "metadata": {"topic": "billing"}, "output": "Refunds take 14 days.",
        "context": [
            {"doc_id": "kb-1", "chunk_id": None, "position": 1, "tokens": None},
            {"doc_id": "kb-2", "chunk_id": "c3", "position": 2, "tokens": None},
        ],
        "dropped": [{"position": 3, "doc_id": "kb-3", "chunk_id": None, "text": "Contact support.",
                     "reason": "beyond_top_k", "tokens": None}],
        "best_relevant_position": 2, "relevant_position": "2", "context_truncated": False,
        "retrieve_ms": 2.5, "generate_ms": 40.0, "output_items": None, "repeat": 0,
    },
    {
        "run_id": "run_1", "case_id": "c2", "status": "missing", "error_stage": "retrieve",
        "error": "TimeoutError: slow", "execution_key": "sha256:e2", "retrieval_key": "sha256:r2",
        "assembly_key": None, "generation_key": None, "query": None, "execution_hit": False,
        "retrieve_hit": False, "generate_hit": False, "input": "plain question", "expected": {},
        "metadata": {}, "output": None, "context": None, "dropped": None,
        "best_relevant_position": None, "relevant_position": None, "context_truncated": None,
        "retrieve_ms": 5000.0, "generate_ms": None, "output_items": None, "repeat": 0,
    },
]  # fmt: skip

EXPECTED_RETRIEVALS = [
    {"run_id": "run_1", "case_id": "c1", "position": 1, "doc_id": "kb-1", "chunk_id": None, "score": 0.9,
     "text": "Plans renew yearly.", "in_top_k": True, "in_context": True, "drop_reason": None,
     "relevant_grade": None, "repeat": 0},
    {"run_id": "run_1", "case_id": "c1", "position": 2, "doc_id": "kb-2", "chunk_id": "c3", "score": 0.7,
     "text": "Refunds take 14 days.", "in_top_k": True, "in_context": True, "drop_reason": None,
     "relevant_grade": 2.0, "repeat": 0},
    {"run_id": "run_1", "case_id": "c1", "position": 3, "doc_id": "kb-3", "chunk_id": None, "score": 0.1,
     "text": "Contact support.", "in_top_k": False, "in_context": False, "drop_reason": "beyond_top_k",
     "relevant_grade": None, "repeat": 0},
]  # fmt: skip

JUDGMENTS_IN = [
    {"case_id": "c1", "criterion": "answer_correct", "evaluator": "exact_match", "spec_hash": "h",
     "status": "observed", "outcome": "completed", "reason": None, "value": 1.0, "passed": True, "detail": {"matched": "14 days"},
     "judgment_key": "sha256:j", "hit": False},
    {"case_id": "c2", "criterion": "answer_correct", "evaluator": "exact_match", "spec_hash": "h",
     "status": "missing", "outcome": "skipped", "reason": "retrieve_error", "value": None, "passed": None, "detail": {},
     "judgment_key": None, "hit": False},
]  # fmt: skip
JUDGMENT_ROWS = [JudgmentRow(run_id="run_1", **row) for row in JUDGMENTS_IN]


def test_case_rows_are_typed_and_hold_the_recorded_values():
    rows = list(case_rows("run_1", RESULTS, FACTS, CASES_BY_ID))
    assert all(isinstance(row, CaseRow) for row in rows)
    assert [dict(row.as_mapping()) for row in rows] == EXPECTED_CASES


def test_case_rows_stream():
    rows = case_rows("run_1", RESULTS, FACTS, CASES_BY_ID)
    assert next(rows).case_id == "c1"  # built one at a time, not as a list


def test_a_context_entry_records_where_a_passage_came_from_not_its_text():
    row = next(case_rows("run_1", RESULTS, FACTS, CASES_BY_ID))
    assert row.context is not None
    assert all("text" not in entry for entry in row.context)


def test_retrieval_rows_mark_top_k_context_and_relevance():
    rows = list(retrieval_rows("run_1", RESULTS, CASES_BY_ID, top_k=2))
    assert all(isinstance(row, RetrievalRow) for row in rows)
    assert [dict(row.as_mapping()) for row in rows] == EXPECTED_RETRIEVALS


def test_without_top_k_no_candidate_is_in_top_k():
    rows = list(retrieval_rows("run_1", RESULTS, CASES_BY_ID, top_k=None))
    assert [row.in_top_k for row in rows] == [False, False, False]


def test_a_judgment_row_refuses_a_column_the_table_lacks():
    with pytest.raises(ValidationError, match="computed_by"):
        JudgmentRow(run_id="run_1", **JUDGMENTS_IN[0], computed_by="run_0")


def test_metric_rows_from_the_summary():
    metrics = summarize_metrics(
        JUDGMENT_ROWS, criteria=[("answer_correct", "proportion")],
        slices={"relevant_position": {"c1": "2"}}, min_slice_support=5, confidence=0.95,
    )  # fmt: skip
    rows = list(metric_rows("run_1", metrics))
    assert all(isinstance(row, MetricRow) for row in rows)
    assert [dict(row.as_mapping()) for row in rows] == [{"run_id": "run_1", **m} for m in metrics]
    assert [(row.slice, row.scored) for row in rows] == [(None, True), ("relevant_position", False)]


@pytest.mark.parametrize(
    ("schema", "build", "expected"),
    [
        (CASES, lambda: case_rows("run_1", RESULTS, FACTS, CASES_BY_ID), EXPECTED_CASES),
        (RETRIEVALS, lambda: retrieval_rows("run_1", RESULTS, CASES_BY_ID, 2), EXPECTED_RETRIEVALS),
        (JUDGMENTS, lambda: JUDGMENT_ROWS, [dict(row.as_mapping()) for row in JUDGMENT_ROWS]),
    ],
    ids=["cases", "retrievals", "judgments"],
)
def test_rows_read_back_from_the_store_unchanged(tmp_path, schema, build, expected):
    store = ResultsStore(str(tmp_path / "results"))
    store.write_table(f"runs/run_1/{schema.name}.parquet", (row.as_mapping() for row in build()), schema)
    assert store.read_table(f"runs/run_1/{schema.name}.parquet") == expected


def test_metric_rows_read_back_from_the_store_unchanged(tmp_path):
    store = ResultsStore(str(tmp_path / "results"))
    metrics = summarize_metrics(JUDGMENT_ROWS, criteria=[("answer_correct", "proportion")], slices={},
                                min_slice_support=1, confidence=0.95)
    store.write_table("runs/run_1/metrics.parquet", (r.as_mapping() for r in metric_rows("run_1", metrics)), METRICS)
    assert store.read_table("runs/run_1/metrics.parquet") == [{"run_id": "run_1", **m} for m in metrics]
