"""Table schemas derived from the row models: the columns users query never move."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, JsonValue, SkipValidation
from typing_extensions import TypedDict

from oloproof._exceptions import StoreError
from oloproof.store import (
    CASES,
    DECISIONS,
    DIAGNOSIS_LABELS,
    JUDGMENTS,
    METRICS,
    RETRIEVALS,
    TABLES,
    TableSchema,
)
from oloproof.store._schema import table_schema

# The declarations the DuckDB views and users' queries were written against.
EXPECTED = {
    "cases": (
        ("run_id", "VARCHAR"), ("case_id", "VARCHAR"), ("status", "VARCHAR"),
        ("error_stage", "VARCHAR"), ("error", "VARCHAR"), ("execution_key", "VARCHAR"),
        ("retrieval_key", "VARCHAR"), ("assembly_key", "VARCHAR"), ("generation_key", "VARCHAR"),
        ("query", "VARCHAR"), ("execution_hit", "BOOLEAN"), ("retrieve_hit", "BOOLEAN"),
        ("generate_hit", "BOOLEAN"), ("input", "JSON"), ("expected", "JSON"), ("metadata", "JSON"),
        ("output", "JSON"), ("context", "JSON"), ("dropped", "JSON"),
        ("best_relevant_position", "BIGINT"), ("relevant_position", "VARCHAR"),
        ("context_truncated", "BOOLEAN"), ("retrieve_ms", "DOUBLE"), ("generate_ms", "DOUBLE"), ("output_items", "JSON"),
        ("repeat", "BIGINT"),
    ),
    "retrievals": (
        ("run_id", "VARCHAR"), ("case_id", "VARCHAR"), ("position", "BIGINT"), ("doc_id", "VARCHAR"),
        ("chunk_id", "VARCHAR"), ("score", "DOUBLE"), ("text", "VARCHAR"), ("in_top_k", "BOOLEAN"),
        ("in_context", "BOOLEAN"), ("drop_reason", "VARCHAR"), ("relevant_grade", "DOUBLE"), ("repeat", "BIGINT"),
    ),
    "judgments": (
        ("run_id", "VARCHAR"), ("case_id", "VARCHAR"), ("criterion", "VARCHAR"), ("evaluator", "VARCHAR"),
        ("spec_hash", "VARCHAR"), ("status", "VARCHAR"), ("outcome", "VARCHAR"), ("reason", "VARCHAR"),
        ("score", "DOUBLE"), ("value", "DOUBLE"), ("passed", "BOOLEAN"), ("label", "VARCHAR"),
        ("threshold", "DOUBLE"), ("detail", "JSON"), ("judgment_key", "VARCHAR"), ("hit", "BOOLEAN"),
        ("provider", "VARCHAR"), ("provider_type", "VARCHAR"), ("model", "VARCHAR"),
        ("prompt_hash", "VARCHAR"), ("input_tokens", "BIGINT"), ("output_tokens", "BIGINT"),
        ("latency_ms", "DOUBLE"), ("retries", "BIGINT"), ("finish_reason", "VARCHAR"),
        ("cost_usd", "DOUBLE"), ("raw_reply", "VARCHAR"), ("requests", "BIGINT"),
        ("repeat", "BIGINT"), ("judge_repeat", "BIGINT"),
    ),
    "metrics": (
        ("run_id", "VARCHAR"), ("criterion", "VARCHAR"), ("kind", "VARCHAR"), ("slice", "VARCHAR"),
        ("slice_value", "VARCHAR"), ("estimate", "DOUBLE"), ("low", "DOUBLE"), ("high", "DOUBLE"),
        ("confidence", "DOUBLE"), ("method", "VARCHAR"), ("observed", "BIGINT"),
        ("successes", "BIGINT"), ("missing", "BIGINT"), ("judge_errors", "BIGINT"), ("excluded", "BIGINT"),
        ("scored", "BOOLEAN"), ("samples", "BIGINT"), ("repeats", "BIGINT"), ("flaky", "BIGINT"),
        ("judge_disagreement", "DOUBLE"),
    ),
    "diagnosis_labels": (
        ("diagnosis_id", "VARCHAR"), ("case_id", "VARCHAR"), ("label", "VARCHAR"), ("reason", "VARCHAR"),
        ("strength", "VARCHAR"), ("best_relevant_position", "BIGINT"), ("control_passed", "BOOLEAN"),
        ("intervention_passed", "BOOLEAN"), ("repeats", "BIGINT"), ("original_passes", "BIGINT"),
        ("control_passes", "BIGINT"), ("intervention_passes", "BIGINT"),
    ),
    "decisions": (
        ("comparison_id", "VARCHAR"), ("rule", "VARCHAR"), ("criterion", "VARCHAR"), ("kind", "VARCHAR"),
        ("margin", "DOUBLE"), ("confidence", "DOUBLE"), ("verdict", "VARCHAR"), ("reason", "VARCHAR"),
        ("difference", "DOUBLE"), ("low", "DOUBLE"), ("high", "DOUBLE"), ("paired", "BIGINT"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_derived_schema_equals_the_published_columns(name):
    assert TABLES[name] == TableSchema(name, EXPECTED[name])


def test_every_table_is_listed_once():
    assert set(TABLES) == set(EXPECTED)
    schemas = (CASES, RETRIEVALS, JUDGMENTS, METRICS, DIAGNOSIS_LABELS, DECISIONS)
    assert [s.name for s in schemas] == list(TABLES)


class _Nested(TypedDict):
    a: int


class _Every(BaseModel):
    text: str
    maybe_text: str | None = None
    status: Literal["ok", "missing"]
    count: int
    share: float | None = None
    flag: bool
    at: datetime
    anything: JsonValue = None
    skipped: Annotated[JsonValue, SkipValidation] = None
    untyped: Any = None
    mapping: dict[str, Any]
    items: list[int] | None = None
    nested: _Nested | None = None


def test_annotations_map_to_duckdb_types():
    schema = table_schema("every", _Every)
    assert schema.columns == (
        ("text", "VARCHAR"), ("maybe_text", "VARCHAR"), ("status", "VARCHAR"), ("count", "BIGINT"),
        ("share", "DOUBLE"), ("flag", "BOOLEAN"), ("at", "TIMESTAMP"), ("anything", "JSON"),
        ("skipped", "JSON"), ("untyped", "JSON"), ("mapping", "JSON"), ("items", "JSON"),
        ("nested", "JSON"),
    )  # fmt: skip
    assert schema.json_columns == ("anything", "skipped", "untyped", "mapping", "items", "nested")
    assert schema.storage_type("at") == "VARCHAR"


class _Inner(BaseModel):
    a: int


class _Union(BaseModel):
    value: int | str


class _Model(BaseModel):
    inner: _Inner


class _Tuple(BaseModel):
    pair: tuple[int, int]


class _Numbers(BaseModel):
    level: Literal[1, 2]


@pytest.mark.parametrize(
    ("model", "column"),
    [(_Union, "value"), (_Model, "inner"), (_Tuple, "pair"), (_Numbers, "level")],
)
def test_an_annotation_without_a_column_type_is_refused(model, column):
    with pytest.raises(StoreError) as caught:
        table_schema("odd", model)
    assert caught.value.field == f"odd.{column}"
