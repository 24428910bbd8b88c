"""Samples, labels and validation records in a results store."""

from __future__ import annotations

from pydantic import ValidationError

from oloproof._exceptions import StoreError
from oloproof.judging._labels import LabelSet
from oloproof.judging._records import HumanLabel, JudgeRequirements, SampleRecord, ValidationRecord
from oloproof.judging._validate import check_requirements
from oloproof.store import (
    SAMPLES_DIR,
    VALIDATIONS_DIR,
    ResultsStore,
    sample_labels,
    sample_manifest,
    validation_record,
)

__all__ = [
    "find_sample",
    "gating_judges",
    "labelled_samples",
    "read_validations",
    "write_labels",
    "write_sample",
    "write_validation",
]


def write_sample(store: ResultsStore, sample: SampleRecord) -> None:
    """Record a drawn sample (the labels file names it)."""
    store.write_json(sample_manifest(sample.sample_id), sample.model_dump(mode="json"))


def find_sample(store: ResultsStore, sample_id: str) -> SampleRecord | None:
    """The sample recorded under ``sample_id``, if any."""
    try:
        path = sample_manifest(sample_id)
    except StoreError:  # not even a valid name: no such sample
        return None
    return SampleRecord.model_validate(store.read_json(path)) if store.exists(path) else None


def write_labels(store: ResultsStore, labels: LabelSet) -> None:
    """Record a sample's human labels (what the report's PPI rows are computed from)."""
    store.write_json(sample_labels(labels.sample.sample_id), {
        "sample_id": labels.sample.sample_id, "labels_sha256": labels.sha256,
        "labels": [label.model_dump(mode="json") for label in labels.labels],
    })  # fmt: skip


def labelled_samples(store: ResultsStore, run_id: str) -> list[tuple[SampleRecord, list[HumanLabel]]]:
    """The run's samples that have human labels, with the labels."""
    out = []
    for relpath in store.list_paths(SAMPLES_DIR):
        if not relpath.endswith("/sample.json"):
            continue
        sample = SampleRecord.model_validate(store.read_json(relpath))
        labels_path = sample_labels(sample.sample_id)
        if sample.run_id == run_id and store.exists(labels_path):
            labels = [HumanLabel.model_validate(row) for row in store.read_json(labels_path)["labels"]]
            out.append((sample, labels))
    return out


def write_validation(store: ResultsStore, record: ValidationRecord) -> None:
    """Record a judge's validation; it replaces the judge's earlier one."""
    store.write_json(validation_record(record.judge_id), record.model_dump(mode="json"))


def read_validations(store: ResultsStore) -> list[ValidationRecord]:
    """Every validation record of the store, by judge id.

    Raises:
        StoreError: A record does not parse (it names the file).
    """
    records = []
    for relpath in sorted(store.list_paths(VALIDATIONS_DIR)):
        if relpath.count("/") != 1 or not relpath.endswith(".json"):
            continue
        try:
            records.append(ValidationRecord.model_validate(store.read_json(relpath)))
        except ValidationError as error:
            raise StoreError(f"not a validation record: {error.errors()[0]['msg']}", path=store.url_for(relpath)) from None
    return records


def gating_judges(store: ResultsStore, requirements: JudgeRequirements) -> set[str]:
    """Ids of the judges whose validation record meets ``requirements``."""
    return {r.judge_id for r in read_validations(store) if all(c.ok for c in check_requirements(r, requirements))}
