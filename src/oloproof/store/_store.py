"""The results store: one interface over a local directory or any fsspec URL.

A store is addressed by a URL: a local path (the default, e.g.
``/abs/project/.oloproof/results``) or any fsspec URL such as
``s3://bucket/prefix`` or ``memory://x``. Credentials and endpoints come from
the environment (``AWS_*`` variables, read by s3fs itself) or from
``storage_options``; they are held in memory only and never written to the store.

Every object write is atomic: locally a temporary file in the same directory is
renamed over the target; on object stores a single put replaces the object. A
reader never sees a half-written file. All methods are safe to call from many
threads at once.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from collections.abc import Iterable
from typing import Any

import duckdb
import fsspec
from fsspec.core import split_protocol, url_to_fs
from fsspec.implementations.local import LocalFileSystem

from oloproof._exceptions import ConfigError, StoreError
from oloproof.store import _layout
from oloproof.store._errors import endpoint_of, guard, translate
from oloproof.store._schema import TableSchema, canonical_json
from oloproof.store._tables import decode_parquet, encode_parquet, one_line

__all__ = ["ResultsStore", "connect"]

_CACHED_LISTING_PROTOCOLS = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl"})


class ResultsStore:
    """A results store at a local path or fsspec URL.

    Args:
        url: A local path or an fsspec URL (``s3://bucket/prefix``, ``memory://x``).
        storage_options: Options for the fsspec filesystem (``endpoint_url``,
            ``key``, ``secret``, ``client_kwargs``, ``config_kwargs``, ...).
            They are never written into the store.

    Attributes:
        url: The URL the store was opened with.
        fs: The fsspec filesystem.
        root: The store's root path inside ``fs``.

    Raises:
        ConfigError: The URL names an unknown protocol or the options are invalid.
    """

    def __init__(self, url: str, storage_options: dict[str, Any] | None = None) -> None:
        if not isinstance(url, str) or not url.strip():
            raise ConfigError("the results store URL must be a non-empty string", path=str(url))
        options = dict(storage_options or {})
        protocol, _ = split_protocol(url)
        if protocol in _CACHED_LISTING_PROTOCOLS:
            # Other processes add objects at any time: never trust a cached listing.
            options.setdefault("use_listings_cache", False)
        try:
            fs, root = url_to_fs(url, skip_instance_cache=True, **options)
        except (ValueError, TypeError, ImportError) as error:
            raise ConfigError(
                f"cannot open the results store: {one_line(error)}", path=url
            ) from error
        self.url = url
        self.fs: fsspec.AbstractFileSystem = fs
        self.root: str = root.rstrip("/") or root
        self.is_local = isinstance(fs, LocalFileSystem)
        self._endpoint = None if self.is_local else endpoint_of(options)

    def __repr__(self) -> str:
        return f"ResultsStore({self.url!r})"

    # -- paths ------------------------------------------------------------

    def full_path(self, relpath: str) -> str:
        """The path inside :attr:`fs` of a path relative to the store root."""
        relpath = _layout.validate_relpath(relpath)
        if self.is_local:
            return os.path.join(self.root, *relpath.split("/"))
        return f"{self.root.rstrip('/')}/{relpath}"

    def url_for(self, relpath: str = "") -> str:
        """The URL of a path relative to the store root (the root itself for ``""``)."""
        if not relpath:
            return self.url
        return f"{self.url.rstrip('/')}/{_layout.validate_relpath(relpath)}"

    def _guard(self, action: str, relpath: str = "", missing_is_lookup: bool = True) -> Any:
        return guard(
            url=self.url_for(relpath),
            action=action,
            endpoint=self._endpoint,
            missing_is_lookup=missing_is_lookup,
        )

    # -- checks -----------------------------------------------------------

    def check_writable(self) -> None:
        """Check that the store can be written, before any work is done.

        Locally, the root must be (or be creatable as) a writable directory.
        On S3 the bucket must exist and the credentials must be accepted; the
        endpoint must answer.

        Raises:
            StoreError: One clear error naming the URL and what is wrong.
        """
        if self.is_local:
            self._check_local_writable()
            return
        protocol = self.fs.protocol if isinstance(self.fs.protocol, str) else self.fs.protocol[0]
        with self._guard("write to the results store", missing_is_lookup=False):
            if protocol in ("s3", "s3a"):
                bucket = self.root.split("/", 1)[0]
                if not bucket:
                    raise StoreError("the URL names no bucket", path=self.url)
                try:
                    self.fs.call_s3("head_bucket", Bucket=bucket)
                except FileNotFoundError as error:
                    raise StoreError(
                        f"cannot write to the results store: bucket {bucket!r} does not exist",
                        path=self.url,
                    ) from error
            else:
                try:
                    self.fs.ls(self.root, detail=False)
                except FileNotFoundError:
                    pass

    def _check_local_writable(self) -> None:
        path = self.root
        while not os.path.exists(path):
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
        if not os.path.isdir(path):
            raise StoreError(
                f"cannot write to the results store: {path} exists and is not a directory",
                path=self.url,
            )
        if not os.access(path, os.W_OK | os.X_OK):
            raise StoreError(
                f"cannot write to the results store: directory {path} is not writable",
                path=self.url,
            )

    # -- objects ----------------------------------------------------------

    def write_bytes(self, relpath: str, data: bytes, *, durable: bool = True) -> None:
        """Write an object atomically, replacing any previous version.

        Args:
            relpath: The path relative to the store root.
            data: The object's content.
            durable: Locally, flush it to disk before the rename (records that can be
                recomputed, such as stage caches, skip it: atomicity is enough).

        Raises:
            StoreError: The object cannot be written.
        """
        full = self.full_path(relpath)
        with self._guard("write", relpath, missing_is_lookup=False):
            if self.is_local:
                _atomic_local_write(full, bytes(data), durable=durable)
            else:
                self.fs.pipe_file(full, bytes(data))

    def read_bytes(self, relpath: str) -> bytes:
        """Read an object.

        Raises:
            NotFoundError: There is no such object.
            StoreError: The object cannot be read.
        """
        full = self.full_path(relpath)
        with self._guard("read", relpath):
            if self.is_local:
                with open(full, "rb") as handle:
                    return handle.read()
            return self.fs.cat_file(full)

    def exists(self, relpath: str) -> bool:
        """Whether an object (or directory) exists.

        Raises:
            StoreError: The store cannot be reached (unlike ``fs.exists``, which
                answers False).
        """
        full = self.full_path(relpath)
        if self.is_local:
            return os.path.exists(full)
        with self._guard("check", relpath, missing_is_lookup=False):
            try:
                self.fs.info(full)
            except FileNotFoundError:
                return False
            return True

    def list(self, prefix: str = "") -> list[str]:
        """List every object under a prefix, recursively.

        Args:
            prefix: A directory relative to the store root; ``""`` is the root.

        Returns:
            Sorted paths relative to the store root. Temporary files of writes
            in progress are left out.

        Raises:
            StoreError: The store cannot be listed (e.g. the bucket does not exist).
        """
        prefix = _layout.validate_relpath(prefix) if prefix.strip("/") else ""
        base = self.full_path(prefix) if prefix else self.root
        found: list[str] = []
        with self._guard("list", prefix, missing_is_lookup=False):
            if self.is_local:
                for directory, _, files in os.walk(base):
                    rel_dir = os.path.relpath(directory, self.root).replace(os.sep, "/")
                    for name in files:
                        if not _is_temporary(name):
                            found.append(name if rel_dir == "." else f"{rel_dir}/{name}")
            else:
                self.fs.invalidate_cache()
                strip = self.root.rstrip("/") + "/"
                for path in self.fs.find(base):
                    if path.startswith(strip) and not _is_temporary(path.rsplit("/", 1)[-1]):
                        found.append(path[len(strip) :])
        return sorted(found)

    def write_json(self, relpath: str, obj: Any) -> None:
        """Write a value as canonical UTF-8 JSON (sorted keys), atomically."""
        self.write_bytes(relpath, canonical_json(obj).encode("utf-8"))

    def read_json(self, relpath: str) -> Any:
        """Read a JSON object.

        Raises:
            NotFoundError: There is no such object.
            StoreError: It cannot be read or is not valid JSON.
        """
        return _parse_json(self.read_bytes(relpath), self.url_for(relpath))

    def read_many(self, relpaths: list[str]) -> dict[str, bytes]:
        """Read many objects at once (concurrently on object stores).

        Args:
            relpaths: Paths relative to the store root.

        Returns:
            The content of each object that exists, by relative path; missing
            objects are left out.

        Raises:
            StoreError: An object exists but cannot be read, or the store is unreachable.
        """
        wanted = {self.full_path(rel): _layout.validate_relpath(rel) for rel in relpaths}
        out: dict[str, bytes] = {}
        if not wanted:
            return out
        if self.is_local:
            for full, rel in wanted.items():
                try:
                    with open(full, "rb") as handle:
                        out[rel] = handle.read()
                except FileNotFoundError:
                    continue
                except OSError as error:
                    raise translate(error, url=self.url_for(rel), action="read") from error
            return out
        with self._guard("read", missing_is_lookup=False):
            results = self.fs.cat(list(wanted), on_error="return")
        if not isinstance(results, dict):  # a single path may come back bare
            results = {next(iter(wanted)): results}
        for full, value in results.items():
            rel = wanted.get(self.fs._strip_protocol(full), wanted.get(full))
            if rel is None:
                continue
            if isinstance(value, FileNotFoundError):
                continue
            if isinstance(value, BaseException):
                raise translate(
                    value, url=self.url_for(rel), action="read", endpoint=self._endpoint
                ) from value
            out[rel] = value
        return out

    # -- per-case stage records ------------------------------------------

    def get_record(self, stage: str, key: str) -> dict[str, Any] | None:
        """The cached record of one stage for one identity key, or None.

        Raises:
            StoreError: The record exists but cannot be read or is not an object.
        """
        relpath = _layout.cache_path(stage, key)
        found = self.read_many([relpath])
        if relpath not in found:
            return None
        return _record(found[relpath], self.url_for(relpath))

    def get_records(self, stage: str, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The cached records of one stage for many keys, fetched at once.

        Args:
            stage: The stage name.
            keys: Identity keys; duplicates are fine.

        Returns:
            The records found, by key; keys without a record are left out.
        """
        paths = {_layout.cache_path(stage, key): key for key in keys}
        found = self.read_many(list(paths))
        return {paths[rel]: _record(data, self.url_for(rel)) for rel, data in found.items()}

    def put_record(self, stage: str, key: str, record: dict[str, Any]) -> None:
        """Store the record of one stage for one identity key, atomically.

        Raises:
            StoreError: The record is not a JSON object or cannot be written.
        """
        relpath = _layout.cache_path(stage, key)
        if not isinstance(record, dict):
            raise StoreError(
                f"a stage record must be a dict, got {type(record).__name__}",
                path=self.url_for(relpath),
            )
        self.write_bytes(relpath, canonical_json(record).encode("utf-8"), durable=False)

    # -- tables -----------------------------------------------------------

    def write_table(self, relpath: str, rows: Iterable[dict[str, Any]], schema: TableSchema) -> None:
        """Write rows as a Parquet table, atomically.

        Args:
            relpath: The path relative to the store root, e.g. ``runs/<id>/cases.parquet``.
            rows: One mapping per row. Columns declared ``JSON`` take any
                JSON-serialisable value and are stored as JSON text.
            schema: The table's schema; zero rows still give a file with its columns.

        Raises:
            StoreError: A row does not fit the schema or the file cannot be written.
        """
        try:
            data = encode_parquet(rows, schema)
        except StoreError as error:
            raise StoreError(
                error.message, path=self.url_for(relpath), field=error.field
            ) from error
        self.write_bytes(relpath, data)

    def read_table(self, relpath: str) -> list[dict[str, Any]]:
        """Read a Parquet table written by :meth:`write_table`.

        Returns:
            One dict per row; JSON columns are decoded into Python values.

        Raises:
            NotFoundError: There is no such table.
            StoreError: It cannot be read.
        """
        try:
            if self.is_local:
                full = self.full_path(relpath)
                if not os.path.isfile(full):
                    raise translate(
                        FileNotFoundError(full), url=self.url_for(relpath), action="read"
                    )
                return decode_parquet(full)
            data = self.read_bytes(relpath)
            with tempfile.TemporaryDirectory(prefix="oloproof-read-") as tmp:
                local = os.path.join(tmp, "table.parquet")
                with open(local, "wb") as handle:
                    handle.write(data)
                return decode_parquet(local)
        except StoreError as error:
            if error.path is not None:
                raise
            raise StoreError(
                error.message, path=self.url_for(relpath), field=error.field
            ) from error

    # -- queries ----------------------------------------------------------

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with a view per table over the store.

        Views: ``runs``, ``cases``, ``retrievals``, ``generations``, ``judgments``,
        ``metrics``, ``diagnoses``, ``diagnosis_labels``, ``comparisons`` and
        ``decisions``. Only complete runs (and diagnoses, comparisons) appear;
        the set of files is fixed when the connection is made.

        Raises:
            StoreError: The store cannot be listed or read.
        """
        from oloproof.store._views import build_connection

        return build_connection(self)

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
        con = self.connect()
        try:
            cursor = con.execute(sql) if params is None else con.execute(sql, params)
            if cursor.description is None:
                return [], []
            names = [column[0] for column in cursor.description]
            return names, cursor.fetchall()
        except duckdb.Error as error:
            raise StoreError(one_line(error)) from error
        finally:
            con.close()


def connect(
    url: str, storage_options: dict[str, Any] | None = None
) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB connection with views over the results store at ``url``.

    Args:
        url: A local path or fsspec URL of a results store.
        storage_options: Options for the fsspec filesystem (never stored).

    Returns:
        An in-memory DuckDB connection; see :meth:`ResultsStore.connect`.
    """
    return ResultsStore(url, storage_options).connect()


def _is_temporary(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


def _atomic_local_write(full: str, data: bytes, *, durable: bool = True) -> None:
    directory, name = os.path.split(full)
    os.makedirs(directory, exist_ok=True)
    temporary = os.path.join(directory, f".{name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, full)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _parse_json(data: bytes, url: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise StoreError(f"invalid JSON: {one_line(error)}", path=url) from error


def _record(data: bytes, url: str) -> dict[str, Any]:
    value = _parse_json(data, url)
    if not isinstance(value, dict):
        raise StoreError(
            f"a stage record must be a JSON object, got {type(value).__name__}", path=url
        )
    return value
