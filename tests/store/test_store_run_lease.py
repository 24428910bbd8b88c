"""A run folder is removed only when no live run holds its lease, whatever its age:
a run still writing is never removed; one that finished, failed or was killed is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from oloproof._exceptions import NotFoundError, StoreError
from oloproof.store import RUNS_DIR, ResultsStore, _lease, incomplete_runs, remove_incomplete_run, run_manifest
from oloproof.store._lease import LEASE_FILE, run_lease

LIMIT_S = 300  # generous: the machine may be loaded; nothing here measures time


def _backdate(folder: Path, hours: float = 3) -> None:
    old = time.time() - hours * 3600
    for path in folder.iterdir():
        os.utime(path, (old, old), follow_symlinks=False)


def _listed(store: ResultsStore, run_id: str):
    return next((run for run in incomplete_runs(store) if run.run_id == run_id), None)


def test_a_folder_a_live_run_holds_is_kept_however_old(tmp_path):
    store = ResultsStore(str(tmp_path / "store"))
    folder = tmp_path / "store" / RUNS_DIR / "run_W"
    with run_lease(store, "run_W"):
        store.write_bytes("runs/run_W/cases.parquet", b"x")
        _backdate(folder)
        run = _listed(store, "run_W")
        assert run is not None and run.files == ("cases.parquet",)  # the lease is not one of its files
        assert time.time() - run.modified > 2 * 3600
        assert remove_incomplete_run(store, run) is False
        assert (folder / "cases.parquet").read_bytes() == b"x"
    assert not (folder / LEASE_FILE).exists()  # let go of with its file
    run = _listed(store, "run_W")
    assert remove_incomplete_run(store, run) is True
    assert not folder.exists()


def test_a_writing_run_racing_the_removal_loses_nothing(tmp_path):
    store = ResultsStore(str(tmp_path / "store"))
    folder = tmp_path / "store" / RUNS_DIR / "run_RACE"
    names = [f"part-{n:02d}.bin" for n in range(60)]
    holding, done = threading.Event(), threading.Event()
    lost: list[str] = []

    def writer() -> None:
        try:
            with run_lease(store, "run_RACE"):
                holding.set()
                for n, name in enumerate(names):
                    store.write_bytes(f"runs/run_RACE/{name}", b"x")
                    _backdate(folder)  # as old as can be: only the lease keeps it
                    lost.extend(name for name in names[: n + 1] if not (folder / name).exists())
                    time.sleep(0.01)
        finally:
            done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    assert holding.wait(LIMIT_S)
    kept = 0
    while not done.is_set():  # as `oloproof runs --incomplete --remove --older-than 0`, over and over
        for run in incomplete_runs(store):
            kept += not remove_incomplete_run(store, run)
    thread.join(LIMIT_S)
    assert lost == [] and kept > 0
    # Once its run is gone, the folder goes (if the last pass above has not removed it already).
    for run in incomplete_runs(store):
        assert run.files == tuple(names)
        assert remove_incomplete_run(store, run) is True
    assert not folder.exists()


def _default_signals() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


HOLDER = """
import sys, time
from oloproof.store import ResultsStore
from oloproof.store._lease import run_lease
store = ResultsStore(sys.argv[1])
with run_lease(store, "run_KILLED"):
    store.write_bytes("runs/run_KILLED/cases.parquet", b"x")
    print("holding", flush=True)
    time.sleep(3600)
"""


def test_a_run_killed_while_writing_lets_go_of_its_folder(tmp_path):
    store = ResultsStore(str(tmp_path / "store"))
    folder = tmp_path / "store" / RUNS_DIR / "run_KILLED"
    process = subprocess.Popen([sys.executable, "-c", HOLDER, store.url], stdout=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=_default_signals)  # noqa: PLW1509  # fmt: skip
    try:
        assert process.stdout.readline() == "holding\n"
        _backdate(folder)
        assert remove_incomplete_run(store, _listed(store, "run_KILLED")) is False
        process.kill()
        process.wait(LIMIT_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    run = _listed(store, "run_KILLED")
    assert run.files == ("cases.parquet",) and (folder / LEASE_FILE).exists()  # left as the kill found it
    assert remove_incomplete_run(store, run) is True and not folder.exists()


def test_a_folder_written_since_it_was_listed_is_kept(tmp_path):
    # A run that writes without a lease (an older version) still keeps what it writes now.
    store = ResultsStore(str(tmp_path / "store"))
    folder = tmp_path / "store" / RUNS_DIR / "run_OLD"
    store.write_bytes("runs/run_OLD/cases.parquet", b"x")
    _backdate(folder)
    run = _listed(store, "run_OLD")
    store.write_bytes("runs/run_OLD/judgments.parquet", b"x")
    assert remove_incomplete_run(store, run) is False and folder.exists()
    store.write_json(run_manifest("run_OLD"), {"status": "complete"})
    with pytest.raises(NotFoundError, match="only incomplete runs are removed"):
        remove_incomplete_run(store, run)


def test_a_killed_writes_temporary_file_counts_and_goes(tmp_path):
    store = ResultsStore(str(tmp_path / "store"))
    folder = tmp_path / "store" / RUNS_DIR / "run_TMP"
    folder.mkdir(parents=True)
    (folder / ".cases.parquet.0123456789abcdef.tmp").write_bytes(b"half")
    _backdate(folder)
    (run,) = incomplete_runs(store)
    assert run.files == () and run.modified is not None
    assert remove_incomplete_run(store, run) is True and not folder.exists()


def test_a_run_folder_that_is_a_link_is_never_followed(tmp_path):
    store = ResultsStore(str(tmp_path / "store"))
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    _backdate(precious)
    (tmp_path / "store" / RUNS_DIR).mkdir(parents=True)
    (tmp_path / "store" / RUNS_DIR / "run_LINK").symlink_to(precious)
    assert incomplete_runs(store) == []
    linked = ResultsStore(str(tmp_path / "linked"))
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / RUNS_DIR).symlink_to(tmp_path)  # every folder beside the store would read as a run
    assert incomplete_runs(linked) == []
    from oloproof.store import IncompleteRun

    with pytest.raises(StoreError, match="is a link"):
        remove_incomplete_run(store, IncompleteRun("run_LINK", ("keep.txt",), 0.0))
    assert (precious / "keep.txt").read_text() == "mine" and not (precious / LEASE_FILE).exists()


@pytest.mark.services
def test_an_object_store_folder_is_kept_while_its_lease_is_fresh(s3_store, monkeypatch):
    monkeypatch.setattr(_lease, "HEARTBEAT_S", 0.2)
    lease = f"{RUNS_DIR}/run_S3/{LEASE_FILE}"
    with run_lease(s3_store, "run_S3"):
        s3_store.write_bytes("runs/run_S3/cases.parquet", b"x")
        first = s3_store.read_json(lease)
        assert first["owner"].endswith(f":{os.getpid()}") and first["ttl_s"] == _lease.LEASE_TTL_S
        (run,) = incomplete_runs(s3_store)
        assert run.files == ("cases.parquet",)
        assert remove_incomplete_run(s3_store, run) is False
        deadline = time.monotonic() + LIMIT_S
        while s3_store.read_json(lease)["renewed_at"] == first["renewed_at"]:  # the heartbeat renews it
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert not s3_store.exists(lease)
    (run,) = incomplete_runs(s3_store)
    assert remove_incomplete_run(s3_store, run) is True
    assert s3_store.list_paths(RUNS_DIR) == []


@pytest.mark.services
def test_an_object_store_lease_that_expired_does_not_keep_its_folder(s3_store):
    # A run killed while writing: its lease stays, unrenewed.
    s3_store.write_json(f"{RUNS_DIR}/run_DEAD/{LEASE_FILE}", {"owner": "elsewhere:1", "ttl_s": 0.0})
    s3_store.write_bytes("runs/run_DEAD/cases.parquet", b"x")
    s3_store.write_json(f"{RUNS_DIR}/run_LIVE/{LEASE_FILE}", {"owner": "elsewhere:2", "ttl_s": 3600})
    s3_store.write_bytes("runs/run_LIVE/cases.parquet", b"x")
    outcome = {run.run_id: remove_incomplete_run(s3_store, run) for run in incomplete_runs(s3_store)}
    assert outcome == {"run_DEAD": True, "run_LIVE": False}
    assert [path.split("/")[1] for path in s3_store.list_paths(RUNS_DIR)] == ["run_LIVE", "run_LIVE"]
