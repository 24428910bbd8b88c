"""A run folder's lease: held by the run that writes ``runs/<id>/``, checked before it is removed.

A folder without ``run.json`` is either a run still writing or one that died;
its age alone cannot tell which. So a run holds a lease on its folder for as long
as it writes there, and a folder is removed only when nobody holds it:

- On a local store the lease is an advisory lock (``flock``) on ``runs/<id>/.lease``.
  The remover takes the same lock without waiting and removes the folder while
  holding it, so a live writer is never removed, and a writer killed in any way
  lets go of the lock with its process.
- An object store has no locks: the run writes ``runs/<id>/.lease`` naming itself
  (``host:pid``) and rewrites it every :data:`HEARTBEAT_S`; a folder is left alone
  while its lease is younger than its ``ttl_s``. Nothing on an object store can
  delete a prefix only if an object is unchanged, so a run that starts writing a
  folder the very moment it is removed may lose what it wrote then; on a local
  store it cannot.
"""

from __future__ import annotations

import errno
import logging
import math
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from oloproof._exceptions import StoreError
from oloproof.store._layout import run_dir
from oloproof.store._objects import ObjectStore, parse_json
from oloproof.store._store import ResultsStore

__all__ = ["HEARTBEAT_S", "LEASE_FILE", "LEASE_TTL_S", "lease_is_fresh", "local_claim", "owner", "run_lease"]

_log = logging.getLogger("oloproof.store")

LEASE_FILE = ".lease"
"""The lease of a run folder, ``runs/<id>/.lease``."""
LEASE_TTL_S = 600.0
"""How long an object-store lease holds without being renewed."""
HEARTBEAT_S = 60.0
"""How often a run renews its object-store lease: well inside :data:`LEASE_TTL_S`."""
ACQUIRE_S = 60.0
"""How long a run waits for its folder's lock; a remover holds it only while it decides and deletes."""

_NO_LOCKS = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EINVAL})
"""What ``flock`` answers on a filesystem without advisory locks."""


def owner() -> str:
    """Who holds a lease: ``<host>:<pid>``."""
    return f"{socket.gethostname()}:{os.getpid()}"


@contextmanager
def run_lease(store: ResultsStore, run_id: str) -> Iterator[None]:
    """Hold the lease of ``runs/<run_id>/`` while the block writes it.

    Enter it before the first file of the run folder is written and leave it after
    ``run.json``; ``oloproof runs --incomplete --remove`` never removes the folder
    meanwhile. The lease is let go of (and its file removed) when the block ends.

    Args:
        store: The store the run writes.
        run_id: The run whose folder the block writes.

    Raises:
        StoreError: The lease cannot be written, or another process held the
            folder's lock for :data:`ACQUIRE_S`.
    """
    folder = run_dir(run_id)
    if store.is_local:
        with _held_lock(store.objects, folder):
            yield
    else:
        with _renewed_lease(store.objects, folder):
            yield


@contextmanager
def _held_lock(objects: ObjectStore, folder: str) -> Iterator[None]:
    where = objects.location
    path = where.full_path(f"{folder}/{LEASE_FILE}")
    deadline = time.monotonic() + ACQUIRE_S
    with where.guard("lock", folder, missing_is_lookup=False):
        while True:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = _open(path, create=True)
            if fd is not None:
                locked = _lock(fd)
                if locked is None:  # no locks here: nor can a remover take the folder from under the run
                    break
                if locked and _is_at(fd, path):
                    break
                # Held (by a remover deciding), or its folder was removed while this waited.
                os.close(fd)
            if time.monotonic() > deadline:
                raise StoreError(f"another process has held the lock {LEASE_FILE} for {ACQUIRE_S:g} s",
                                 path=where.url_for(folder))  # fmt: skip
            time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, f"{owner()}\n".encode())
    try:
        yield
    finally:
        try:
            if _is_at(fd, path):
                os.unlink(path)  # under the lock: whoever opened it finds it gone and starts again
        except OSError:
            pass
        os.close(fd)


@contextmanager
def local_claim(objects: ObjectStore, folder: str) -> Iterator[tuple[bool, bool]]:
    """Take a local folder's lock without waiting, for as long as the block decides and removes.

    Yields:
        ``(claimed, created)``: whether the lock is held (False: a live run holds it,
        or the folder is gone), and whether this made the lease file (whose time
        then says nothing of the run).

    Raises:
        StoreError: The filesystem has no advisory locks, or the folder cannot be read.
    """
    where = objects.location
    path = where.full_path(f"{folder}/{LEASE_FILE}")
    with where.guard("lock", folder, missing_is_lookup=False):
        fd, created = _claim(path)
    if fd is None:
        yield False, False
        return
    try:
        yield True, created
    finally:
        os.close(fd)


def _claim(path: str) -> tuple[int | None, bool]:
    """The lease file at ``path`` locked, and whether this made it; None if held or gone."""
    for _ in range(20):  # each turn loses only to a writer that starts or ends at that moment
        fd, created = _open(path, create=True, exclusive=True), True
        if fd is None:
            if not os.path.isdir(os.path.dirname(path)):
                return None, False  # the folder is gone
            fd, created = _open(path, create=False), False
            if fd is None:
                continue
        locked = _lock(fd)
        if locked and _is_at(fd, path):
            return fd, created
        os.close(fd)
        if locked is None:
            raise StoreError("cannot lock the run folder: its filesystem has no advisory locks; "
                             "remove it by hand once no run writes it", path=os.path.dirname(path))  # fmt: skip
        if not locked:
            return None, False
    return None, False


def _open(path: str, *, create: bool, exclusive: bool = False) -> int | None:
    """Open the lease file; None if it (or, creating it, its folder) is not there, or it exists."""
    flags = os.O_RDWR | (os.O_CREAT if create else 0) | (os.O_EXCL if exclusive else 0)
    try:
        return os.open(path, flags, 0o644)
    except (FileNotFoundError, FileExistsError):
        return None


def lease_is_fresh(objects: ObjectStore, folder: str, now: float) -> bool:
    """Whether an object-store folder's lease is held: written less than its ``ttl_s`` ago.

    Raises:
        StoreError: The lease cannot be read.
    """
    relpath = f"{folder}/{LEASE_FILE}"
    found = objects.read_many([relpath])
    if relpath not in found:
        return False
    try:
        lease = parse_json(found[relpath], objects.location.url_for(relpath), what="lease JSON")
    except StoreError:
        return True  # a lease half understood is still a lease: keep the folder
    if not isinstance(lease, dict):
        return True
    ttl = _seconds(lease.get("ttl_s"))
    written = objects.modified(relpath) or _seconds(lease.get("renewed_at"))
    return written is None or now - written < (LEASE_TTL_S if ttl is None else ttl)


@contextmanager
def _renewed_lease(objects: ObjectStore, folder: str) -> Iterator[None]:
    relpath = f"{folder}/{LEASE_FILE}"
    who = owner()

    def renew() -> None:
        objects.write_json(relpath, {"owner": who, "ttl_s": LEASE_TTL_S, "renewed_at": time.time()})

    renew()
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            try:
                renew()
            except StoreError as error:  # the next beat tries again; the run goes on
                _log.warning("could not renew the lease %s: %s", objects.location.url_for(relpath), error)

    heart = threading.Thread(target=beat, name="oloproof-run-lease", daemon=True)
    heart.start()
    try:
        yield
    finally:
        stop.set()
        heart.join()
        where = objects.location
        try:
            with where.guard("remove", relpath, missing_is_lookup=False):
                where.fs.rm_file(where.full_path(relpath))
        except StoreError as error:  # it expires by itself
            _log.warning("could not remove the lease %s: %s", where.url_for(relpath), error)


def _lock(fd: int) -> bool | None:
    """Take an exclusive lock without waiting: True, False if held, None if the filesystem has none."""
    if sys.platform == "win32":  # no flock: as a filesystem without locks
        return None
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as error:
        if error.errno in _NO_LOCKS:
            return None
        raise
    return True


def _is_at(fd: int, path: str) -> bool:
    """Whether ``fd`` is still the file at ``path`` (a remover may have removed it since it was opened)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def _seconds(value: Any) -> float | None:
    """A lease's number of seconds, None unless it is a finite number of at least 0."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return None
