"""Column schemas of the Parquet tables in the results store.

Every table is declared once here, as an ordered tuple of ``(column, type)``
pairs in DuckDB's type names. ``JSON`` columns hold nested values (objects,
lists, strings) serialised as canonical JSON text and are stored as
``VARCHAR``; timestamps are ISO-8601 text. Readers that declare the schema
get JSON columns decoded back into Python values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from oloproof._exceptions import StoreError

__all__ = [
    "CASES",
    "DECISIONS",
    "DIAGNOSIS_LABELS",
    "JUDGMENTS",
    "METRICS",
    "RETRIEVALS",
    "TABLES",
    "TableSchema",
    "canonical_json",
]

_TYPES = frozenset({"VARCHAR", "BIGINT", "DOUBLE", "BOOLEAN", "JSON", "TIMESTAMP"})


def canonical_json(value: Any) -> str:
    """Serialise a value as canonical JSON text.

    Keys are sorted, non-ASCII characters are kept as they are and no
    insignificant whitespace is emitted, so equal values give equal text.

    Args:
        value: Any JSON-serialisable value; NumPy scalars are accepted.

    Returns:
        The JSON text.

    Raises:
        StoreError: The value cannot be represented as JSON.
    """
    try:
        return json.dumps(
            value,
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
            default=_json_default,
        )
    except (TypeError, ValueError) as error:
        raise StoreError(f"value is not JSON-serialisable: {error}") from error


def _json_default(value: Any) -> Any:
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    raise TypeError(f"object of type {type(value).__name__} is not JSON serialisable")


@dataclass(frozen=True)
class TableSchema:
    """The name and ordered, typed columns of one table.

    Attributes:
        name: The table's name, which is also its view name in
            :meth:`ResultsStore.connect`.
        columns: ``(column, type)`` pairs in order; types are ``VARCHAR``,
            ``BIGINT``, ``DOUBLE``, ``BOOLEAN``, ``JSON`` (stored as ``VARCHAR``)
            or ``TIMESTAMP`` (stored as ISO-8601 ``VARCHAR``).
    """

    name: str
    columns: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for column, kind in self.columns:
            if kind not in _TYPES:
                raise StoreError(
                    f"unknown column type {kind!r}; expected one of {sorted(_TYPES)}",
                    field=f"{self.name}.{column}",
                )
            if column in seen:
                raise StoreError("duplicate column", field=f"{self.name}.{column}")
            seen.add(column)

    @property
    def names(self) -> tuple[str, ...]:
        """The column names, in order."""
        return tuple(column for column, _ in self.columns)

    @property
    def json_columns(self) -> tuple[str, ...]:
        """The columns declared ``JSON``, in order."""
        return tuple(column for column, kind in self.columns if kind == "JSON")

    def storage_type(self, column: str) -> str:
        """The DuckDB type a column is stored as in Parquet.

        Args:
            column: A column of this table.

        Returns:
            ``VARCHAR`` for ``JSON`` and ``TIMESTAMP`` columns, else the declared type.
        """
        kind = dict(self.columns)[column]
        return "VARCHAR" if kind in ("JSON", "TIMESTAMP") else kind


def _schema(name: str, *columns: str) -> TableSchema:
    pairs = []
    for column in columns:
        column_name, _, kind = column.partition(" ")
        pairs.append((column_name, kind or "VARCHAR"))
    return TableSchema(name, tuple(pairs))


CASES = _schema(
    "cases",
    "run_id", "case_id", "status", "error_stage", "error",
    "execution_key", "retrieval_key", "assembly_key", "generation_key", "query",
    "execution_hit BOOLEAN", "retrieve_hit BOOLEAN", "generate_hit BOOLEAN",
    "input JSON", "expected JSON", "metadata JSON", "output JSON",
    "context JSON", "dropped JSON",
    "best_relevant_position BIGINT", "relevant_position", "context_truncated BOOLEAN",
    "retrieve_ms DOUBLE", "generate_ms DOUBLE",
)  # fmt: skip

RETRIEVALS = _schema(
    "retrievals",
    "run_id", "case_id", "position BIGINT", "doc_id", "chunk_id", "score DOUBLE",
    "text", "in_top_k BOOLEAN", "in_context BOOLEAN", "drop_reason",
    "relevant_grade DOUBLE",
)  # fmt: skip

JUDGMENTS = _schema(
    "judgments",
    "run_id", "case_id", "criterion", "evaluator", "spec_hash", "status", "reason",
    "value DOUBLE", "passed BOOLEAN", "detail JSON", "judgment_key", "hit BOOLEAN",
)  # fmt: skip

METRICS = _schema(
    "metrics",
    "run_id", "criterion", "kind", "slice", "slice_value",
    "estimate DOUBLE", "low DOUBLE", "high DOUBLE", "confidence DOUBLE", "method",
    "observed BIGINT", "successes BIGINT", "missing BIGINT", "excluded BIGINT",
    "scored BOOLEAN",
)  # fmt: skip

DIAGNOSIS_LABELS = _schema(
    "diagnosis_labels",
    "diagnosis_id", "case_id", "label", "reason", "strength",
    "best_relevant_position BIGINT", "control_passed BOOLEAN",
    "intervention_passed BOOLEAN",
)  # fmt: skip

DECISIONS = _schema(
    "decisions",
    "comparison_id", "rule", "criterion", "kind", "margin DOUBLE", "confidence DOUBLE",
    "verdict", "reason", "difference DOUBLE", "low DOUBLE", "high DOUBLE",
    "paired BIGINT",
)  # fmt: skip

TABLES: dict[str, TableSchema] = {
    schema.name: schema
    for schema in (CASES, RETRIEVALS, JUDGMENTS, METRICS, DIAGNOSIS_LABELS, DECISIONS)
}
"""Every table schema, by name."""
