"""Prefect result storage on an object store.

Prefect only accepts saved blocks here. The block is saved under a name derived
from the store URL and holds only non-secret options (such as ``endpoint_url``);
credentials stay in the environment, where s3fs reads them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from oloproof._secrets import has_secrets, public_options
from oloproof.store import PREFECT_DIR, ResultsStore

__all__ = ["remote_result_storage"]


def remote_result_storage(store: ResultsStore, storage_options: dict[str, Any]) -> Any:
    """A saved ``RemoteFileSystem`` block over ``<store>/prefect``.

    Credentials given in ``storage_options`` are never saved into a block; then
    Prefect keeps its batch results in its local storage instead (Oloproof's own
    per-case caches still live in the store, so nothing is recomputed elsewhere).
    """
    from prefect.filesystems import RemoteFileSystem

    if has_secrets(storage_options):
        from prefect.settings import PREFECT_LOCAL_STORAGE_PATH

        return Path(PREFECT_LOCAL_STORAGE_PATH.value())

    url = store.url_for(PREFECT_DIR)
    settings = public_options(storage_options)
    name = "oloproof-" + hashlib.sha256(f"{url}\n{sorted(settings.items())}".encode()).hexdigest()[:20]
    block = RemoteFileSystem(basepath=url, settings=settings)
    block.save(name, overwrite=True)
    return block
