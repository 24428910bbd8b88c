"""Reading a complete run's records back, and finding and removing incomplete runs.

An incomplete run's folder is removed only when no live run holds its lease (see
:mod:`oloproof.store._lease`) and nothing in it changed since it was listed: its
age alone cannot tell a run that died from one still writing.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError

from oloproof._exceptions import NotFoundError, StoreError
from oloproof.records import RunRecords, StoredCase, StoredJudgment, StoredManifest
from oloproof.store._inside import is_own_folder, list_entries
from oloproof.store._layout import RUN_MANIFEST, RUNS_DIR, run_manifest, run_table, split_entry_file
from oloproof.store._lease import LEASE_FILE, lease_is_fresh, local_claim
from oloproof.store._store import ResultsStore

__all__ = ["IncompleteRun", "incomplete_runs", "read_run_records", "remove_incomplete_run"]


def read_run_records(store: ResultsStore, run_id: str) -> RunRecords:
    """A complete run's manifest, cases and judgments.

    Raises:
        NotFoundError: No complete run has that id.
        StoreError: Its ``run.json`` is not a run manifest.
    """
    path = run_manifest(run_id)
    if not store.exists(path):
        raise NotFoundError(f"no complete run {run_id!r} in the store", path=store.url)
    stored = store.read_json(path)
    if not isinstance(stored, dict):
        raise StoreError(f"run {run_id}: run.json is not a JSON object", path=store.location.url_for(path))
    cases, judgments = store.read_table(run_table(run_id, "cases")), store.read_table(run_table(run_id, "judgments"))
    try:
        # The store's JSON, handed to the records as their stored forms.
        return RunRecords.of(cast("StoredManifest", stored), cast("list[StoredCase]", cases),
                             cast("list[StoredJudgment]", judgments))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise StoreError(f"run {run_id}: run.json is not a run manifest: {first['msg']}",
                         path=store.location.url_for(path), field=where or None) from None


@dataclass(frozen=True)
class IncompleteRun:
    """A run folder without its manifest: a run still being written, or one that died."""

    run_id: str
    files: tuple[str, ...]
    """Its files, relative to the run folder (its lease left out)."""
    modified: float | None
    """When its newest file (its lease included) was written (POSIX seconds), if the store says."""


def incomplete_runs(store: ResultsStore) -> list[IncompleteRun]:
    """The ``runs/<id>/`` folders that no reader shows: they have no ``run.json``.

    A local store is listed without following links: what is removed is the store's own.
    """
    times: dict[str, dict[str, float | None]] = {}
    if store.is_local:
        # Every file counts for the age, a killed write's temporary one too; times from
        # lstat: a link's own, never its target's.
        for run_id, names in list_entries(store.location, RUNS_DIR, links=False, temporaries=True).items():
            times[run_id] = {name: _lstat_time(os.path.join(store.root, RUNS_DIR, run_id, name)) for name in names}
    else:
        for relpath in store.list_paths(RUNS_DIR):
            entry = split_entry_file(relpath)
            if entry is not None:
                times.setdefault(entry[1], {})[entry[2]] = store.objects.modified(relpath)
    out = []
    for run_id, stamps in sorted(times.items()):
        if RUN_MANIFEST in stamps:
            continue
        known = [stamp for stamp in stamps.values() if stamp is not None]
        files = tuple(sorted(name for name in stamps if name != LEASE_FILE and not _is_temporary(name)))
        out.append(IncompleteRun(run_id=run_id, files=files,
                                 modified=max(known) if known else None))  # fmt: skip
    return out


def remove_incomplete_run(store: ResultsStore, run: IncompleteRun) -> bool:
    """Remove an incomplete run's folder, unless a live run holds it (never a complete run's).

    Returns:
        True once the folder is gone; False when it is kept: a run holds its lease,
        or wrote to it (or completed it) since it was listed.

    Raises:
        NotFoundError: The run is complete.
        StoreError: The store refused, or a local store's filesystem has no locks.
    """
    folder = f"{RUNS_DIR}/{run.run_id}"  # as listed: a folder Oloproof did not name is removed too
    if store.exists(f"{folder}/{RUN_MANIFEST}"):
        raise NotFoundError(f"run {run.run_id} is complete: only incomplete runs are removed", path=store.url)
    if store.is_local:
        return _remove_local(store, folder, run)
    return _remove_remote(store, folder, run)


def _remove_local(store: ResultsStore, folder: str, run: IncompleteRun) -> bool:
    where = store.location
    full = where.full_path(folder)
    if not os.path.lexists(full):
        return True
    if not is_own_folder(where, folder):  # removing through a link would remove what it points to
        raise StoreError("refused: the run folder is a link or leads out of the store", path=where.url_for(folder))
    with local_claim(store.objects, folder) as (claimed, created):
        if not claimed:
            return not os.path.lexists(full)  # gone already, or held by a live run
        with where.guard("remove", folder, missing_is_lookup=False):
            entries = {entry.name: entry for entry in os.scandir(full)}
            stamps = [e.stat(follow_symlinks=False).st_mtime for n, e in entries.items()
                      if not (n == LEASE_FILE and created)]  # fmt: skip
            if RUN_MANIFEST in entries or _newer(stamps, run.modified):
                return False
            for name, entry in entries.items():
                if name == LEASE_FILE:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
            # The lease last, under its lock: a run that opens it now finds it gone and starts afresh.
            os.unlink(os.path.join(full, LEASE_FILE))
            try:
                os.rmdir(full)
            except OSError as error:
                if error.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    return False  # a new run made its lease in it meanwhile: the folder is its own
                raise
    return True


def _remove_remote(store: ResultsStore, folder: str, run: IncompleteRun) -> bool:
    where = store.location
    if lease_is_fresh(store.objects, folder, time.time()):
        return False
    with where.guard("remove", folder, missing_is_lookup=False):
        where.fs.invalidate_cache()
        # fsspec's listing: object info by path, as the filesystem reports it.
        found: dict[str, Any] = where.fs.find(where.full_path(folder), detail=True)
    names = {path.rsplit("/", 1)[-1] for path in found}
    stamps = [_stamp(info) for info in found.values()]
    if RUN_MANIFEST in names or _newer([s for s in stamps if s is not None], run.modified):
        return False
    if found:
        # Only what was listed: an object written after this listing is left.
        with where.guard("remove", folder, missing_is_lookup=False):
            where.fs.rm(sorted(found))
    return True


def _lstat_time(path: str) -> float | None:
    try:
        return os.lstat(path).st_mtime
    except FileNotFoundError:  # removed since it was listed
        return None


def _is_temporary(name: str) -> bool:
    # The temporary files of the store's atomic writes (see ObjectStore).
    return name.startswith(".") and name.endswith(".tmp")


def _newer(stamps: list[float], listed: float | None) -> bool:
    """Whether any file was written since the folder was listed."""
    return listed is not None and any(stamp > listed for stamp in stamps)


def _stamp(info: Mapping[str, Any]) -> float | None:
    """When an object was written, as the store's listing says (as ``ObjectStore.modified``)."""
    stamp: Any = info.get("LastModified") or info.get("mtime") or info.get("last_modified")
    if hasattr(stamp, "timestamp"):
        return float(stamp.timestamp())
    return float(stamp) if stamp else None
