"""DuckDB connections and SQL quoting shared by the table codec and the views."""

from __future__ import annotations

import duckdb

__all__ = ["new_connection", "sql_ident", "sql_string"]


def new_connection() -> duckdb.DuckDBPyConnection:
    """Open an in-memory DuckDB connection that never downloads extensions.

    Remote files are read through the store's own fsspec filesystem instead, so
    a store works offline and with the credentials it was opened with.
    """
    return duckdb.connect(
        ":memory:",
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )


def sql_string(value: str) -> str:
    """Quote a string as an SQL literal (for DDL, which cannot take parameters)."""
    return "'" + value.replace("'", "''") + "'"


def sql_ident(name: str) -> str:
    """Quote a name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
