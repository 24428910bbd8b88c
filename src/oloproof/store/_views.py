"""DuckDB views over a results store.

Parquet tables are read by DuckDB directly: local files by path, remote ones
through the store's fsspec filesystem registered with the connection (no DuckDB
extension is ever downloaded). The store is listed once per connection, and
only directories whose manifest exists (``run.json``, ``diagnosis.json``,
``comparison.json``) contribute rows: an interrupted or in-progress run is
invisible.

``all_runs`` holds every complete run with its ``kind``; ``runs`` only the user's
own (``kind = 'run'``), not a diagnosis's child runs. The table views hold the
rows of every complete run, so that a query of a table never reads a manifest:
joined with ``runs``, they keep the user's runs only.

A local store is listed without following a link out of it, and its manifests
are read only from inside it (see :mod:`oloproof.store._inside`); a confined
connection lets DuckDB read the store's own files and nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from typing import Any

import duckdb

from oloproof._exceptions import StoreError
from oloproof._json import canonical_json
from oloproof.records import StoredObject, stored_run_kind
from oloproof.store._duckdb import new_connection, sql_ident, sql_string
from oloproof.store._errors import one_line
from oloproof.store._inside import list_entries, read_inside
from oloproof.store._layout import (
    COMPARISON_DECISIONS,
    COMPARISON_MANIFEST,
    COMPARISONS_DIR,
    DIAGNOSES_DIR,
    DIAGNOSIS_MANIFEST,
    RUN_MANIFEST,
    RUNS_DIR,
    entry_file,
    run_table_file,
    split_entry_file,
)
from oloproof.store._layout import DIAGNOSIS_LABELS as DIAGNOSIS_LABELS_FILE
from oloproof.store._location import StoreLocation
from oloproof.store._objects import ObjectStore, parse_json
from oloproof.store._schema import CASES, DECISIONS, DIAGNOSIS_LABELS, JUDGMENTS, METRICS, RETRIEVALS, TableSchema

__all__ = ["VIEW_NAMES", "build_connection", "confine", "views_named_in"]

_ManifestColumn = tuple[str, Callable[[StoredObject], object]]
"""A column of a manifest view: its name, and how its value is read from a manifest."""


def _first(*dotted: str) -> Callable[[StoredObject], object]:
    """A reader of a manifest's value at the first of the ``dotted`` paths that holds one."""

    def read(manifest: StoredObject) -> object:
        return next((v for v in (_pick(manifest, path) for path in dotted) if v is not None), None)

    return read


_RUN_COLUMNS: tuple[_ManifestColumn, ...] = (
    ("created_at", _first("created_at")),
    ("system_name", _first("system_name", "system.name")),
    ("system_version", _first("system_version", "system.version")),
    ("index_version", _first("index_version", "system.index_version", "index.version")),
    ("dataset", _first("dataset")),
    ("status", _first("status")),
    # Manifests written before runs recorded their kind have none: their parent decides.
    ("kind", stored_run_kind),
)
_DIAGNOSIS_COLUMNS: tuple[_ManifestColumn, ...] = (
    ("parent_run_id", _first("parent_run_id")),
    ("criterion", _first("criterion")),
    ("intervention", _first("intervention")),
)
_COMPARISON_COLUMNS: tuple[_ManifestColumn, ...] = (
    ("candidate_run_id", _first("candidate_run_id")),
    ("baseline_run_id", _first("baseline_run_id")),
    ("gate", _first("gate")),
)

# (container dir, manifest file, id column, manifest view, manifest columns)
_MANIFESTS = (
    (RUNS_DIR, RUN_MANIFEST, "run_id", "all_runs", _RUN_COLUMNS),
    (DIAGNOSES_DIR, DIAGNOSIS_MANIFEST, "diagnosis_id", "diagnoses",
     _DIAGNOSIS_COLUMNS),
    (COMPARISONS_DIR, COMPARISON_MANIFEST, "comparison_id", "comparisons",
     _COMPARISON_COLUMNS),
)  # fmt: skip

_ROWS_PER_INSERT = 500

# (container dir, file name, schema)
_TABLE_FILES = (
    *(
        (RUNS_DIR, run_table_file(schema.name), schema)
        for schema in (CASES, RETRIEVALS, JUDGMENTS, METRICS)
    ),
    (DIAGNOSES_DIR, DIAGNOSIS_LABELS_FILE, DIAGNOSIS_LABELS),
    (COMPARISONS_DIR, COMPARISON_DECISIONS, DECISIONS),
)


# Views over another view: name -> (the view it reads, its SELECT).
_DERIVED = {
    # The user's own runs: a diagnosis's child runs, a few re-executed cases each, are in all_runs only.
    "runs": ("all_runs", "SELECT * FROM all_runs WHERE kind = 'run' ORDER BY run_id"),
    "generations": (
        "cases",
        "SELECT run_id, case_id, generation_key, generate_hit, output, context, repeat FROM cases",
    ),
    # One row per run, case and criterion over its samples (repeats, judge repeats): the
    # case's mean, and whether its samples disagree. Rows of runs without repeats are one sample.
    "case_samples": (
        "judgments",
        ("SELECT run_id, case_id, criterion, count(*) AS samples,"
        " count(value) FILTER (WHERE status = 'observed') AS observed,"
        " avg(value) FILTER (WHERE status = 'observed') AS mean,"
        " coalesce(min(value) FILTER (WHERE status = 'observed')"
        " <> max(value) FILTER (WHERE status = 'observed'), false) AS flaky"
        " FROM judgments GROUP BY run_id, case_id, criterion"),
    ),
}
VIEW_NAMES = frozenset(
    [view for *_, view, _ in _MANIFESTS]
    + [schema.name for *_, schema in _TABLE_FILES]
    + list(_DERIVED)
)
"""Every view a connection over a store can hold."""

# What a name of a view can be in a statement: a table reference, a quoted
# identifier, a keyword-like word, or a string (``query_table('judgments')``).
_NAME_TOKENS = (
    duckdb.token_type.identifier,
    duckdb.token_type.keyword,
    duckdb.token_type.string_const,
)


def views_named_in(sql: str) -> frozenset[str]:
    """The views a statement may read: every view whose name it holds as a word.

    Comments do not count. Reading more than the statement needs is harmless; a
    statement that names no view (e.g. one over ``information_schema``) gets them all.

    Raises:
        StoreError: The statement cannot be tokenised.
    """
    try:
        tokens = duckdb.tokenize(sql)
    except duckdb.Error as error:
        raise StoreError(one_line(error)) from error
    ends = [start for start, _ in tokens[1:]] + [len(sql)]
    words = {
        sql[start:end].strip().strip("'\"").lower()
        for (start, kind), end in zip(tokens, ends, strict=True)
        if kind in _NAME_TOKENS
    }
    named = VIEW_NAMES & words
    return frozenset(named) if named else VIEW_NAMES


def build_connection(
    objects: ObjectStore,
    views: Collection[str] = VIEW_NAMES,
    *,
    confined: bool = False,
    temp_directory: str | None = None,
    by_first_file: bool = False,
) -> duckdb.DuckDBPyConnection:
    """Open an in-memory DuckDB connection with views over a store.

    Args:
        objects: The store's objects.
        views: The views to build (default: all). Each costs a look at its files:
            a manifest view reads every manifest, a table view every file's footer.
        confined: Confine the connection to the store (see :func:`confine`) before
            any view reads a file.
        temp_directory: Where DuckDB may spill; see :func:`new_connection`.
        by_first_file: Bind each table view to the columns of its first file (run ids
            sort by time: the oldest run's) when that file has every column, so that no
            other footer is read before a statement runs and DuckDB matches the other
            files' columns by name. A newer file
            missing a column the statement reads then fails it (never a silent NULL):
            the caller runs the statement again on views built without this.

    Returns:
        The connection, with those of the views ``runs``, ``all_runs``,
        ``cases``, ``retrievals``, ``generations``, ``judgments``, ``case_samples``, ``metrics``,
        ``diagnoses``, ``diagnosis_labels``, ``comparisons`` and ``decisions``
        that ``views`` names (and the views those read).

    Raises:
        StoreError: The store cannot be listed, or a manifest is not valid JSON.
    """
    wanted = set(views) | {_DERIVED[v][0] for v in views if v in _DERIVED}
    where = objects.location
    # A container is listed only for the views that read it.
    listings = {
        container: _children(objects, container)
        for container in dict.fromkeys(
            [c for c, _, _, view, _ in _MANIFESTS if view in wanted]
            + [c for c, _, schema in _TABLE_FILES if schema.name in wanted]
        )
    }
    con = new_connection(temp_directory)
    try:
        if not where.is_local:
            con.register_filesystem(where.fs)
        if confined:
            confine(con, where)
        complete: dict[str, set[str]] = {}
        for container, manifest, id_column, view, columns in _MANIFESTS:
            if container not in listings:
                continue
            ids = sorted(
                name for name, files in listings[container].items() if manifest in files
            )
            complete[container] = set(ids)
            if view not in wanted:
                continue
            paths = [entry_file(container, name, manifest) for name in ids]
            contents = read_inside(where, paths) if where.is_local else objects.read_many(paths)
            rows = []
            for name, path in zip(ids, paths, strict=True):
                if path not in contents:  # removed since it was listed
                    complete[container].discard(name)
                    continue
                # Content-addressed ids read as they are printed: sha256:<hex>.
                shown = name if container == RUNS_DIR else f"sha256:{name}"
                rows.append(_manifest_row(shown, contents[path], columns, where.url_for(path)))
            _create_manifest_view(con, view, id_column, columns, rows)
        for container, filename, schema in _TABLE_FILES:
            if schema.name not in wanted:
                continue
            files = [
                _duckdb_path(where, entry_file(container, name, filename))
                for name in sorted(complete[container])
                if filename in listings[container].get(name, ())
            ]
            _create_table_view(con, schema, files, by_first_file=by_first_file)
        for view, (_, select) in _DERIVED.items():
            if view in wanted:
                con.execute(f"CREATE VIEW {view} AS {select}")
    except duckdb.Error as error:
        con.close()
        raise StoreError(
            f"cannot open the store's views: {one_line(error)}", path=where.url
        ) from error
    except BaseException:
        con.close()
        raise
    return con


def confine(con: duckdb.DuckDBPyConnection, where: StoreLocation) -> None:
    """Confine a connection to the store: no file outside it, no extension, no setting changed.

    The views read the store's own files, so those stay allowed; reading any other
    file, attaching a database, installing an extension or loosening this again is
    refused by DuckDB itself, which resolves links before it checks a path. DuckDB
    also allows its temporary folder: a confined connection is given a private one.
    """
    root = where.root if where.is_local else where.fs.unstrip_protocol(where.root)
    con.execute("SET allowed_directories = ?", [[root.rstrip("/\\") + ("/" if not where.is_local else os.sep)]])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _children(objects: ObjectStore, container: str) -> dict[str, set[str]]:
    """The files directly inside each ``<container>/<id>/`` directory."""
    if objects.location.is_local:
        return list_entries(objects.location, container)
    out: dict[str, set[str]] = {}
    for relpath in objects.list_paths(container):
        entry = split_entry_file(relpath)
        if entry is not None:
            _, name, filename = entry
            out.setdefault(name, set()).add(filename)
    return out


def _duckdb_path(where: StoreLocation, relpath: str) -> str:
    # Remote files keep their protocol, which selects the registered filesystem.
    full = where.full_path(relpath)
    return full if where.is_local else where.fs.unstrip_protocol(full)


def _pick(manifest: StoredObject, dotted: str) -> Any:
    value: Any = manifest
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return canonical_json(value)


def _manifest_row(
    name: str, data: bytes, columns: tuple[_ManifestColumn, ...], url: str
) -> tuple[str | None, ...]:
    manifest = parse_json(data, url, what="manifest JSON")
    if not isinstance(manifest, dict):
        raise StoreError("a manifest must be a JSON object", path=url)
    values = [name, *(_text(read(manifest)) for _, read in columns), canonical_json(manifest)]
    return tuple(values)


def _create_manifest_view(
    con: duckdb.DuckDBPyConnection,
    view: str,
    id_column: str,
    columns: tuple[_ManifestColumn, ...],
    rows: list[tuple[str | None, ...]],
) -> None:
    names = [id_column, *(column for column, _ in columns), "manifest"]
    table = f"_{view}_manifests"
    con.execute(f"CREATE TABLE {table} ({', '.join(f'{n} VARCHAR' for n in names)})")
    row = "(" + ", ".join("?" for _ in names) + ")"
    # Many rows to a statement: executemany runs one statement per row.
    for start in range(0, len(rows), _ROWS_PER_INSERT):
        chunk = rows[start : start + _ROWS_PER_INSERT]
        con.execute(
            f"INSERT INTO {table} VALUES {', '.join(row for _ in chunk)}",
            [value for values in chunk for value in values],
        )
    con.execute(f"CREATE VIEW {view} AS SELECT * FROM {table} ORDER BY {id_column}")


def _create_table_view(
    con: duckdb.DuckDBPyConnection, schema: TableSchema, files: list[str], *, by_first_file: bool
) -> None:
    listed = ", ".join(sql_string(f) for f in files)
    if files and by_first_file:
        # Binding reads the first file's footer only; a column it lacks fails the bind.
        try:
            con.execute(f"CREATE VIEW {schema.name} AS SELECT {_columns(schema, schema.names)}"
                        f" FROM read_parquet([{listed}])")  # fmt: skip
            return
        except duckdb.BinderException:
            pass
    present: Collection[str] = ()
    source = " WHERE false"
    if files:
        source = f" FROM read_parquet([{listed}], union_by_name=true)"
        # A column added since some runs were written is NULL in theirs, and absent
        # altogether when every file predates it. The newest file (run ids sort by
        # time) usually has every column: then no other footer needs reading here.
        newest = f" FROM read_parquet({sql_string(files[-1])})"
        present = {row[0] for row in con.execute(f"DESCRIBE SELECT *{newest}").fetchall()}
        if not present.issuperset(schema.names):
            present = {row[0] for row in con.execute(f"DESCRIBE SELECT *{source}").fetchall()}
    con.execute(f"CREATE VIEW {schema.name} AS SELECT {_columns(schema, present)}{source}")


def _columns(schema: TableSchema, present: Collection[str]) -> str:
    """The view's select list: each column of ``schema`` at its storage type, NULL where absent."""
    return ", ".join(
        f'CAST({sql_ident(name) if name in present else "NULL"} AS {schema.storage_type(name)}) AS {sql_ident(name)}'
        for name in schema.names
    )
