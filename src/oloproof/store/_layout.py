"""Where everything lives inside a results store.

A results store is a directory (local) or a prefix (object store) laid out as::

    <root>/
      runs/<run_id>/run.json               run manifest, written LAST: its presence marks the run complete
      runs/<run_id>/cases.parquet          one row per case
      runs/<run_id>/retrievals.parquet     one row per retrieved candidate
      runs/<run_id>/judgments.parquet      one row per case x criterion
      runs/<run_id>/metrics.parquet        one row per criterion x slice
      diagnoses/<sha256-hex>/diagnosis.json, diagnoses/<hex>/labels.parquet
      diagnoses/requests/<request>.json    the diagnosis that answered one request
      comparisons/<sha256-hex>/comparison.json, comparisons/<hex>/decisions.parquet
      cache/<stage>/packs/<pack>.json      stage records written together (a batch's), by identity key
      cache/<stage>/index/<segment>.json   which pack holds which key (see oloproof.store._packs)
      cache/<stage>/<kk>/<key>.json        one stage record alone (agent tools; stores before packs)
      samples/<sample_id>/sample.json      cases of a run drawn for human labels
      samples/<sample_id>/labels.json      the human labels of that sample, once validated
      validations/<judge_id>.json          a judge's latest validation against human labels
      sweeps/<sweep_id>/settings/<h>.json  the run that answered one setting of a sweep, once it completed
      sweeps/<sweep_id>/sweep.json         the sweep's result, written last
      prefect/                             Prefect's own result and cache records

``<kk>`` is the first two characters of ``<key>``, which keeps directory
listings short. A run, diagnosis or comparison directory without its manifest
(``run.json``, ``diagnosis.json``, ``comparison.json``) is incomplete: it was
interrupted or is still being written, and queries do not see it.

Every helper here returns a path relative to the store's root, with ``/`` as
the separator, for use with :class:`oloproof.store.ResultsStore`.
"""

from __future__ import annotations

import re

from oloproof._exceptions import StoreError

__all__ = [
    "CACHE_DIR",
    "COMPARISONS_DIR",
    "DIAGNOSES_DIR",
    "PREFECT_DIR",
    "RUNS_DIR",
    "RUN_MANIFEST",
    "RUN_REPORT",
    "RUN_TABLES",
    "SAMPLES_DIR",
    "SWEEPS_DIR",
    "VALIDATIONS_DIR",
    "cache_path",
    "comparison_decisions",
    "comparison_dir",
    "comparison_manifest",
    "comparison_report",
    "diagnosis_dir",
    "diagnosis_labels",
    "diagnosis_manifest",
    "diagnosis_report",
    "diagnosis_request",
    "entry_file",
    "pack_index_dir",
    "pack_index_path",
    "pack_path",
    "run_dir",
    "run_manifest",
    "run_report",
    "run_table",
    "run_table_file",
    "sample_labels",
    "sample_manifest",
    "split_entry_file",
    "sweep_manifest",
    "sweep_setting",
    "validate_relpath",
    "validation_record",
]

RUNS_DIR = "runs"
DIAGNOSES_DIR = "diagnoses"
COMPARISONS_DIR = "comparisons"
CACHE_DIR = "cache"
PREFECT_DIR = "prefect"
VALIDATIONS_DIR = "validations"
SAMPLES_DIR = "samples"
SWEEPS_DIR = "sweeps"

RUN_MANIFEST = "run.json"
RUN_REPORT = "report.html"
DIAGNOSIS_MANIFEST = "diagnosis.json"
DIAGNOSIS_LABELS = "labels.parquet"
COMPARISON_MANIFEST = "comparison.json"
COMPARISON_DECISIONS = "decisions.parquet"
_DIAGNOSIS_REQUESTS = "requests"

RUN_TABLES = ("cases", "retrievals", "judgments", "metrics")
"""The tables every run directory holds, each as ``<table>.parquet``."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _name(value: str, field: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value) or ".." in value:
        raise StoreError(
            f"invalid name {value!r}: expected letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
            field=field,
        )
    return value


def validate_relpath(relpath: str) -> str:
    """Check a path relative to the store root and return it normalised.

    Args:
        relpath: A ``/``-separated path such as ``runs/abc/run.json``.

    Returns:
        The path without leading or trailing slashes.

    Raises:
        StoreError: The path is absolute, empty, or has ``.``/``..`` segments.
    """
    if not isinstance(relpath, str):
        raise StoreError(f"path must be a string, got {type(relpath).__name__}")
    parts = relpath.replace("\\", "/").strip("/").split("/")
    if relpath.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise StoreError(f"invalid store path {relpath!r}: expected a relative path")
    return "/".join(parts)


def entry_file(container: str, name: str, filename: str) -> str:
    """A file directly inside one entry directory: ``<container>/<name>/<filename>``.

    For names read back from a listing of the store, which are used as they
    are: a store may hold directories that Oloproof did not name. Paths of new
    entries come from the helpers below, which check the id.

    Args:
        container: :data:`RUNS_DIR`, :data:`DIAGNOSES_DIR` or :data:`COMPARISONS_DIR`.
        name: The entry directory's name.
        filename: The file's name, e.g. :data:`RUN_MANIFEST`.
    """
    return f"{container}/{name}/{filename}"


def split_entry_file(relpath: str) -> tuple[str, str, str] | None:
    """The inverse of :func:`entry_file`.

    Args:
        relpath: A path relative to the store root, as listed.

    Returns:
        ``(container, name, filename)``, or None for a path that is not exactly
        three levels deep.
    """
    parts = relpath.split("/")
    if len(parts) != 3:
        return None
    return parts[0], parts[1], parts[2]


def run_dir(run_id: str) -> str:
    """The directory of one run: ``runs/<run_id>``."""
    return f"{RUNS_DIR}/{_name(run_id, 'run_id')}"


def run_manifest(run_id: str) -> str:
    """The run manifest, written last: ``runs/<run_id>/run.json``."""
    return f"{run_dir(run_id)}/{RUN_MANIFEST}"


def run_report(run_id: str) -> str:
    """A run's HTML report, written after its manifest: ``runs/<run_id>/report.html``."""
    return f"{run_dir(run_id)}/{RUN_REPORT}"


def diagnosis_report(diagnosis_id: str) -> str:
    """The HTML report of a diagnosis's run, labelled by it: ``diagnoses/<id>/report.html``."""
    return f"{diagnosis_dir(diagnosis_id)}/{RUN_REPORT}"


def comparison_report(comparison_id: str) -> str:
    """The HTML report of a comparison's candidate run, with it: ``comparisons/<id>/report.html``."""
    return f"{comparison_dir(comparison_id)}/{RUN_REPORT}"


def run_table(run_id: str, table: str) -> str:
    """One table of a run: ``runs/<run_id>/<table>.parquet``.

    Args:
        run_id: The run's id.
        table: One of :data:`RUN_TABLES`.

    Raises:
        StoreError: ``table`` is not a run table.
    """
    return f"{run_dir(run_id)}/{run_table_file(table)}"


def run_table_file(table: str) -> str:
    """The file name of one run table inside a run directory: ``<table>.parquet``.

    Raises:
        StoreError: ``table`` is not one of :data:`RUN_TABLES`.
    """
    if table not in RUN_TABLES:
        raise StoreError(f"unknown run table {table!r}; expected one of {list(RUN_TABLES)}")
    return f"{table}.parquet"


def diagnosis_dir(diagnosis_id: str) -> str:
    """The directory of one diagnosis: ``diagnoses/<diagnosis_id>``."""
    return f"{DIAGNOSES_DIR}/{_name(diagnosis_id, 'diagnosis_id')}"


def diagnosis_manifest(diagnosis_id: str) -> str:
    """The diagnosis manifest, written last: ``diagnoses/<id>/diagnosis.json``."""
    return f"{diagnosis_dir(diagnosis_id)}/{DIAGNOSIS_MANIFEST}"


def diagnosis_labels(diagnosis_id: str) -> str:
    """The per-case labels of a diagnosis: ``diagnoses/<id>/labels.parquet``."""
    return f"{diagnosis_dir(diagnosis_id)}/{DIAGNOSIS_LABELS}"


def diagnosis_request(request: str) -> str:
    """The record of the diagnosis that answered one request.

    ``diagnoses/requests/<request>.json``: beside the diagnoses, in a directory
    that holds no manifest, so it never counts as a diagnosis itself.

    Args:
        request: The request's identity hash.
    """
    return f"{DIAGNOSES_DIR}/{_DIAGNOSIS_REQUESTS}/{_name(request, 'request')}.json"


def sweep_manifest(sweep_id: str) -> str:
    """A sweep's result, written last: ``sweeps/<id>/sweep.json``."""
    return f"{SWEEPS_DIR}/{_name(sweep_id, 'sweep_id')}/sweep.json"


def sweep_setting(sweep_id: str, setting: str) -> str:
    """The run that answered one setting of a sweep: ``sweeps/<id>/settings/<setting>.json``.

    Written once the setting's run is complete, so a sweep run again finds it and runs
    only the settings without one.
    """
    return f"{SWEEPS_DIR}/{_name(sweep_id, 'sweep_id')}/settings/{_name(setting, 'setting')}.json"


def comparison_dir(comparison_id: str) -> str:
    """The directory of one comparison: ``comparisons/<comparison_id>``."""
    return f"{COMPARISONS_DIR}/{_name(comparison_id, 'comparison_id')}"


def comparison_manifest(comparison_id: str) -> str:
    """The comparison manifest, written last: ``comparisons/<id>/comparison.json``."""
    return f"{comparison_dir(comparison_id)}/{COMPARISON_MANIFEST}"


def comparison_decisions(comparison_id: str) -> str:
    """The gate decisions of a comparison: ``comparisons/<id>/decisions.parquet``."""
    return f"{comparison_dir(comparison_id)}/{COMPARISON_DECISIONS}"


def cache_path(stage: str, key: str) -> str:
    """One per-case stage record: ``cache/<stage>/<key[:2]>/<key>.json``.

    Args:
        stage: The stage name, e.g. ``retrieve``.
        key: The record's identity key (a hex digest), at least two characters.

    Raises:
        StoreError: The stage or key is not a safe name, or the key is too short.
    """
    _name(stage, "stage")
    _name(key, "key")
    if len(key) < 2:
        raise StoreError(f"cache key {key!r} is too short", field="key")
    return f"{CACHE_DIR}/{stage}/{key[:2]}/{key}.json"


PACKS = "packs"
PACK_INDEX = "index"


def pack_path(stage: str, pack_id: str) -> str:
    """A pack of stage records: ``cache/<stage>/packs/<pack_id>.json``.

    Raises:
        StoreError: The stage or pack id is not a safe name.
    """
    return f"{CACHE_DIR}/{_name(stage, 'stage')}/{PACKS}/{_name(pack_id, 'pack')}.json"


def pack_index_dir(stage: str) -> str:
    """The index segments of a stage's packs: ``cache/<stage>/index``."""
    return f"{CACHE_DIR}/{_name(stage, 'stage')}/{PACK_INDEX}"


def pack_index_path(stage: str, segment: str) -> str:
    """One index segment: ``cache/<stage>/index/<segment>.json``."""
    return f"{pack_index_dir(stage)}/{_name(segment, 'segment')}.json"


def _sample_dir(sample_id: str) -> str:
    return f"{SAMPLES_DIR}/{_name(sample_id, 'sample_id')}"


def sample_manifest(sample_id: str) -> str:
    """The record of one sample of a run's cases: ``samples/<sample_id>/sample.json``."""
    return f"{_sample_dir(sample_id)}/sample.json"


def sample_labels(sample_id: str) -> str:
    """The human labels of one sample: ``samples/<sample_id>/labels.json``."""
    return f"{_sample_dir(sample_id)}/labels.json"


def validation_record(judge_id: str) -> str:
    """A judge's validation record: ``validations/<judge_id>.json``."""
    return f"{VALIDATIONS_DIR}/{_name(judge_id, 'judge_id')}.json"
