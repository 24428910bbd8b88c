"""Prefect result storage on an object store.

Prefect only accepts saved blocks here. The block is saved under a name derived
from the store URL and holds only non-secret options (such as ``endpoint_url``);
credentials stay in the environment, where s3fs reads them.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from oloproof.store import PREFECT_DIR, ResultsStore

__all__ = ["has_secrets", "public_options", "public_overrides", "remote_result_storage"]

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


def has_secrets(options: Any) -> bool:
    """Whether ``options`` holds anything that looks like a credential."""
    return public_options(options) != options


def public_overrides(overrides: list[str]) -> list[str]:
    """``--set`` overrides without those that set a credential."""
    kept = []
    for text in overrides:
        key = text.partition("=")[0]
        parts = key.split(".")
        if parts[0] == "storage_options" and any(
            part != "endpoint_url" and _SECRET.search(part) for part in parts[1:]
        ):
            continue
        kept.append(text)
    return kept


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
