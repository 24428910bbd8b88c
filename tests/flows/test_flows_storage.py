"""``prefect_result_storage``: where Prefect keeps batch results and cache records.

Covers a local store (a plain path to ``<store>/prefect``, nothing created) and a
remote store given credentials (Prefect's own local storage: no block is saved,
so no credential is ever written into one), and where each keeps its batch locks.
"""

from __future__ import annotations

from pathlib import Path

from prefect.settings import PREFECT_HOME, PREFECT_LOCAL_STORAGE_PATH, temporary_settings

from oloproof.flows._storage import prefect_batch_locks, prefect_result_storage
from oloproof.store import PREFECT_DIR, ResultsStore


def test_a_local_store_keeps_prefect_results_in_its_prefect_folder(tmp_path):
    store = ResultsStore(str(tmp_path / "results"))
    assert prefect_result_storage(store) == tmp_path / "results" / "prefect"
    assert PREFECT_DIR == "prefect"


def test_a_local_store_path_is_a_path_and_nothing_is_created(tmp_path):
    store = ResultsStore(str(tmp_path / "results"))
    storage = prefect_result_storage(store, {"key": "ignored for local stores"})
    assert isinstance(storage, Path)
    assert not (tmp_path / "results").exists()


def test_a_remote_store_with_credentials_uses_prefect_local_storage(tmp_path):
    store = ResultsStore("memory://oloproof-storage-test/results")
    with temporary_settings(updates={PREFECT_LOCAL_STORAGE_PATH: str(tmp_path / "prefect-local")}):
        storage = prefect_result_storage(store, {"key": "AKIA", "secret": "s3cr3t"})
    assert storage == tmp_path / "prefect-local"


def test_a_local_store_keeps_its_batch_locks_beside_its_records(tmp_path):
    storage = prefect_result_storage(ResultsStore(str(tmp_path / "results")))
    assert prefect_batch_locks(storage).directory == tmp_path / "results" / "prefect" / ".locks"


def test_an_object_store_keeps_its_batch_locks_under_prefect_home_one_folder_per_store(tmp_path):
    class Block:  # the saved RemoteFileSystem's one field read here
        def __init__(self, basepath: str) -> None:
            self.basepath = basepath

    with temporary_settings(updates={PREFECT_HOME: str(tmp_path / "home")}):
        first = prefect_batch_locks(Block("s3://bucket/a/prefect")).directory
        second = prefect_batch_locks(Block("s3://bucket/b/prefect")).directory
    assert first.parent == second.parent == tmp_path / "home" / "oloproof-locks"
    assert first != second
