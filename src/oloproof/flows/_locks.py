"""Locks that let one writer at a time compute and record a batch under its key.

Runs that compute the same batch at once (a sweep's settings, two runs on one
store) would each write Prefect's result record for it. Prefect writes a local
record in place, so one run could read a record that another is rewriting and
find it empty. Under Prefect's ``SERIALIZABLE`` isolation a batch task holds its
key's lock from its cache lookup to its commit: the first run computes and
records the batch, the others wait and then replay it.

The locks are ``flock`` locks on one file per key. The kernel drops them when
their holder's process ends, so a killed run never leaves a lock behind for its
resume to wait on; the holder removes the file before unlocking it, and an
acquirer that finds its locked file removed tries again.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["KeyLocks"]

_POLL_SECONDS = 0.05
"""How often a wait with a timeout tries the lock again."""


class KeyLocks:
    """Prefect's ``LockManager`` over ``flock`` files in one directory.

    Locks exclude each other across threads (each acquire opens its own file
    description) and across processes on this machine. Pickles as its
    directory alone, so it travels with a task to a Dask worker.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._held: dict[str, tuple[str, int]] = {}
        self._guard = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"directory": self.directory}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["directory"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"KeyLocks({str(self.directory)!r})"

    def path_for(self, key: str) -> Path:
        """The lock file of ``key`` (hashed: a key may hold any character)."""
        return self.directory / (hashlib.sha256(key.encode()).hexdigest()[:40] + ".lock")

    def acquire_lock(
        self, key: str, holder: str, acquire_timeout: float | None = None, hold_timeout: float | None = None
    ) -> bool:
        """Lock ``key`` for ``holder``; False when ``acquire_timeout`` passes first.

        ``hold_timeout`` is not supported: a lock lasts until released or until
        its process ends, which is what frees a crashed run's locks.
        """
        if self.is_lock_holder(key, holder):
            return True
        path = self.path_for(key)
        self.directory.mkdir(parents=True, exist_ok=True)
        deadline = None if acquire_timeout is None else time.monotonic() + acquire_timeout
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            if not _flock(fd, fcntl.LOCK_EX, deadline):
                os.close(fd)
                return False
            if _is_current(fd, path):
                with self._guard:
                    self._held[key] = (holder, fd)
                return True
            os.close(fd)  # its holder removed it while we waited: lock the new file

    async def aacquire_lock(
        self, key: str, holder: str, acquire_timeout: float | None = None, hold_timeout: float | None = None
    ) -> bool:
        """`acquire_lock` off the event loop."""
        return await asyncio.to_thread(self.acquire_lock, key, holder, acquire_timeout, hold_timeout)

    def release_lock(self, key: str, holder: str) -> None:
        """Release ``holder``'s lock on ``key``.

        Raises:
            ValueError: ``holder`` does not hold it.
        """
        with self._guard:
            held = self._held.get(key)
            if held is None or held[0] != holder:
                raise ValueError(f"No lock held by {holder} on {key}")
            del self._held[key]
        # Removed before unlocking, so a waiter that then gets the old file sees it is gone.
        self.path_for(key).unlink(missing_ok=True)
        os.close(held[1])

    def is_locked(self, key: str) -> bool:
        """Whether anyone (this process included) holds ``key``'s lock."""
        try:
            fd = os.open(self.path_for(key), os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def is_lock_holder(self, key: str, holder: str) -> bool:
        """Whether ``holder`` holds ``key``'s lock here."""
        with self._guard:
            held = self._held.get(key)
        return held is not None and held[0] == holder

    def wait_for_lock(self, key: str, timeout: float | None = None) -> bool:
        """Wait until ``key`` is not locked; False when ``timeout`` passes first."""
        try:
            fd = os.open(self.path_for(key), os.O_RDONLY)
        except FileNotFoundError:
            return True
        try:
            return _flock(fd, fcntl.LOCK_SH, None if timeout is None else time.monotonic() + timeout)
        finally:
            os.close(fd)

    async def await_for_lock(self, key: str, timeout: float | None = None) -> bool:
        """`wait_for_lock` off the event loop."""
        return await asyncio.to_thread(self.wait_for_lock, key, timeout)


def _flock(fd: int, operation: int, deadline: float | None) -> bool:
    """``flock(fd, operation)``, blocking until ``deadline`` (None: for as long as it takes)."""
    if deadline is None:
        fcntl.flock(fd, operation)
        return True
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_SECONDS)


def _is_current(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (not removed by its last holder)."""
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False
