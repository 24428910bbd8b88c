"""``prefect_result_storage``: where Prefect keeps batch results and cache records.

Covers a local store (a plain path to ``<store>/prefect``, nothing created) and a
remote store given credentials (Prefect's own local storage: no block is saved,
so no credential is ever written into one).
"""

from __future__ import annotations

from pathlib import Path

from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings

from oloproof.flows._storage import prefect_result_storage
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
