"""Reading a complete run's records back from the store."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.records import RunRecords
from oloproof.store import ResultsStore, read_run_records
from oloproof.tasks._retry import retry_io_only

__all__ = ["load_run_records", "read_run_records"]


@task(cache_policy=NO_CACHE, name="load-run", task_run_name="load {run_id}", retries=2, retry_condition_fn=retry_io_only, retry_delay_seconds=1)
def load_run_records(store: ResultsStore, run_id: str) -> RunRecords:
    """Task form of `read_run_records`."""
    return read_run_records(store, run_id)
