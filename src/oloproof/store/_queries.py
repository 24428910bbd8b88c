"""SQL over a store: DuckDB connections with a view per table.

The views themselves are built in :mod:`oloproof.store._views`; this module
opens connections with them and runs statements, one connection each, so that
every statement sees the store as it is when it runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import duckdb

from oloproof._exceptions import StoreError
from oloproof.store._errors import one_line
from oloproof.store._location import StoreLocation
from oloproof.store._objects import ObjectStore
from oloproof.store._views import build_connection, views_named_in

__all__ = ["Queries", "connect"]


@dataclass(frozen=True)
class Queries:
    """SQL over the views of a store's tables.

    Attributes:
        objects: The store's objects.
    """

    objects: ObjectStore

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with a view per table over the store.

        Views: ``runs`` (the user's own runs), ``all_runs`` (every run, with its
        ``kind``), ``cases``, ``retrievals``, ``generations``, ``judgments``,
        ``metrics``, ``diagnoses``, ``diagnosis_labels``, ``comparisons`` and
        ``decisions``. Only complete runs (and diagnoses, comparisons) appear;
        the set of files is fixed when the connection is made.

        Raises:
            StoreError: The store cannot be listed or read.
        """
        return build_connection(self.objects)

    def query(
        self, sql: str, params: list[Any] | dict[str, Any] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one SQL statement over the store's views.

        Args:
            sql: The statement; values go in ``?`` or ``$name`` placeholders.
            params: The bound values, a list for ``?`` or a dict for ``$name``.

        Returns:
            The column names and the rows.

        Raises:
            StoreError: The SQL is invalid or fails (DuckDB's message, one line).
        """
        if params is not None and not isinstance(params, list | tuple | dict):
            raise StoreError(
                f"query parameters must be a list or dict, not {type(params).__name__}"
            )
        _check_read_only(sql)
        # Only the views the statement names are built: each costs a read of its files.
        con = build_connection(self.objects, views_named_in(sql))
        try:
            confine(con, self.objects.location)
            cursor = con.execute(sql) if params is None else con.execute(sql, params)
            if cursor.description is None:
                return [], []
            names = [column[0] for column in cursor.description]
            return names, cursor.fetchall()
        except duckdb.Error as error:
            raise StoreError(one_line(error)) from error
        finally:
            con.close()


def _check_read_only(sql: str) -> None:
    """Refuse anything but one SELECT: a query reads the views, never writes or attaches."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as error:
        raise StoreError(one_line(error)) from error
    if len(statements) != 1:
        raise StoreError(f"one SQL statement per query, got {len(statements)}")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise StoreError(f"oloproof query only reads: a {kind.name} statement is refused (SELECT over the views)")


def confine(con: duckdb.DuckDBPyConnection, where: StoreLocation) -> None:
    """Confine a connection to the store: no file outside it, no extension, no setting changed.

    The views read the store's own files, so those stay allowed; reading any other
    file, attaching a database, installing an extension or loosening this again is
    refused by DuckDB itself.
    """
    root = where.root if where.is_local else where.fs.unstrip_protocol(where.root)
    con.execute("SET allowed_directories = ?", [[root.rstrip("/\\") + ("/" if not where.is_local else os.sep)]])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def connect(
    url: str, storage_options: dict[str, Any] | None = None
) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB connection with views over the results store at ``url``.

    Args:
        url: A local path or fsspec URL of a results store.
        storage_options: Options for the fsspec filesystem (never stored).

    Returns:
        An in-memory DuckDB connection; see :meth:`Queries.connect`.

    Raises:
        ConfigError: The URL or the options are invalid.
        StoreError: The store cannot be listed or read.
    """
    return build_connection(ObjectStore(StoreLocation(url, storage_options)))
