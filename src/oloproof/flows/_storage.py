"""Prefect's own result and cache records live in the results store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oloproof.store import PREFECT_DIR, ResultsStore

__all__ = ["prefect_result_storage"]


def prefect_result_storage(store: ResultsStore, storage_options: dict[str, Any] | None = None) -> Any:
    """Where Prefect keeps batch results and cache records: ``<store>/prefect``.

    A local store is given to Prefect as a path, which needs no saved block.
    """
    if store.is_local:
        return Path(store.full_path(PREFECT_DIR))
    from oloproof.flows._remote import remote_result_storage

    return remote_result_storage(store, storage_options or {})
