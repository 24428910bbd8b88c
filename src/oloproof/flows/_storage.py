"""Prefect's own result and cache records live in the results store."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oloproof.flows._locks import KeyLocks
from oloproof.store import PREFECT_DIR, ResultsStore

__all__ = ["prefect_batch_locks", "prefect_result_storage"]


def prefect_result_storage(store: ResultsStore, storage_options: dict[str, Any] | None = None) -> Any:
    """Where Prefect keeps batch results and cache records: ``<store>/prefect``.

    A local store is given to Prefect as a path, which needs no saved block.
    """
    if store.is_local:
        return Path(store.full_path(PREFECT_DIR))
    from oloproof.flows._remote import remote_result_storage

    return remote_result_storage(store, storage_options or {})


def prefect_batch_locks(storage: Any, stopped: Callable[[], bool] | None = None) -> KeyLocks:
    """The locks of the batch records kept in ``storage`` (see `KeyLocks`); a wait for
    one ends once ``stopped()`` is true.

    A local folder keeps its locks beside its records, so every run on this machine
    that writes there shares them. An object store replaces an object whole, so its
    locks only spare equal work: they live under Prefect's home, one folder per store.
    """
    if isinstance(storage, Path):
        return KeyLocks(storage / ".locks", stopped)
    from prefect.settings import PREFECT_HOME

    digest = hashlib.sha256(str(storage.basepath).encode()).hexdigest()[:20]
    return KeyLocks(Path(PREFECT_HOME.value()) / "oloproof-locks" / digest, stopped)
