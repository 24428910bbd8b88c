"""The results store: runs, diagnoses, comparisons and stage caches.

A store lives at a local path or any fsspec URL (``s3://bucket/prefix``,
``memory://x``) and is read and written through :class:`ResultsStore`.
:func:`connect` opens a DuckDB connection with one view per table::

    import oloproof.store

    con = oloproof.store.connect("s3://bucket/oloproof")
    con.sql("SELECT run_id, status FROM runs").show()

See :mod:`oloproof.store._layout` for the layout of a store.
"""

from __future__ import annotations

from oloproof._json import canonical_json
from oloproof.store._layout import (
    CACHE_DIR,
    COMPARISONS_DIR,
    DIAGNOSES_DIR,
    PREFECT_DIR,
    RUN_TABLES,
    RUNS_DIR,
    SAMPLES_DIR,
    SWEEPS_DIR,
    VALIDATIONS_DIR,
    cache_path,
    comparison_decisions,
    comparison_dir,
    comparison_manifest,
    comparison_report,
    diagnosis_dir,
    diagnosis_labels,
    diagnosis_manifest,
    diagnosis_report,
    diagnosis_request,
    pack_index_path,
    pack_path,
    run_dir,
    run_manifest,
    run_report,
    run_table,
    sample_labels,
    sample_manifest,
    sweep_manifest,
    sweep_setting,
    validation_record,
)
from oloproof.store._lease import run_lease
from oloproof.store._location import StoreLocation
from oloproof.store._objects import ObjectStore
from oloproof.store._queries import Queries, connect, statements_running
from oloproof.store._records import PackWriter, RecordCache
from oloproof.store._runs import IncompleteRun, incomplete_runs, read_run_records, remove_incomplete_run
from oloproof.store._schema import (
    CASES,
    DECISIONS,
    DIAGNOSIS_LABELS,
    JUDGMENTS,
    METRICS,
    RETRIEVALS,
    TABLES,
    TableSchema,
)
from oloproof.store._store import ResultsStore
from oloproof.store._tables import TableStore, encode_chunk

__all__ = [  # noqa: RUF022 - plain sorted() order, which the tests check
    "CACHE_DIR",
    "CASES",
    "COMPARISONS_DIR",
    "DECISIONS",
    "DIAGNOSES_DIR",
    "DIAGNOSIS_LABELS",
    "IncompleteRun",
    "JUDGMENTS",
    "METRICS",
    "ObjectStore",
    "PREFECT_DIR",
    "PackWriter",
    "Queries",
    "RETRIEVALS",
    "RUNS_DIR",
    "RUN_TABLES",
    "RecordCache",
    "ResultsStore",
    "SAMPLES_DIR",
    "SWEEPS_DIR",
    "StoreLocation",
    "TABLES",
    "TableSchema",
    "TableStore",
    "VALIDATIONS_DIR",
    "cache_path",
    "canonical_json",
    "comparison_decisions",
    "comparison_dir",
    "comparison_manifest",
    "comparison_report",
    "connect",
    "diagnosis_dir",
    "diagnosis_labels",
    "diagnosis_manifest",
    "diagnosis_report",
    "diagnosis_request",
    "encode_chunk",
    "incomplete_runs",
    "pack_index_path",
    "pack_path",
    "read_run_records",
    "remove_incomplete_run",
    "run_dir",
    "run_lease",
    "run_manifest",
    "run_report",
    "run_table",
    "sample_labels",
    "sample_manifest",
    "statements_running",
    "sweep_manifest",
    "sweep_setting",
    "validation_record",
]
