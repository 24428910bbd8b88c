"""Publishing a flow's HTML report and artifacts after its record is written.

The record (run, diagnosis, comparison, sweep) is in the store before anything here
runs, so a report that cannot be written is a warning on the flow run, never a
failed flow: nothing recorded is lost for want of a page.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from prefect import get_run_logger
from prefect.context import FlowRunContext

from oloproof.records import ComparisonRecord, MetricSummary, RunManifest, StoredDiagnosis
from oloproof.store import ResultsStore
from oloproof.tasks._artifacts import (
    TREND_RUNS,
    publish_comparison,
    publish_diagnosis,
    publish_run_report,
    publish_trend,
)

__all__ = [
    "PAGE_MAX_CASES",
    "publish_comparison_pages",
    "publish_diagnosis_pages",
    "publish_run_pages",
    "publish_sweep_page",
]

PAGE_MAX_CASES = 20_000
"""The most cases a run flow writes an HTML report of by itself: a larger run's report
reads every table back, and is written on demand (``oloproof report RUN``) instead."""


def _warn_on_failure(what: str, publish: Callable[[], Any]) -> None:
    """Publish inside a flow run only (its pages are the flow run's), warning on failure."""
    if FlowRunContext.get() is None:
        return
    try:
        publish()
    except Exception as error:  # noqa: BLE001 - the record is written: a page that fails must not fail the flow
        get_run_logger().warning("%s is recorded; its HTML report or artifacts could not be published: %s: %s",
                                 what, type(error).__name__, error)  # fmt: skip


def _deployed() -> bool:
    """Whether this flow run was started by a deployment (a nightly schedule, an index event),
    itself or as a subflow of one: a deployment's process runs with ``PREFECT__FLOW_RUN_ID``."""
    context = FlowRunContext.get()
    if context is not None and context.flow_run is not None and context.flow_run.deployment_id is not None:
        return True
    return bool(os.environ.get("PREFECT__FLOW_RUN_ID"))


def _trend_criterion(metrics: list[MetricSummary]) -> str | None:
    overall = [m for m in metrics if m["slice"] is None]
    chosen = next((m for m in overall if m["kind"] == "proportion"), overall[0] if overall else None)
    return None if chosen is None else chosen["criterion"]


def publish_run_pages(store: ResultsStore, manifest: RunManifest, metrics: list[MetricSummary]) -> None:
    """A user's run: its HTML report and, started by a deployment, its criterion's trend."""
    if manifest.kind != "run":  # a diagnosis's or a sweep's child run: its parent publishes
        return

    def publish() -> None:
        if manifest.case_count > PAGE_MAX_CASES:
            get_run_logger().info("Run %s has %d cases: its HTML report is written on demand (oloproof report %s)",
                                  manifest.run_id, manifest.case_count, manifest.run_id)  # fmt: skip
        else:
            publish_run_report.submit(store, manifest.run_id).result()
        criterion = _trend_criterion(metrics)
        if _deployed() and criterion is not None:
            from oloproof.tasks._trend import criterion_trend

            rows = criterion_trend(store, criterion, last=TREND_RUNS, system_name=str(manifest.system.get("name")),
                                   until=manifest.model_dump(mode="json")["created_at"])  # fmt: skip
            publish_trend.submit(store, manifest.run_id, rows, criterion).result()

    _warn_on_failure(f"Run {manifest.run_id}", publish)


def _small_enough(store: ResultsStore, run_id: str) -> bool:
    """Whether a run is small enough for a flow to write its report by itself (`PAGE_MAX_CASES`)."""
    from oloproof.store import run_manifest

    return int(store.read_json(run_manifest(run_id)).get("case_count") or 0) <= PAGE_MAX_CASES


def publish_diagnosis_pages(store: ResultsStore, record: StoredDiagnosis) -> None:
    """A diagnosis's labels, and its run's report labelled by it."""
    from oloproof.diagnosis import render_diagnosis

    _warn_on_failure(f"Diagnosis {record['diagnosis_id']}", lambda: publish_diagnosis.submit(
        store, record, render_diagnosis(record), _small_enough(store, record["parent_run_id"])).result())


def publish_comparison_pages(store: ResultsStore, record: ComparisonRecord) -> None:
    """A comparison's decisions and gate, and its candidate's report with it."""
    from oloproof.comparison import render_comparison

    _warn_on_failure(f"Comparison {record['comparison_id']}", lambda: publish_comparison.submit(
        store, record, render_comparison(record), _small_enough(store, record["candidate_run_id"])).result())


def publish_sweep_page(record: dict[str, Any]) -> None:
    """A sweep's table and claim on its flow-run page."""
    from prefect.artifacts import create_markdown_artifact

    from oloproof.report import render_table
    from oloproof.sweep import render_sweep
    from oloproof.tasks._artifacts import artifact_key

    lines = render_sweep(record, render_table)
    _warn_on_failure(f"Sweep {record['sweep_id']}", lambda: create_markdown_artifact(
        markdown="\n".join(["# Sweep", "", "```", *lines, "```"]), key=artifact_key("sweep", str(record["sweep_id"])),
        description=f"Sweep {record['sweep_id']}"))  # fmt: skip
