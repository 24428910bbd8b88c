"""``KeyLocks``: one holder per batch key, across threads and processes, none left by a crash.

Waits that must end are given generous limits; waits that must not end are given
short ones (a lock that is held stays held however long one waits).
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from oloproof.flows._locks import KeyLocks

KEY = "oloproof-retrieve-v4.3-0123456789abcdef"
HOLD_IN_CHILD = """
import sys
from pathlib import Path
from oloproof.flows._locks import KeyLocks
KeyLocks(Path(sys.argv[1])).acquire_lock(sys.argv[2], "child")
print("held", flush=True)
sys.stdin.read()
"""


def _open_fds_on(path: Path) -> int:
    """How many of this process's descriptors are open on ``path``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == str(path)
        except OSError:
            continue
    return count


def test_a_held_key_is_not_acquired_by_another_holder_until_released(tmp_path):
    locks = KeyLocks(tmp_path / "locks")
    assert locks.acquire_lock(KEY, "a")
    assert locks.is_locked(KEY) and locks.is_lock_holder(KEY, "a") and not locks.is_lock_holder(KEY, "b")
    assert not locks.acquire_lock(KEY, "b", acquire_timeout=0.1)
    assert not locks.wait_for_lock(KEY, timeout=0.1)
    assert locks.acquire_lock("another key", "b", acquire_timeout=0.1)  # keys lock apart
    locks.release_lock(KEY, "a")
    assert not locks.is_locked(KEY)
    assert locks.wait_for_lock(KEY, timeout=0.1)
    assert locks.acquire_lock(KEY, "b", acquire_timeout=30)


def test_a_holder_acquiring_again_keeps_its_lock_and_only_it_releases_it(tmp_path):
    locks = KeyLocks(tmp_path / "locks")
    assert locks.acquire_lock(KEY, "a")
    assert locks.acquire_lock(KEY, "a", acquire_timeout=0.1)
    with pytest.raises(ValueError, match="No lock held by b"):
        locks.release_lock(KEY, "b")
    locks.release_lock(KEY, "a")
    with pytest.raises(ValueError):
        locks.release_lock(KEY, "a")


def test_a_released_lock_leaves_no_file_and_an_unlocked_key_creates_none(tmp_path):
    locks = KeyLocks(tmp_path / "locks")
    assert not locks.is_locked(KEY) and locks.wait_for_lock(KEY)
    assert not (tmp_path / "locks").exists()
    locks.acquire_lock(KEY, "a")
    assert locks.path_for(KEY).exists()
    locks.release_lock(KEY, "a")
    assert list((tmp_path / "locks").iterdir()) == []


def test_a_waiter_whose_file_was_removed_by_the_last_holder_locks_the_new_one(tmp_path):
    # Two waiters on one held key: the holder removes its file as it releases, so
    # the first waiter to get the old file must see that and lock a new file, which
    # the second and any later acquirer then wait on; a waiter that kept the removed
    # file would hold the key beside a later acquirer of the new one.
    locks = KeyLocks(tmp_path / "locks")
    locks.acquire_lock(KEY, "a")
    got: list[str] = []
    waiters = [threading.Thread(target=lambda h=h: got.append(h) if locks.acquire_lock(KEY, h) else None)
               for h in ("b", "c")]  # fmt: skip
    for waiter in waiters:
        waiter.start()
    while _open_fds_on(locks.path_for(KEY)) < 3:  # both waiters have the old file open
        threading.Event().wait(0.01)
    locks.release_lock(KEY, "a")
    while not got:
        threading.Event().wait(0.01)
    first = got[0]
    other = ({"b", "c"} - {first}).pop()
    waiters[0 if first == "b" else 1].join(timeout=60)
    assert got == [first] and locks.is_lock_holder(KEY, first) and not locks.is_lock_holder(KEY, other)
    assert not locks.acquire_lock(KEY, "later", acquire_timeout=0.1)
    locks.release_lock(KEY, first)
    waiters[0 if other == "b" else 1].join(timeout=60)
    assert got == [first, other] and locks.is_lock_holder(KEY, other)
    locks.release_lock(KEY, other)


def test_another_process_holds_the_key_until_it_is_killed_and_leaves_no_lock(tmp_path):
    locks = KeyLocks(tmp_path / "locks")
    child = subprocess.Popen([sys.executable, "-c", HOLD_IN_CHILD, str(locks.directory), KEY],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline() == "held\n"
        assert locks.is_locked(KEY)
        assert not locks.acquire_lock(KEY, "parent", acquire_timeout=0.1)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        assert locks.acquire_lock(KEY, "parent", acquire_timeout=60)  # its file is left; its lock is not
        locks.release_lock(KEY, "parent")
    finally:
        child.kill()
        child.wait(timeout=60)


def test_locks_pickle_as_their_directory_alone(tmp_path):
    locks = KeyLocks(tmp_path / "locks")
    locks.acquire_lock(KEY, "a")
    copy = pickle.loads(pickle.dumps(locks))
    assert copy.directory == locks.directory and repr(copy) == repr(locks)
    assert not copy.is_lock_holder(KEY, "a")  # held locks stay with the process that took them
    assert not copy.acquire_lock(KEY, "a", acquire_timeout=0.1)
    locks.release_lock(KEY, "a")
    assert copy.acquire_lock(KEY, "b", acquire_timeout=30)
    copy.release_lock(KEY, "b")
