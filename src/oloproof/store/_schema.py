"""Column schemas of the Parquet tables in the results store.

Every table is declared once, by its row model in :mod:`oloproof.records`; its
schema here, an ordered tuple of ``(column, type)`` pairs in DuckDB's type
names, is derived from the model's fields. ``JSON`` columns hold nested values
(objects, lists, strings) serialised as canonical JSON text and are stored as
``VARCHAR``; timestamps are ISO-8601 text. Readers that declare the schema get
JSON columns decoded back into Python values.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, JsonValue
from typing_extensions import is_typeddict

from oloproof._exceptions import StoreError
from oloproof._json import canonical_json
from oloproof.records import (
    CaseRow,
    DecisionRow,
    DiagnosisLabelRow,
    JudgmentRow,
    MetricRow,
    RetrievalRow,
)

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
    "table_schema",
]

_TYPES = frozenset({"VARCHAR", "BIGINT", "DOUBLE", "BOOLEAN", "JSON", "TIMESTAMP"})


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


def table_schema(name: str, record: type[BaseModel]) -> TableSchema:
    """Derive a table's schema from its row model: one column per field, in order.

    ``str`` and string ``Literal`` fields are ``VARCHAR``, ``int`` ``BIGINT``,
    ``float`` ``DOUBLE``, ``bool`` ``BOOLEAN``, ``datetime`` ``TIMESTAMP``; JSON
    values, objects and lists are ``JSON``. ``X | None`` is the type of ``X``.

    Args:
        name: The table's name.
        record: The row model.

    Returns:
        The schema, columns in the model's field order.

    Raises:
        StoreError: A field's annotation has no column type (a union of several
            types, a nested model or an unknown class).
    """
    return TableSchema(
        name,
        tuple(
            (column, _column_type(field.annotation, f"{name}.{column}"))
            for column, field in record.model_fields.items()
        ),
    )


_SCALARS: dict[Any, str] = {
    str: "VARCHAR",
    bool: "BOOLEAN",
    int: "BIGINT",
    float: "DOUBLE",
    datetime: "TIMESTAMP",
}


def _column_type(annotation: Any, field: str) -> str:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _column_type(get_args(annotation)[0], field)
    if origin is Union or origin is UnionType:
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return _column_type(members[0], field)
        raise StoreError(f"a column cannot hold {annotation}; use one type or JsonValue", field=field)
    if origin is Literal and all(isinstance(value, str) for value in get_args(annotation)):
        return "VARCHAR"
    if annotation is JsonValue or annotation is Any or origin in (dict, list) or is_typeddict(annotation):
        return "JSON"
    if isinstance(annotation, type) and annotation in _SCALARS:
        return _SCALARS[annotation]
    # A nested model would reach the store as an object canonical JSON cannot encode.
    raise StoreError(f"no column type for {annotation!r}", field=field)


CASES = table_schema("cases", CaseRow)
RETRIEVALS = table_schema("retrievals", RetrievalRow)
JUDGMENTS = table_schema("judgments", JudgmentRow)
METRICS = table_schema("metrics", MetricRow)
DIAGNOSIS_LABELS = table_schema("diagnosis_labels", DiagnosisLabelRow)
DECISIONS = table_schema("decisions", DecisionRow)

TABLES: dict[str, TableSchema] = {
    schema.name: schema
    for schema in (CASES, RETRIEVALS, JUDGMENTS, METRICS, DIAGNOSIS_LABELS, DECISIONS)
}
"""Every table schema, by name."""
