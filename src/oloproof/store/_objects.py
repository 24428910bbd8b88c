"""Object I/O over fsspec: bytes and JSON, written atomically, read and listed.

Every object write is atomic: locally a temporary file in the same directory is
renamed over the target; on object stores a single put replaces the object. A
reader never sees a half-written file. Every method is safe to call from many
threads at once.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import dataclass
from typing import Any

from oloproof._exceptions import StoreError
from oloproof._json import canonical_json
from oloproof.store._errors import one_line, translate
from oloproof.store._layout import validate_relpath
from oloproof.store._location import StoreLocation

__all__ = ["ObjectStore", "parse_json"]


@dataclass(frozen=True)
class ObjectStore:
    """Objects addressed by paths relative to a store's root.

    Attributes:
        location: Where the store is.
    """

    location: StoreLocation

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
        where = self.location
        full = where.full_path(relpath)
        with where.guard("write", relpath, missing_is_lookup=False):
            if where.is_local:
                _atomic_local_write(full, bytes(data), durable=durable)
            else:
                where.fs.pipe_file(full, bytes(data))

    def read_bytes(self, relpath: str) -> bytes:
        """Read an object.

        Raises:
            NotFoundError: There is no such object.
            StoreError: The object cannot be read.
        """
        where = self.location
        full = where.full_path(relpath)
        with where.guard("read", relpath):
            if where.is_local:
                with open(full, "rb") as handle:
                    return handle.read()
            return where.fs.cat_file(full)

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
        where = self.location
        wanted = {where.full_path(rel): validate_relpath(rel) for rel in relpaths}
        if not wanted:
            return {}
        if where.is_local:
            return _read_local(wanted, where)
        fulls = list(wanted)
        with where.guard("read", missing_is_lookup=False):
            # One GET per object, concurrently. ``fs.cat`` would first expand the
            # paths, and s3fs sizes an object before a GET it may split: either way a
            # HEAD for each, and a LIST for each missing one (every cache miss).
            whole = {"max_concurrency": 1} if where.is_s3 else {}
            results = where.fs.cat_ranges(fulls, None, None, on_error="return", **whole)
        out: dict[str, bytes] = {}
        for full, value in zip(fulls, results, strict=True):
            rel = wanted[full]
            if isinstance(value, FileNotFoundError):
                continue
            if isinstance(value, BaseException):
                raise translate(
                    value, url=where.url_for(rel), action="read", endpoint=where.endpoint
                ) from value
            out[rel] = value
        return out

    def exists(self, relpath: str) -> bool:
        """Whether an object (or directory) exists.

        Raises:
            StoreError: The store cannot be reached (unlike ``fs.exists``, which
                answers False).
        """
        where = self.location
        full = where.full_path(relpath)
        if where.is_local:
            return os.path.exists(full)
        with where.guard("check", relpath, missing_is_lookup=False):
            try:
                where.fs.info(full)
            except FileNotFoundError:
                return False
            return True

    def list_paths(self, prefix: str = "") -> list[str]:
        """List every object under a prefix, recursively.

        Args:
            prefix: A directory relative to the store root; ``""`` is the root.

        Returns:
            Sorted paths relative to the store root. Temporary files of writes
            in progress are left out.

        Raises:
            StoreError: The store cannot be listed (e.g. the bucket does not exist).
        """
        where = self.location
        prefix = validate_relpath(prefix) if prefix.strip("/") else ""
        base = where.full_path(prefix) if prefix else where.root
        with where.guard("list", prefix, missing_is_lookup=False):
            found = _walk_local(where.root, base) if where.is_local else _find(where, base)
        return sorted(found)

    def list_children(self, prefix: str) -> list[str]:
        """The names directly under a directory (objects and sub-directories), one level.

        Returns:
            Sorted names; ``[]`` when there is no such directory. Temporary files of
            writes in progress are left out.

        Raises:
            StoreError: The store cannot be listed.
        """
        where = self.location
        full = where.full_path(validate_relpath(prefix))
        with where.guard("list", prefix, missing_is_lookup=False):
            if where.is_local:
                try:
                    names = os.listdir(full)
                except (FileNotFoundError, NotADirectoryError):
                    return []
            else:
                where.fs.invalidate_cache(full)
                try:
                    names = [path.rstrip("/").rsplit("/", 1)[-1] for path in where.fs.ls(full, detail=False)]
                except FileNotFoundError:
                    return []
        return sorted(name for name in names if not _is_temporary(name))

    def remove_many(self, relpaths: list[str]) -> None:
        """Remove objects; those already gone are fine.

        Raises:
            StoreError: The store refused.
        """
        where = self.location
        fulls = [where.full_path(validate_relpath(rel)) for rel in relpaths]
        if not fulls:
            return
        with where.guard("remove", relpaths[0], missing_is_lookup=False):
            if where.is_local:
                for full in fulls:
                    try:
                        os.unlink(full)
                    except FileNotFoundError:
                        pass
            else:
                try:
                    where.fs.rm(fulls)
                except FileNotFoundError:
                    pass

    def modified(self, relpath: str) -> float | None:
        """When an object was last written (POSIX seconds), if the store says."""
        where = self.location
        full = where.full_path(relpath)
        if where.is_local:
            return os.path.getmtime(full)
        with where.guard("check", relpath, missing_is_lookup=False):
            info = where.fs.info(full)
        stamp = info.get("LastModified") or info.get("mtime") or info.get("last_modified")
        return stamp.timestamp() if hasattr(stamp, "timestamp") else (float(stamp) if stamp else None)

    def remove_tree(self, relpath: str) -> None:
        """Remove a directory (prefix) and everything in it.

        Raises:
            StoreError: The store refused.
        """
        where = self.location
        full = where.full_path(validate_relpath(relpath))
        with where.guard("remove", relpath, missing_is_lookup=False):
            if where.is_local:
                shutil.rmtree(full, ignore_errors=False)
            else:
                where.fs.rm(full, recursive=True)

    def write_json(self, relpath: str, value: Any, *, durable: bool = True) -> None:
        """Write a value as canonical UTF-8 JSON (sorted keys), atomically.

        Args:
            relpath: The path relative to the store root.
            value: Any JSON-serialisable value.
            durable: See :meth:`write_bytes`.

        Raises:
            StoreError: The value is not JSON-serialisable or cannot be written.
        """
        self.write_bytes(relpath, canonical_json(value).encode("utf-8"), durable=durable)

    def read_json(self, relpath: str) -> Any:
        """Read a JSON object.

        Raises:
            NotFoundError: There is no such object.
            StoreError: It cannot be read or is not valid JSON.
        """
        return parse_json(self.read_bytes(relpath), self.location.url_for(relpath))


def parse_json(data: bytes, url: str, *, what: str = "JSON") -> Any:
    """Decode the UTF-8 JSON content of an object.

    Args:
        data: The object's content.
        url: The object's URL, named in the error.
        what: What the content is, as the error names it (``"invalid <what>"``).

    Raises:
        StoreError: The content is not valid UTF-8 JSON.
    """
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise StoreError(f"invalid {what}: {one_line(error)}", path=url) from error


def _read_local(wanted: dict[str, str], where: StoreLocation) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for full, rel in wanted.items():
        try:
            with open(full, "rb") as handle:
                out[rel] = handle.read()
        except FileNotFoundError:
            continue
        except OSError as error:
            raise translate(error, url=where.url_for(rel), action="read") from error
    return out


def _walk_local(root: str, base: str) -> list[str]:
    found = []
    for directory, _, files in os.walk(base):
        rel_dir = os.path.relpath(directory, root).replace(os.sep, "/")
        for name in files:
            if not _is_temporary(name):
                found.append(name if rel_dir == "." else f"{rel_dir}/{name}")
    return found


def _find(where: StoreLocation, base: str) -> list[str]:
    # Objects written by other processes must show, whatever fsspec has cached.
    where.fs.invalidate_cache()
    strip = where.root.rstrip("/") + "/"
    return [
        path[len(strip) :]
        for path in where.fs.find(base)
        if path.startswith(strip) and not _is_temporary(path.rsplit("/", 1)[-1])
    ]


def _is_temporary(name: str) -> bool:
    # The temporary files of _atomic_local_write.
    return name.startswith(".") and name.endswith(".tmp")


def _atomic_local_write(full: str, data: bytes, *, durable: bool = True) -> None:
    # A temporary file in the target's own directory, so that the rename never
    # crosses filesystems and stays atomic.
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
