"""Tasks of a diagnosis: read the parent run, label the failures, record the result."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import fsspec
from prefect import task
from prefect.cache_policies import NO_CACHE
from pydantic import JsonValue

from oloproof._exceptions import UsageError
from oloproof.diagnosis import (
    AGENT_FACTORS,
    Passes,
    RepeatedOutcome,
    case_passes,
    implicated_factor,
    label_case,
    passed_cases,
)
from oloproof.records import (
    DiagnosisLabelRow,
    ImplicatedEntry,
    LabelledFailures,
    RunRecords,
    StoredDiagnosis,
    StoredJudgment,
)
from oloproof.report import first_repeats, relevant_ids
from oloproof.stages._identity import content_hash
from oloproof.store import (
    DIAGNOSIS_LABELS,
    ResultsStore,
    diagnosis_labels,
    diagnosis_manifest,
    diagnosis_request,
    read_run_records,
)
from oloproof.tasks._retry import retry_io_only
from oloproof.transcripts import read_vendor_messages

__all__ = [
    "ChildRun",
    "find_diagnosis",
    "label_failures",
    "label_rows",
    "load_parent_run",
    "request_path",
    "write_diagnosis",
]


@dataclass(frozen=True)
class ChildRun:
    """A diagnosis's re-execution, as the diagnosis reads it back.

    Attributes:
        run_id: The child run.
        judgments: Its ``judgments`` rows.
    """

    run_id: str
    judgments: list[StoredJudgment]


def request_path(request: str) -> str:
    """Where a diagnosis request records the diagnosis that answered it."""
    return diagnosis_request(request)


@task(cache_policy=NO_CACHE, name="find-diagnosis", retries=2, retry_condition_fn=retry_io_only, retry_delay_seconds=1)
def find_diagnosis(store: ResultsStore, request: str) -> StoredDiagnosis | None:
    """The diagnosis already recorded for this exact request, if any (its JSON, as stored)."""
    if not store.exists(request_path(request)):
        return None
    diagnosis_id = store.read_json(request_path(request))["diagnosis_id"]
    return cast("StoredDiagnosis", store.read_json(diagnosis_manifest(diagnosis_id.removeprefix("sha256:"))))


@task(cache_policy=NO_CACHE, name="load-parent-run", retries=2, retry_condition_fn=retry_io_only, retry_delay_seconds=1)
def load_parent_run(store: ResultsStore, run_id: str) -> RunRecords:
    """The parent run's records; its dataset must be unchanged since the run."""
    records = read_run_records(store, run_id)
    manifest = records.manifest
    try:
        with fsspec.open(manifest.dataset, "rb") as handle:
            current = hashlib.sha256(handle.read()).hexdigest()
    except OSError as exc:
        raise UsageError(f"cannot read the run's dataset: {exc}", path=manifest.dataset) from None
    if current != manifest.dataset_sha256:
        raise UsageError(
            f"the dataset changed since run {run_id}; diagnosis re-executes the run's own cases",
            path=manifest.dataset,
        )
    return records


@task(cache_policy=NO_CACHE, name="label-failures")
def label_failures(
    parent: RunRecords, selected: list[str], runs: dict[str, ChildRun], criterion: str, threshold: float | None,
) -> LabelledFailures:
    """Label each selected case from its control and gold-context re-executions (with
    repeats, from their passes over the repeats: see `RepeatedOutcome`)."""
    recorded = first_repeats(parent.cases)
    control = passed_cases(runs["control"].judgments, criterion, threshold)
    gold = passed_cases(runs["gold_context"].judgments, criterion, threshold)
    repeated = repeated_outcomes(parent, runs["control"], runs["gold_context"], criterion, threshold)
    system = parent.manifest.system
    agent = system.get("kind") == "agent"
    # A rag run always has a top_k (`check_request` admits rag and agent runs); an agent has none.
    top_k = None if agent else cast(int, system["top_k"])
    tools = context_tool_names(system) if agent else ()
    labels = []
    for case_id in selected:
        relevant = relevant_ids(recorded[case_id])
        called = called_a_context_tool(_transcripts(parent, case_id), tools) if agent else None
        labels.append(label_case(case_id, control_passed=control.get(case_id, False),
                                 gold_passed=gold.get(case_id, False), recorded=recorded[case_id],
                                 relevant=relevant, top_k=top_k, called_context_tool=called,
                                 repeated=repeated.get(case_id) if repeated is not None else None))
    found = implicated_factor(labels)
    implicated: ImplicatedEntry | None = None
    if found is not None:
        implicated = {"factor": found[0], "count": found[1], "among": found[2]}
        if agent and found[0] in AGENT_FACTORS:
            implicated["experiments"] = list(AGENT_FACTORS[found[0]])
    return {
        "cases": [label.as_record() for label in labels],
        "recovered": sum(1 for c in labels if c.intervention_passed and not c.control_passed),
        "implicated": implicated,
    }


def repeated_outcomes(parent: RunRecords, control: ChildRun, intervention: ChildRun, criterion: str,
                      threshold: float | None) -> dict[str, RepeatedOutcome] | None:
    """With repeats, each case's passes in the run, its control and under the intervention;
    ``None`` for a run without them (each re-execution is then one verdict)."""
    manifest = parent.manifest
    if manifest.repeats == 1 and manifest.judge_repeats == 1:
        return None
    original = case_passes(parent.judgments, criterion, threshold)
    controls = case_passes(control.judgments, criterion, threshold)
    interventions = case_passes(intervention.judgments, criterion, threshold)
    none = Passes(passed=0, repeats=0)
    return {case_id: RepeatedOutcome(original=passes, control=controls.get(case_id, none),
                                     intervention=interventions.get(case_id, none))
            for case_id, passes in original.items()}  # fmt: skip


def _transcripts(parent: RunRecords, case_id: str) -> list[JsonValue]:
    """An agent case's recorded transcripts, one a repeat."""
    return [row.get("output_items") for row in parent.cases if row["case_id"] == case_id]


def context_tool_names(system: Mapping[str, JsonValue]) -> tuple[str, ...]:
    """The context tools an agent run's manifest declares."""
    tools = system.get("tools")
    return tuple(name for name, spec in (tools if isinstance(tools, dict) else {}).items()
                 if isinstance(spec, dict) and spec.get("context") is True)  # fmt: skip


def called_a_context_tool(transcripts: list[JsonValue], tools: tuple[str, ...]) -> bool:
    """Whether an agent's recorded transcripts (the vendor's message format; one a repeat)
    call a context tool: in any repeat."""
    return any(items is not None and any(call.name in tools for call, _ in read_vendor_messages(items).calls())
               for items in transcripts)  # fmt: skip


def diagnosis_id_of(record: StoredDiagnosis) -> str:
    """``sha256:`` of the diagnosis's canonical content (never its child run ids).

    Args:
        record: The record as it is stored: the id is the hash of that JSON.
    """
    content = {
        "parent_run_id": record["parent_run_id"], "criterion": record["criterion"], "threshold": record["threshold"],
        "intervention": record["intervention"], "settings": record["settings"], "labels_from": record["labels_from"],
        "without_gold": record["without_gold"],
        "cases": [{key: case[key] for key in sorted(case) if key != "child_runs"} for case in record["cases"]],
    }  # fmt: skip
    return "sha256:" + content_hash(content)


def label_rows(record: StoredDiagnosis) -> list[DiagnosisLabelRow]:  # rows are checked here
    """One ``diagnosis_labels`` row per diagnosed case of a diagnosis record."""
    return [DiagnosisLabelRow.pick(case, diagnosis_id=record["diagnosis_id"]) for case in record["cases"]]


@task(cache_policy=NO_CACHE, name="write-diagnosis", retries=3, retry_condition_fn=retry_io_only, retry_delay_seconds=1)
def write_diagnosis(store: ResultsStore, record: StoredDiagnosis, request: str) -> str:  # stored as it is
    """Write the labels, the diagnosis (``record``, its JSON as built), then the request index;
    returns the id."""
    hexid = record["diagnosis_id"].removeprefix("sha256:")
    rows = label_rows(record)
    store.write_table(diagnosis_labels(hexid), [row.as_mapping() for row in rows], DIAGNOSIS_LABELS)
    store.write_json(diagnosis_manifest(hexid), record)
    store.write_json(request_path(request), {"diagnosis_id": record["diagnosis_id"]})
    return record["diagnosis_id"]
