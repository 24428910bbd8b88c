"""The files of a local store that its readers may open: never one that leaves the store.

A store is a folder anyone with write access to it can plant links in. DuckDB
refuses to read through a link whose target is outside its allowed folders, but
manifests are read here, in Python, and a listing that followed such a link
would hand DuckDB a path it then refuses, failing every query. So entries are
listed without following a link out of the store's real path, and a manifest
is checked once it is open, against what its path resolves to then, so a link
swapped in between the listing and the read is refused as well.
"""

from __future__ import annotations

import os
import stat

from oloproof._exceptions import StoreError
from oloproof.store._location import StoreLocation

__all__ = ["is_own_folder", "list_entries", "read_inside"]

_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)


def list_entries(
    where: StoreLocation, container: str, *, links: bool = True, temporaries: bool = False
) -> dict[str, set[str]]:
    """The files directly inside each ``<container>/<id>/`` folder of a local store.

    Args:
        where: A local store.
        container: A top-level folder of the store, e.g. ``runs``.
        links: Whether to follow links whose target is inside the store; links that
            leave it are never followed. A caller that removes folders passes False.
        temporaries: Whether to list the temporary files of writes in progress.

    Returns:
        The file names by entry name; entries without files, temporary files
        (unless asked for) and anything but regular files are left out.

    Raises:
        StoreError: A folder cannot be read.
    """
    top = os.path.realpath(where.root)
    base = os.path.join(where.root, container)
    out: dict[str, set[str]] = {}
    with where.guard("list", container, missing_is_lookup=False):
        if not _resolves_inside(base, top, folder=True):  # a top-level folder may be a link inside the store
            return out
        for entry in _scan(base):
            if not _entry_inside(entry, top, folder=True, links=links):
                continue
            files = {
                item.name
                for item in _scan(entry.path)
                if (temporaries or not _is_temporary(item.name))
                and _entry_inside(item, top, folder=False, links=links)
            }
            if files:
                out[entry.name] = files
    return out


def is_own_folder(where: StoreLocation, relpath: str) -> bool:
    """Whether a local store's folder is its own: not a link, and inside the store's real path."""
    full = where.full_path(relpath)
    return not os.path.islink(full) and _resolves_inside(full, os.path.realpath(where.root), folder=True)


def read_inside(where: StoreLocation, relpaths: list[str]) -> dict[str, bytes]:
    """Read the regular files of a local store that exist, refusing any outside it.

    Returns:
        The content of each file that exists, by relative path.

    Raises:
        StoreError: A path leads out of the store or to something that is not a
            regular file, or a file cannot be read.
    """
    top = os.path.realpath(where.root)
    out: dict[str, bytes] = {}
    for relpath in relpaths:
        with where.guard("read", relpath, missing_is_lookup=False):
            data = _read_one(where.full_path(relpath), top)
        if data is None:
            continue
        if isinstance(data, str):
            raise StoreError(data, path=where.url_for(relpath))
        out[relpath] = data
    return out


def _read_one(full: str, top: str) -> bytes | str | None:
    """The file's content, None when it is gone, or why it is refused."""
    try:
        # Non-blocking: a FIFO planted in place of a file must not hang the reader.
        fd = os.open(full, os.O_RDONLY | _NONBLOCK)
    except FileNotFoundError:
        return None
    try:
        opened = os.fstat(fd)
        real = os.path.realpath(full)
        try:
            resolved = os.stat(real)
        except FileNotFoundError:
            resolved = None
        # What was opened must be what the path resolves to now, inside the store.
        if not (_within(real, top) and resolved is not None and os.path.samestat(opened, resolved)):
            return "refused: the path leads out of the store"
        if not stat.S_ISREG(opened.st_mode):
            return "refused: not a regular file"
        if _NONBLOCK:
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def _scan(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except (FileNotFoundError, NotADirectoryError):  # removed since it was listed
        return []


def _entry_inside(entry: os.DirEntry[str], top: str, *, folder: bool, links: bool) -> bool:
    """Whether a listed entry is a folder (or a regular file), inside the store if it is a link."""
    if not entry.is_symlink():  # the folders above it are the store's own: it is inside
        # The directory listing already says which kind it is: no call per entry.
        return entry.is_dir(follow_symlinks=False) if folder else entry.is_file(follow_symlinks=False)
    return links and _resolves_inside(entry.path, top, folder=folder)


def _resolves_inside(path: str, top: str, *, folder: bool) -> bool:
    """Whether ``path`` resolves inside ``top`` to a folder (or a regular file)."""
    real = os.path.realpath(path)
    try:
        mode = os.stat(real).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    return _within(real, top) and (stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode))


def _within(real: str, top: str) -> bool:
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _is_temporary(name: str) -> bool:
    # The temporary files of the store's atomic writes (see ObjectStore).
    return name.startswith(".") and name.endswith(".tmp")
