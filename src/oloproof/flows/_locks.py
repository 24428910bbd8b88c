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
acquirer that finds its locked file removed tries again. A wait stops when the
waiting run is stopped (Ctrl-C, SIGTERM, a failing setting of its sweep).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oloproof._exceptions import RunStoppedError
from oloproof.tasks._cached import run_logger

__all__ = ["KeyLocks"]

_POLL_SECONDS = 0.02
"""How often a waiter tries a held lock again (and looks whether its run was stopped)."""

_FILE_MODE = 0o666
"""Lock files as Prefect's own records are made (less the umask): a store that a
group shares stays lockable by all of it."""


class KeyLocks:
    """Prefect's ``LockManager`` over ``flock`` files in one directory.

    Locks exclude each other across threads (each acquire opens its own file
    description) and across processes on this machine. A directory that cannot
    hold lock files (say a file stands in its place) leaves the records unlocked,
    as they were before locks, and says so once in the run's log.

    Pickles as its directory alone, so it travels with a task to a Dask worker,
    whose waits end with the worker.
    """

    directory: Path
    _stopped: Callable[[], bool] | None
    _held: dict[str, tuple[str, int | None]]
    _guard: threading.Lock
    _warned: bool

    def __init__(self, directory: Path, stopped: Callable[[], bool] | None = None) -> None:
        """Locks in ``directory``; a wait raises `RunStoppedError` once ``stopped()`` is true."""
        self.directory = directory
        self._stopped = stopped
        self._fresh()

    def _fresh(self) -> None:
        self._held = {}
        self._guard = threading.Lock()
        self._warned = False

    def __getstate__(self) -> dict[str, Any]:
        return {"directory": self.directory}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.directory = state["directory"]
        self._stopped = None
        self._fresh()

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

        Raises:
            RunStoppedError: The run waiting for the lock was stopped.
        """
        if self.is_lock_holder(key, holder):
            return True
        deadline = None if acquire_timeout is None else time.monotonic() + acquire_timeout
        while True:
            fd = self._open_for_lock(key)
            if fd is None:  # no lock file can be made: unlocked, as said in the log
                return self._hold(key, holder, None)
            try:
                if not self._flock(fd, fcntl.LOCK_EX, deadline, key):
                    os.close(fd)
                    return False
            except BaseException:
                os.close(fd)
                raise
            if _is_current(fd, self.path_for(key)):
                return self._hold(key, holder, fd)
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
        if held[1] is not None:
            # Removed before unlocking, so a waiter that then gets the old file sees it is
            # gone (a file this user may not remove stays: its waiters find it current).
            with contextlib.suppress(OSError):
                self.path_for(key).unlink()
            os.close(held[1])

    def is_locked(self, key: str) -> bool:
        """Whether anyone (this process included) holds ``key``'s lock."""
        fd = self._open_existing(key)
        if fd is None:
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
        """Wait until ``key`` is not locked; False when ``timeout`` passes first.

        Raises:
            RunStoppedError: The run waiting for the lock was stopped.
        """
        fd = self._open_existing(key)
        if fd is None:
            return True
        try:
            return self._flock(fd, fcntl.LOCK_SH, None if timeout is None else time.monotonic() + timeout, key)
        finally:
            os.close(fd)

    async def await_for_lock(self, key: str, timeout: float | None = None) -> bool:
        """`wait_for_lock` off the event loop."""
        return await asyncio.to_thread(self.wait_for_lock, key, timeout)

    def _hold(self, key: str, holder: str, fd: int | None) -> bool:
        with self._guard:
            self._held[key] = (holder, fd)
        return True

    def _open_for_lock(self, key: str) -> int | None:
        """A descriptor of ``key``'s lock file, made if missing; None where none can be made."""
        path = self.path_for(key)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            return os.open(path, os.O_RDWR | os.O_CREAT, _FILE_MODE)
        except PermissionError:
            # Another user's file (flock needs only a read descriptor), or a folder not ours.
            opened = self._open_existing(key)
            if opened is None:
                self._warn(f"cannot make {path}")
            return opened
        except OSError as error:
            self._warn(f"{type(error).__name__}: {error}")
            return None

    def _open_existing(self, key: str) -> int | None:
        """A read descriptor of ``key``'s lock file; None when there is none (or it cannot be read)."""
        try:
            return os.open(self.path_for(key), os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as error:
            self._warn(f"{type(error).__name__}: {error}")
            return None

    def _flock(self, fd: int, operation: int, deadline: float | None, key: str) -> bool:
        """``flock(fd, operation)``, tried until ``deadline`` (None: for as long as it takes).

        Raises:
            RunStoppedError: The run was stopped meanwhile.
        """
        waited = False
        while True:
            try:
                fcntl.flock(fd, operation | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                pass
            if self._stopped is not None and self._stopped():
                raise RunStoppedError("the run was stopped")
            if deadline is not None and time.monotonic() >= deadline:
                return False
            if not waited:
                waited = True
                run_logger().info("Waiting for batch %s: another run or setting is computing it", key)
            time.sleep(_POLL_SECONDS)

    def _warn(self, reason: str) -> None:
        with self._guard:
            if self._warned:
                return
            self._warned = True
        run_logger().warning("Batch records in %s are not locked (%s): runs computing a batch at once may each "
                          "compute it", self.directory, reason)  # fmt: skip


def _is_current(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (not removed by its last holder)."""
    try:
        held, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)
