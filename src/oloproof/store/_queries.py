"""SQL over a store: DuckDB connections with a view per table.

The views themselves are built in :mod:`oloproof.store._views`; this module
opens connections with them and runs statements, one connection each, so that
every statement sees the store as it is when it runs.

A statement runs in a thread of its own while the caller waits for it, so that a
timeout, Ctrl-C or SIGTERM reaches the caller at once and stops the statement
inside DuckDB (``interrupt()``), however long DuckDB would have run it.
"""

from __future__ import annotations

import math
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypedDict

import duckdb

from oloproof._exceptions import StoreError
from oloproof.store._errors import one_line
from oloproof.store._location import StorageOptions, StoreLocation
from oloproof.store._objects import ObjectStore
from oloproof.store._views import build_connection, views_named_in

__all__ = ["STOP_GRACE_S", "Queries", "QueryParameters", "connect", "statements_running"]

# DuckDB binds any Python value it can convert; it checks them, not this module.
QueryParameters = list[Any] | tuple[Any, ...] | dict[str, Any]
"""Values bound to a statement: a list for ``?`` placeholders, a dict for ``$name``."""

STOP_GRACE_S = 1.5
"""How long an interrupted statement is waited for: DuckDB stops within a chunk of rows."""

_POLL_S = 0.1
"""How often a waiting caller looks for a signal to handle."""

_Result = tuple[list[str], list[tuple[Any, ...]]]

_STATEMENT_THREAD = "oloproof-query"


def statements_running() -> bool:
    """Whether a stopped statement's thread outlived its grace and is still inside DuckDB.

    Such a thread must not meet the interpreter's finalization: it would be unwound by
    force inside DuckDB and the process would abort, so the command ends without it.
    """
    return any(thread.name == _STATEMENT_THREAD and thread.is_alive() for thread in threading.enumerate())


class _Outcome(TypedDict, total=False):
    """What a statement's thread leaves for the caller: its result, or what it raised."""

    result: _Result
    error: BaseException


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
        self,
        sql: str,
        params: QueryParameters | None = None,
        *,
        timeout: float | None = None,
    ) -> _Result:
        """Run one SELECT over the store's views, confined to the store.

        A ``KeyboardInterrupt`` (Ctrl-C, or a SIGTERM handler raising one) while the
        statement runs stops it in DuckDB before it reaches the caller.

        Args:
            sql: The statement; values go in ``?`` or ``$name`` placeholders.
            params: The bound values, a list for ``?`` or a dict for ``$name``.
            timeout: Seconds the statement may run before it is stopped (None: no bound).

        Returns:
            The column names and the rows.

        Raises:
            StoreError: The SQL is invalid, is not one SELECT, fails (DuckDB's message,
                one line), or ran past ``timeout``.
        """
        if params is not None and not isinstance(params, list | tuple | dict):
            raise StoreError(
                f"query parameters must be a list or dict, not {type(params).__name__}"
            )
        if timeout is not None and not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise StoreError(f"the query timeout must be a positive number of seconds, got {timeout!r}")
        _check_read_only(sql)
        views = views_named_in(sql)
        # Views bound to each table's first file first (no other footer read before the
        # statement): a store whose files all have every column never needs more. A
        # statement that fails on them runs again on views that union the files by name.
        opens = tuple(
            partial(self._open, views, by_first_file=first) for first in (True, False)
        )
        return _Statement(opens, sql, params).run(timeout)

    def _open(self, views: frozenset[str], spill: str, *, by_first_file: bool) -> duckdb.DuckDBPyConnection:
        return build_connection(
            self.objects, views, confined=True, temp_directory=spill, by_first_file=by_first_file
        )


class _Statement:
    """One statement on a connection of its own, run in a thread so that it can be stopped.

    The thread opens the connection (listing the store and binding the views), runs the
    statement and closes the connection; the caller's thread only waits. A call into
    DuckDB from the caller's thread would swallow a signal's exception into DuckDB's own
    "Query interrupted"; a wait lets the handler run and raise as it means to.

    Each of ``opens`` is tried in turn while the statement fails with a DuckDB error
    (other than an interrupt): the last one's error is the one reported.
    """

    def __init__(
        self, opens: Sequence[Callable[[str], duckdb.DuckDBPyConnection]], sql: str, params: Any
    ) -> None:
        self._opens = tuple(opens)
        self._sql = sql
        self._params = params
        self._lock = threading.Lock()  # the connection: opened, interrupted and closed one at a time
        self._con: duckdb.DuckDBPyConnection | None = None
        self._stopping = False
        self._done = threading.Event()
        self._outcome: _Outcome = {}
        self._spill = ""
        self._thread = threading.Thread(target=self._work, name=_STATEMENT_THREAD, daemon=True)

    def run(self, timeout: float | None) -> _Result:
        """Run the statement; stop it at ``timeout`` or when the wait is interrupted."""
        # DuckDB may read the folder it spills to: a private one, gone with the statement.
        self._spill = tempfile.mkdtemp(prefix="oloproof-query-")
        self._thread.start()
        try:
            finished = self._wait(timeout)
        except BaseException:  # Ctrl-C, or SIGTERM as main() raises it
            self._stop()
            raise
        if finished:
            # The thread must be gone before the interpreter is: one still inside DuckDB
            # when Python finalizes is unwound by force and the process aborts.
            self._thread.join()
        else:
            self._stop()
            if "result" not in self._outcome:  # it may have finished while being stopped
                raise StoreError(f"the query ran past its timeout of {timeout:g} s and was stopped")
        error = self._outcome.get("error")
        if isinstance(error, duckdb.Error):
            raise StoreError(one_line(error)) from error
        if error is not None:
            raise error
        result: _Result = self._outcome["result"]
        return result

    def _work(self) -> None:
        try:
            self._execute()
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            self._outcome["error"] = error
        finally:
            self._close()
            shutil.rmtree(self._spill, ignore_errors=True)
            self._done.set()

    def _execute(self) -> None:
        for open_connection in self._opens[:-1]:
            try:
                self._execute_on(open_connection)
                return
            except duckdb.InterruptException:
                raise
            except duckdb.Error:
                self._close()
        self._execute_on(self._opens[-1])

    def _close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def _execute_on(self, open_connection: Callable[[str], duckdb.DuckDBPyConnection]) -> None:
        """Open a connection and run the statement; every DuckDB object dies with this frame."""
        con = open_connection(self._spill)
        with self._lock:
            self._con = con
            if self._stopping:
                return
        cursor = con.execute(self._sql) if self._params is None else con.execute(self._sql, self._params)
        if cursor.description is None:
            self._outcome["result"] = ([], [])
        else:
            self._outcome["result"] = ([column[0] for column in cursor.description], cursor.fetchall())

    def _wait(self, timeout: float | None) -> bool:
        """Wait for the statement until ``timeout``, in short slices.

        The caller's thread runs a signal's handler only between waits, and the system
        may hand the signal to one of DuckDB's threads instead.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _POLL_S if deadline is None else min(_POLL_S, deadline - time.monotonic())
            if self._done.wait(max(left, 0.0)):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def _stop(self) -> None:
        """Interrupt the statement and wait a moment for it to stop.

        The interrupt is repeated: one that comes before DuckDB starts the statement is
        lost. A thread still listing the store is told not to start the statement; one
        that outlives the grace is left to finish and close its connection by itself.
        """
        deadline = time.monotonic() + STOP_GRACE_S
        with self._lock:
            self._stopping = True
        while not self._done.is_set() and time.monotonic() < deadline:
            with self._lock:
                if self._con is not None:
                    try:
                        self._con.interrupt()
                    except duckdb.Error:
                        pass
            self._done.wait(0.05)
        if self._done.is_set():
            self._thread.join()
        else:
            shutil.rmtree(self._spill, ignore_errors=True)


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


def connect(
    url: str, storage_options: StorageOptions | None = None
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
