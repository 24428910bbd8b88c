"""Prefect result storage on an object store.

Prefect only accepts saved blocks here. The block is saved under a name derived
from the store URL and holds only non-secret options (such as ``endpoint_url``);
credentials stay in the environment, where s3fs reads them.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from oloproof.store import PREFECT_DIR, ResultsStore

__all__ = ["public_options", "remote_result_storage"]

_SECRET = re.compile(r"(key|secret|token|password|credential|session)", re.IGNORECASE)


def public_options(options: Any) -> Any:
    """``options`` without any entry whose name looks like a credential."""
    if isinstance(options, dict):
        return {
            name: public_options(value)
            for name, value in options.items()
            if name == "endpoint_url" or not _SECRET.search(str(name))
        }
    return options


def remote_result_storage(store: ResultsStore, storage_options: dict[str, Any]) -> Any:
    """A saved ``RemoteFileSystem`` block over ``<store>/prefect``."""
    from prefect.filesystems import RemoteFileSystem

    url = store.url_for(PREFECT_DIR)
    settings = public_options(storage_options)
    name = "oloproof-" + hashlib.sha256(f"{url}\n{sorted(settings.items())}".encode()).hexdigest()[:20]
    block = RemoteFileSystem(basepath=url, settings=settings)
    block.save(name, overwrite=True)
    return block
