"""Reading a complete run's records back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oloproof._exceptions import NotFoundError
from oloproof.store._layout import RUN_MANIFEST, RUNS_DIR, run_manifest, run_table, split_entry_file
from oloproof.store._store import ResultsStore

__all__ = ["IncompleteRun", "incomplete_runs", "read_run_records", "remove_incomplete_run"]


def read_run_records(store: ResultsStore, run_id: str) -> dict[str, Any]:
    """A complete run's manifest, cases and judgments.

    Raises:
        NotFoundError: No complete run has that id.
    """
    if not store.exists(run_manifest(run_id)):
        raise NotFoundError(f"no complete run {run_id!r} in the store", path=store.url)
    return {
        "manifest": store.read_json(run_manifest(run_id)),
        "cases": store.read_table(run_table(run_id, "cases")),
        "judgments": store.read_table(run_table(run_id, "judgments")),
    }


@dataclass(frozen=True)
class IncompleteRun:
    """A run folder without its manifest: a run still being written, or one that died."""

    run_id: str
    files: tuple[str, ...]
    """Its files, relative to the run folder."""
    modified: float | None
    """When its newest file was written (POSIX seconds), if the store says."""


def incomplete_runs(store: ResultsStore) -> list[IncompleteRun]:
    """The ``runs/<id>/`` folders that no reader shows: they have no ``run.json``."""
    files: dict[str, list[str]] = {}
    for relpath in store.list_paths(RUNS_DIR):
        entry = split_entry_file(relpath)
        if entry is not None:
            files.setdefault(entry[1], []).append(entry[2])
    out = []
    for run_id, names in sorted(files.items()):
        if RUN_MANIFEST in names:
            continue
        stamps = [store.objects.modified(f"{RUNS_DIR}/{run_id}/{name}") for name in names]
        known = [stamp for stamp in stamps if stamp is not None]
        out.append(IncompleteRun(run_id=run_id, files=tuple(sorted(names)), modified=max(known) if known else None))
    return out


def remove_incomplete_run(store: ResultsStore, run: IncompleteRun) -> None:
    """Remove an incomplete run's folder (never a complete run's)."""
    folder = f"{RUNS_DIR}/{run.run_id}"  # as listed: a folder Oloproof did not name is removed too
    if store.exists(f"{folder}/{RUN_MANIFEST}"):
        raise NotFoundError(f"run {run.run_id} is complete: only incomplete runs are removed", path=store.url)
    store.objects.remove_tree(folder)
