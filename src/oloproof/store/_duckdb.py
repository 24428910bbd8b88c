"""DuckDB connections and SQL quoting shared by the table codec and the views."""

from __future__ import annotations

import duckdb

__all__ = ["new_connection", "sql_ident", "sql_string"]


def new_connection(temp_directory: str | None = None) -> duckdb.DuckDBPyConnection:
    """Open an in-memory DuckDB connection that never downloads extensions.

    Remote files are read through the store's own fsspec filesystem instead, so
    a store works offline and with the credentials it was opened with.

    Args:
        temp_directory: Where DuckDB may spill what does not fit in memory. DuckDB's
            default is ``.tmp`` in the current folder, which a confined connection
            would also be allowed to read: a query passes a private folder of its own.
    """
    config: dict[str, str | bool | int | float | list[str]] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    if temp_directory is not None:
        config["temp_directory"] = temp_directory
    con = duckdb.connect(":memory:", config=config)
    # DuckDB draws a progress bar on stdout under a long statement: it would land in the output.
    con.execute("SET enable_progress_bar = false")
    return con


def sql_string(value: str) -> str:
    """Quote a string as an SQL literal (for DDL, which cannot take parameters)."""
    return "'" + value.replace("'", "''") + "'"


def sql_ident(name: str) -> str:
    """Quote a name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
