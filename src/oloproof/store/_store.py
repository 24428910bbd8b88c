"""The results store: one interface over a local directory or any fsspec URL.

:class:`ResultsStore` composes the store's parts, each in its own module:

- :class:`~oloproof.store._location.StoreLocation`: URL, filesystem, paths, checks;
- :class:`~oloproof.store._objects.ObjectStore`: atomic bytes and JSON I/O, listings;
- :class:`~oloproof.store._records.RecordCache`: stage records, packed per batch;
- :class:`~oloproof.store._tables.TableStore`: Parquet tables;
- :class:`~oloproof.store._queries.Queries`: SQL over the DuckDB views.

Callers that need one part only may use it directly; everything else goes
through the facade, whose methods are the parts' own.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import duckdb
import fsspec

from oloproof.records import StoredObject
from oloproof.store._location import StorageOptions, StoreLocation
from oloproof.store._objects import ObjectStore
from oloproof.store._queries import Queries, QueryParameters
from oloproof.store._records import RecordCache
from oloproof.store._schema import TableSchema
from oloproof.store._tables import TableStore

__all__ = ["ResultsStore"]


class ResultsStore:
    """A results store at a local path or fsspec URL.

    Every write is atomic and every method is safe to call from many threads
    at once.

    Args:
        url: A local path or an fsspec URL; see :class:`StoreLocation`.
        storage_options: Options for the fsspec filesystem, held in memory only.

    Attributes:
        url: The URL the store was opened with.
        fs: The fsspec filesystem.
        root: The store's root path inside ``fs``.
        is_local: Whether ``fs`` is the local filesystem.
        location: Where the store is.
        objects: Its objects.
        records: Its stage-record cache.
        tables: Its Parquet tables.
        queries: SQL over its views.

    Raises:
        ConfigError: The URL names an unknown protocol or the options are invalid.
    """

    def __init__(self, url: str, storage_options: StorageOptions | None = None) -> None:
        self.location = StoreLocation(url, storage_options)
        self.objects = ObjectStore(self.location)
        self.records = RecordCache(self.objects)
        self.tables = TableStore(self.objects)
        self.queries = Queries(self.objects)

    def __repr__(self) -> str:
        return f"ResultsStore({self.url!r})"

    @property
    def url(self) -> str:
        """The URL the store was opened with."""
        return self.location.url

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        """The fsspec filesystem."""
        return self.location.fs

    @property
    def root(self) -> str:
        """The store's root path inside :attr:`fs`."""
        return self.location.root

    @property
    def is_local(self) -> bool:
        """Whether :attr:`fs` is the local filesystem."""
        return self.location.is_local

    # -- location: see StoreLocation --------------------------------------

    def full_path(self, relpath: str) -> str:
        """The path inside :attr:`fs` of a path relative to the store root."""
        return self.location.full_path(relpath)

    def url_for(self, relpath: str = "") -> str:
        """The URL of a path relative to the store root (the root itself for ``""``)."""
        return self.location.url_for(relpath)

    def check_writable(self) -> None:
        """Check that the store can be written; see :meth:`StoreLocation.check_writable`."""
        self.location.check_writable()

    # -- objects: see ObjectStore -----------------------------------------

    def write_bytes(self, relpath: str, data: bytes, *, durable: bool = True) -> None:
        """Write an object atomically; see :meth:`ObjectStore.write_bytes`."""
        self.objects.write_bytes(relpath, data, durable=durable)

    def read_bytes(self, relpath: str) -> bytes:
        """Read an object; see :meth:`ObjectStore.read_bytes`."""
        return self.objects.read_bytes(relpath)

    def read_many(self, relpaths: list[str]) -> dict[str, bytes]:
        """Read the objects that exist of many; see :meth:`ObjectStore.read_many`."""
        return self.objects.read_many(relpaths)

    def exists(self, relpath: str) -> bool:
        """Whether an object exists; see :meth:`ObjectStore.exists`."""
        return self.objects.exists(relpath)

    def list_paths(self, prefix: str = "") -> list[str]:
        """Every object under a prefix; see :meth:`ObjectStore.list_paths`."""
        return self.objects.list_paths(prefix)

    def write_json(self, relpath: str, value: Any, *, durable: bool = True) -> None:
        """Write a value as canonical JSON; see :meth:`ObjectStore.write_json`."""
        self.objects.write_json(relpath, value, durable=durable)

    def read_json(self, relpath: str) -> Any:
        """Read a JSON object; see :meth:`ObjectStore.read_json`."""
        return self.objects.read_json(relpath)

    # -- stage records: see RecordCache -----------------------------------

    def get_record(self, stage: str, key: str) -> StoredObject | None:
        """One cached stage record, or None; see :meth:`RecordCache.get_record`."""
        return self.records.get_record(stage, key)

    def get_records(self, stage: str, keys: list[str]) -> dict[str, StoredObject]:
        """Many cached stage records at once; see :meth:`RecordCache.get_records`."""
        return self.records.get_records(stage, keys)

    def put_record(self, stage: str, key: str, record: StoredObject) -> None:
        """Store one stage record alone; see :meth:`RecordCache.put_record`."""
        self.records.put_record(stage, key, record)

    def put_records(self, stage: str, records: dict[str, StoredObject]) -> None:
        """Store stage records together, as one pack; see :meth:`RecordCache.put_records`."""
        self.records.put_records(stage, records)

    def remove_records(self, stage: str, keys: list[str]) -> None:
        """Forget stage records; see :meth:`RecordCache.remove_records`."""
        self.records.remove_records(stage, keys)

    def record_keys(self, stage: str) -> set[str]:
        """Every key with a record of a stage; see :meth:`RecordCache.keys`."""
        return self.records.keys(stage)

    # -- tables: see TableStore -------------------------------------------

    def write_table(
        self, relpath: str, rows: Iterable[Mapping[str, Any]], schema: TableSchema
    ) -> None:
        """Write rows as a Parquet table; see :meth:`TableStore.write_table`."""
        self.tables.write_table(relpath, rows, schema)

    def write_table_chunks(self, relpath: str, chunks: Iterable[bytes], schema: TableSchema) -> None:
        """Write encoded chunks as one Parquet table; see :meth:`TableStore.write_table_chunks`."""
        self.tables.write_table_chunks(relpath, chunks, schema)

    def read_table(self, relpath: str, columns: Sequence[str] | None = None,
                   as_text: Collection[str] = ()) -> list[StoredObject]:  # fmt: skip
        """Read a Parquet table (``columns``: only those; ``as_text``: JSON columns left as
        text); see :meth:`TableStore.read_table`."""
        return self.tables.read_table(relpath, columns, as_text)

    # -- queries: see Queries ---------------------------------------------

    def connect(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with the store's views; see :meth:`Queries.connect`."""
        return self.queries.connect()

    def query(
        self, sql: str, params: QueryParameters | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one SQL statement over the views; see :meth:`Queries.query`."""
        return self.queries.query(sql, params)
