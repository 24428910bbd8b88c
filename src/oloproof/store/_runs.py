"""Reading a complete run's records back."""

from __future__ import annotations

from typing import Any

from oloproof._exceptions import NotFoundError
from oloproof.store._layout import run_manifest, run_table
from oloproof.store._store import ResultsStore

__all__ = ["read_run_records"]


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
