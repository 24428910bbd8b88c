"""Tables: rows stored as Parquet files, encoded and decoded through DuckDB.

Rows are written as newline-delimited JSON to a local temporary file, read back
by DuckDB with the declared column types and copied to Parquet. The table's
name and its JSON columns are recorded in the Parquet key-value metadata so
that a reader can decode JSON columns without being told the schema.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import math
import os
import tempfile
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

import duckdb
import orjson

from oloproof._exceptions import StoreError
from oloproof._json import canonical_json
from oloproof.records import StoredObject
from oloproof.store._duckdb import new_connection, sql_ident, sql_string
from oloproof.store._errors import one_line, translate
from oloproof.store._objects import ObjectStore
from oloproof.store._schema import TableSchema

__all__ = ["TableStore", "decode_parquet", "encode_chunk", "encode_parquet", "parquet_from_chunks"]

_META_TABLE = "oloproof.table"
_META_JSON = "oloproof.json_columns"
_MAX_OBJECT_SIZE = 1 << 30
_USUAL_OBJECT_SIZE = 16 << 20


@dataclass(frozen=True)
class TableStore:
    """Parquet tables, kept as objects of a store.

    Attributes:
        objects: The store's objects.
    """

    objects: ObjectStore

    def write_table(
        self, relpath: str, rows: Iterable[Mapping[str, Any]], schema: TableSchema
    ) -> None:
        """Write rows as a Parquet table, atomically.

        Args:
            relpath: The path relative to the store root, e.g. ``runs/<id>/cases.parquet``.
            rows: One mapping per row. Columns declared ``JSON`` take any
                JSON-serialisable value and are stored as JSON text.
            schema: The table's schema; zero rows still give a file with its columns.

        Raises:
            StoreError: A row does not fit the schema or the file cannot be written.
        """
        with self._naming(relpath):
            data = encode_parquet(rows, schema)
        self.objects.write_bytes(relpath, data)

    def write_table_chunks(self, relpath: str, chunks: Iterable[bytes], schema: TableSchema) -> None:
        """Write the rows of chunks made by :func:`encode_chunk` as one Parquet table, atomically.

        Raises:
            StoreError: A chunk is damaged or the file cannot be written.
        """
        with self._naming(relpath):
            data = parquet_from_chunks(chunks, schema)
        self.objects.write_bytes(relpath, data)

    def read_table(self, relpath: str, columns: Sequence[str] | None = None,
                   as_text: Collection[str] = ()) -> list[StoredObject]:  # fmt: skip
        """Read a Parquet table written by :meth:`write_table`.

        Args:
            relpath: The table's path in the store.
            columns: Only these columns (those the file has; a table written before
                a column existed has rows without it); ``None``: every column.
            as_text: JSON columns left as their JSON text.

        Returns:
            One dict per row; JSON columns are decoded into Python values.

        Raises:
            NotFoundError: There is no such table.
            StoreError: It cannot be read.
        """
        where = self.objects.location
        with self._naming(relpath):
            if where.is_local:
                full = where.full_path(relpath)
                if not os.path.isfile(full):
                    missing = FileNotFoundError(full)
                    raise translate(missing, url=where.url_for(relpath), action="read")
                return decode_parquet(full, columns, as_text)
            # The codec reads a local file: copy the object down first.
            data = self.objects.read_bytes(relpath)
            with tempfile.TemporaryDirectory(prefix="oloproof-read-") as tmp:
                local = os.path.join(tmp, "table.parquet")
                with open(local, "wb") as handle:
                    handle.write(data)
                return decode_parquet(local, columns, as_text)

    @contextmanager
    def _naming(self, relpath: str) -> Iterator[None]:
        # The codec knows no URLs: add the table's URL to errors that name none.
        try:
            yield
        except StoreError as error:
            if error.path is not None:
                raise
            raise StoreError(
                error.message, path=self.objects.location.url_for(relpath), field=error.field
            ) from error


def _scalar(value: Any, schema: TableSchema, column: str, index: int) -> Any:
    if value is None:
        return None
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, str | bytes):
        value = item()
    if isinstance(value, float) and not math.isfinite(value):
        return value
    if isinstance(value, Mapping | list | tuple | set | bytes):
        raise StoreError(
            f"row {index} holds a {type(value).__name__} in a scalar column; "
            "declare the column JSON to store nested values",
            field=f"{schema.name}.{column}",
        )
    return value


# Values stored as they are in a scalar column (a bool is an int, a float may be nan).
_PLAIN = frozenset({str, int, float, bool})


@functools.cache
def _name_set(schema: TableSchema) -> frozenset[str]:
    return frozenset(schema.names)


def _encode_row(row: Any, schema: TableSchema, index: int) -> bytes:
    if not isinstance(row, Mapping):
        raise StoreError(
            f"row {index} is a {type(row).__name__}, expected a mapping", field=schema.name
        )
    if not _name_set(schema).issuperset(row):
        unknown = set(row) - _name_set(schema)
        raise StoreError(
            f"row {index} has unknown column(s) {sorted(map(str, unknown))}; "
            f"expected {list(schema.names)}",
            field=schema.name,
        )
    out: StoredObject = {}
    finite = True
    for column, kind in schema.columns:
        value = row.get(column)
        if value is None or (type(value) in _PLAIN and kind != "JSON"):
            out[column] = value  # the common case, checked by type alone: rows are many
        elif kind == "JSON":
            out[column] = canonical_json(value)
        else:
            out[column] = value = _scalar(value, schema, column, index)
        if type(value) is float and not math.isfinite(value):
            finite = False
    if finite:
        # The line is read back by DuckDB, never kept: orjson's text of a float may differ
        # from json's (1e-05 and 0.00001) but not its value. NaN and infinities, which orjson
        # writes as null, are written by json, as are integers past 64 bits.
        with contextlib.suppress(TypeError, ValueError):
            return orjson.dumps(out)
    try:
        return json.dumps(out, ensure_ascii=False, allow_nan=True).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise StoreError(f"row {index} cannot be encoded: {error}", field=schema.name) from error


def encode_chunk(rows: Iterable[Mapping[str, Any]], schema: TableSchema) -> bytes:
    """Encode rows as one compressed chunk of a table, to be written later.

    A run encodes each batch's rows as it finishes and holds only these chunks
    (compressed newline-delimited JSON, a small fraction of the rows' size in
    memory); :func:`parquet_from_chunks` turns them into the table.

    Raises:
        StoreError: A row does not fit the schema.
    """
    compressor = zlib.compressobj(1)  # speed over ratio: the chunk lives for one run
    pieces = [compressor.compress(block) for block in _ndjson_blocks(rows, schema)]
    pieces.append(compressor.flush())
    return b"".join(pieces)


def encode_parquet(rows: Iterable[Mapping[str, Any]], schema: TableSchema) -> bytes:
    """Encode rows as a Parquet file with the schema's columns and types.

    Args:
        rows: One mapping per row (any iterable: rows are encoded one at a time, so a
            generator never holds the whole table in memory); missing columns are NULL,
            unknown ones an error.
            Values of ``JSON`` columns may be any JSON-serialisable value.
        schema: The table's schema.

    Returns:
        The Parquet file's bytes (a valid file with all columns even for no rows).

    Raises:
        StoreError: A row does not fit the schema.
    """

    def write(handle: BinaryIO) -> None:
        handle.writelines(_ndjson_blocks(rows, schema))

    return _to_parquet(write, schema)


def parquet_from_chunks(chunks: Iterable[bytes], schema: TableSchema) -> bytes:
    """The Parquet file of the rows of chunks made by :func:`encode_chunk`, in order.

    Each chunk is decompressed straight to a temporary file, so memory holds one
    chunk at a time beyond the chunks themselves.

    Raises:
        StoreError: A chunk is not one :func:`encode_chunk` made.
    """

    def write(handle: BinaryIO) -> None:
        for number, chunk in enumerate(chunks):
            try:
                handle.write(zlib.decompress(chunk))
            except zlib.error as error:
                raise StoreError(f"chunk {number} of table {schema.name!r} is damaged: {error}",
                                 field=schema.name) from error  # fmt: skip

    return _to_parquet(write, schema)


# Rows are encoded into blocks of about this size: a chunk compresses a block at a
# time, not a row, because each zlib call releases the GIL, and taking it back
# among busy threads can cost a switch interval (5 ms) a call, which made a
# run's encoding wait more than it worked.
_BLOCK_BYTES = 1 << 20


def _ndjson_blocks(rows: Iterable[Mapping[str, Any]], schema: TableSchema) -> Iterator[bytes]:
    """The rows as newline-delimited JSON, in blocks of whole lines of about ``_BLOCK_BYTES``."""
    block: list[bytes] = []
    size = 0
    for index, row in enumerate(rows):
        line = _encode_row(row, schema, index) + b"\n"
        block.append(line)
        size += len(line)
        if size >= _BLOCK_BYTES:
            yield b"".join(block)
            block, size = [], 0
    if block:
        yield b"".join(block)


def _to_parquet(write: Callable[[BinaryIO], None], schema: TableSchema) -> bytes:
    """Newline-delimited JSON, written by ``write`` to a temporary file, as Parquet."""
    columns = ", ".join(
        f"{sql_string(name)}: {sql_string(schema.storage_type(name))}" for name in schema.names
    )
    select = ", ".join(
        f"CAST({sql_ident(name)} AS {schema.storage_type(name)}) AS {sql_ident(name)}"
        for name in schema.names
    )
    metadata = (
        f"{{{sql_string(_META_TABLE)}: {sql_string(schema.name)}, "
        f"{sql_string(_META_JSON)}: {sql_string(','.join(schema.json_columns))}}}"
    )
    with tempfile.TemporaryDirectory(prefix="oloproof-table-") as tmp:
        source = os.path.join(tmp, "rows.ndjson")
        target = os.path.join(tmp, "table.parquet")
        with open(source, "wb") as handle:
            write(handle)
        def copy(object_size: int) -> None:
            con.execute(
                f"COPY (SELECT {select} FROM read_json({sql_string(source)}, "
                f"format='newline_delimited', columns={{{columns}}}, maximum_object_size={object_size})) "
                f"TO {sql_string(target)} (FORMAT parquet, KV_METADATA {metadata})"
            )

        con = new_connection()
        try:
            # One thread writes the same file in about half the time and memory of
            # many: reading newline-delimited JSON in parallel buffers every thread's
            # share of the rows before the writer, in order, takes them.
            con.execute("SET threads = 1")
            try:
                # The reader's buffer grows to its largest object: sized for rows as
                # they usually are, and made larger only for a table that needs it.
                copy(_USUAL_OBJECT_SIZE)
            except duckdb.InvalidInputException as error:
                if "maximum_object_size" not in str(error):
                    raise
                copy(_MAX_OBJECT_SIZE)
        except duckdb.Error as error:
            raise StoreError(
                f"cannot write table {schema.name!r}: {one_line(error)}", field=schema.name
            ) from error
        finally:
            con.close()
        with open(target, "rb") as parquet:
            return parquet.read()


def decode_parquet(local_path: str, columns: Sequence[str] | None = None,
                   as_text: Collection[str] = ()) -> list[StoredObject]:  # fmt: skip
    """Read a local Parquet file written by :func:`encode_parquet` into rows.

    JSON columns recorded in the file's metadata are decoded into Python values.

    Args:
        local_path: The file's path on the local disk.
        columns: Only these columns, of those the file has; ``None``: every column.
        as_text: JSON columns left as their JSON text (a reader decoding one row at a
            time holds the text, a tenth of the decoded value's memory).

    Returns:
        One dict per row, keys in column order.

    Raises:
        StoreError: The file is not a readable Parquet file.
    """
    con = new_connection()
    try:
        meta = con.execute(
            "SELECT key, value FROM parquet_kv_metadata(?)", [local_path]
        ).fetchall()
        chosen: list[str] | None = None
        if columns is not None:
            described = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [local_path]).fetchall()
            present = {row[0] for row in described}
            chosen = [name for name in columns if name in present]
        if chosen == []:  # none of the columns asked for: only the row count
            (count,) = con.execute("SELECT count(*) FROM read_parquet(?)", [local_path]).fetchone() or (0,)
            return [{} for _ in range(count)]
        selected = "*" if chosen is None else ", ".join(sql_ident(name) for name in chosen)
        cursor = con.execute(f"SELECT {selected} FROM read_parquet(?)", [local_path])
        names = [column[0] for column in cursor.description]
        records = cursor.fetchall()
    except duckdb.Error as error:
        raise StoreError(f"cannot read table: {one_line(error)}") from error
    finally:
        con.close()
    json_columns: set[str] = set()
    for key, value in meta:
        if bytes(key).decode("utf-8", "replace") == _META_JSON:
            text = bytes(value).decode("utf-8", "replace")
            json_columns = {name for name in text.split(",") if name}
    rows = [dict(zip(names, record, strict=True)) for record in records]
    for name in json_columns.intersection(names).difference(as_text):
        for row in rows:
            if row[name] is not None:
                row[name] = _json_value(row[name], name)
    return rows


def _json_value(text: str, column: str) -> Any:
    # json, not orjson: orjson reads an integer past 64 bits as a float.
    try:
        return json.loads(text)
    except ValueError as error:
        raise StoreError(f"column holds invalid JSON: {error}", field=column) from error
