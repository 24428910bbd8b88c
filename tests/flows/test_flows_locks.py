"""``KeyLocks``: one holder per batch key, across threads and processes, none left by a crash;
waits that end with their run; shared and unusable lock folders.

Waits that must end are given generous limits; waits that must not end are given
short ones (a lock that is held stays held however long one waits).
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import stat
import subprocess
import sys
import threading

import pytest
from descriptors import open_files

from oloproof._exceptions import RunStoppedError
from oloproof.flows._locks import KeyLocks

KEY = "oloproof-retrieve-v4.3-0123456789abcdef"
HOLD_IN_CHILD = """
import sys
from pathlib import Path
from oloproof._exceptions import RunStoppedError
from oloproof.flows._locks import KeyLocks
KeyLocks(Path(sys.argv[1])).acquire_lock(sys.argv[2], "child")
print("held", flush=True)
sys.stdin.read()
"""


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
    while open_files().count(str(locks.path_for(KEY))) < 3:  # both waiters have the old file open
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


@pytest.mark.parametrize("wait", ["acquire", "wait"])
def test_a_wait_ends_with_run_stopped_once_its_run_is_stopped(tmp_path, wait):
    holder = KeyLocks(tmp_path / "locks")
    holder.acquire_lock(KEY, "a")
    stop = threading.Event()
    waiter = KeyLocks(tmp_path / "locks", stopped=stop.is_set)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            waiter.acquire_lock(KEY, "b") if wait == "acquire" else waiter.wait_for_lock(KEY)
        except BaseException as error:  # noqa: BLE001 - the test looks at what ended the wait
            raised.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    while open_files().count(str(holder.path_for(KEY))) < 2:  # the waiter has the file open: it is waiting
        threading.Event().wait(0.01)
    stop.set()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], RunStoppedError)
    assert holder.is_lock_holder(KEY, "a") and not waiter.is_lock_holder(KEY, "b")
    holder.release_lock(KEY, "a")


def test_lock_files_are_made_as_records_are_so_a_group_shares_them(tmp_path):
    previous = os.umask(0o002)
    try:
        locks = KeyLocks(tmp_path / "locks")
        locks.acquire_lock(KEY, "a")
        mode = stat.S_IMODE(locks.path_for(KEY).stat().st_mode)
    finally:
        os.umask(previous)
    assert mode == 0o664
    locks.release_lock(KEY, "a")


def test_a_lock_file_this_user_may_not_write_is_locked_through_a_read_descriptor(tmp_path, monkeypatch):
    # Another user's lock file in a folder the group shares: opening it to write is
    # refused (as root nothing is, so the refusal is made here), yet flock needs only
    # a read descriptor, whether its user holds it or left it behind.
    other = KeyLocks(tmp_path / "locks")
    other.acquire_lock(KEY, "other")
    left = KeyLocks(tmp_path / "locks").path_for("left behind")
    left.touch()
    opened = os.open

    def refuse_writing_theirs(path: str, flags: int, *args: int) -> int:
        if flags & os.O_RDWR and os.path.exists(path):
            raise PermissionError(13, "Permission denied", path)
        return opened(path, flags, *args)

    monkeypatch.setattr(os, "open", refuse_writing_theirs)
    locks = KeyLocks(tmp_path / "locks")
    assert not locks.acquire_lock(KEY, "me", acquire_timeout=0.1)  # held: waited on, not taken
    assert locks.acquire_lock("left behind", "me", acquire_timeout=30)
    assert locks.is_locked("left behind") and not other.acquire_lock("left behind", "other", acquire_timeout=0.1)
    locks.release_lock("left behind", "me")
    other.release_lock(KEY, "other")
    assert locks.acquire_lock(KEY, "me", acquire_timeout=30)  # made by this user now
    locks.release_lock(KEY, "me")


def test_a_folder_that_cannot_hold_locks_leaves_batches_unlocked_and_says_so_once(tmp_path, caplog):
    (tmp_path / "prefect").mkdir()
    (tmp_path / "prefect" / ".locks").write_text("not a folder")
    locks = KeyLocks(tmp_path / "prefect" / ".locks")
    with caplog.at_level(logging.WARNING, logger="oloproof"):
        assert locks.acquire_lock(KEY, "a") and locks.acquire_lock("another key", "b")
        assert locks.is_lock_holder(KEY, "a") and not locks.is_locked(KEY) and locks.wait_for_lock(KEY)
        locks.release_lock(KEY, "a")
        locks.release_lock("another key", "b")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "are not locked" in warnings[0] and ".locks" in warnings[0]
    assert (tmp_path / "prefect" / ".locks").read_text() == "not a folder"
