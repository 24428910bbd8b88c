"""Write a finished run: tables first (from its batch parts), the manifest last.

The manifest's presence is what marks a run complete, so a run that crashes
while writing never looks complete to a reader.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.dataset import Case
from oloproof.records import CaseRow, ContextEntry, MetricRow, MetricSummary, RetrievalRow, RunManifest
from oloproof.stages._batch_part import BatchPart
from oloproof.store import CASES, JUDGMENTS, METRICS, RETRIEVALS, run_lease, run_manifest, run_table
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._results import CaseResult
from oloproof.tasks._retry import retry_io_only

__all__ = ["CHUNKED_TABLES", "case_rows", "metric_rows", "publish_report", "retrieval_rows", "write_run"]

CHUNKED_TABLES = (CASES, RETRIEVALS, JUDGMENTS)
"""The run tables written from batch parts' chunks (``metrics`` from the summary)."""

# A recorded context entry keeps where each passage came from, not its text
# (the text is in the ``retrievals`` table).
_CONTEXT_KEYS = tuple(ContextEntry.__annotations__)


def case_rows(run_id: str, results: list[CaseResult], facts: Mapping[tuple[str, int], Mapping[str, Any]],
              cases: Mapping[str, Case]) -> Iterator[CaseRow]:
    """One ``cases`` row per case (and repeat), one at a time (a large run never holds the
    table); ``facts`` by case id and repeat."""
    for result in results:
        case = cases[result.case_id]
        context = result.context
        yield CaseRow.pick(
            result.as_mapping(),
            **facts[result.case_id, result.repeat],
            run_id=run_id,
            input=case.input,
            expected=case.expected.model_dump(mode="json", exclude_none=True),
            metadata=case.metadata,
            context=None if context is None else [
                {key: p.get(key) for key in _CONTEXT_KEYS} for p in context
            ],
        )


def retrieval_rows(run_id: str, results: list[CaseResult], cases: Mapping[str, Case],
                   top_k: int | None) -> Iterator[RetrievalRow]:
    """One ``retrievals`` row per retrieved candidate (of each repeat that retrieved), one at a time."""
    for result in results:
        grades = {u.doc_id: u.grade for u in cases[result.case_id].expected.relevant or []}
        kept = {p["position"] for p in result.context or []}
        reasons = {p["position"]: p["reason"] for p in result.dropped or []}
        for position, passage in enumerate(result.candidates or [], start=1):
            yield RetrievalRow(
                run_id=run_id, case_id=result.case_id, position=position, repeat=result.repeat,
                doc_id=passage["doc_id"], chunk_id=passage.get("chunk_id"),
                score=passage.get("score"), text=passage.get("text"),
                in_top_k=top_k is not None and position <= top_k,
                in_context=position in kept, drop_reason=reasons.get(position),
                relevant_grade=grades.get(passage["doc_id"]),
            )


def metric_rows(run_id: str, metrics: list[MetricSummary]) -> Iterator[MetricRow]:
    """One ``metrics`` row per summarized metric; a key the table lacks is an error."""
    for metric in metrics:
        yield MetricRow(run_id=run_id, **metric)


@task(cache_policy=NO_CACHE, name="write-run", task_run_name="write run {manifest.run_id}", retries=3, retry_condition_fn=retry_io_only, retry_delay_seconds=1)
def write_run(env: RunEnvironment, manifest: RunManifest, parts: list[BatchPart],
              metrics: list[MetricSummary]) -> str:  # fmt: skip
    """Write the run's tables from its batch parts (given in batch order), then its manifest."""
    run_id = manifest.run_id
    # Held while the folder is written: `runs --incomplete --remove` never takes it from a live writer.
    with run_lease(env.store, run_id):
        for schema in CHUNKED_TABLES:
            chunks = (part.chunks[schema.name] for part in parts)
            env.store.write_table_chunks(run_table(run_id, schema.name), chunks, schema)
        rows = (row.as_mapping() for row in metric_rows(run_id, metrics))
        env.store.write_table(run_table(run_id, METRICS.name), rows, METRICS)
        env.store.write_json(run_manifest(run_id), manifest.model_dump(mode="json"))
    return run_id


@task(cache_policy=NO_CACHE, name="publish-report", task_run_name="publish report {manifest.run_id}")
def publish_report(manifest: RunManifest, metrics: list[MetricSummary], store_arguments: str = "") -> None:
    """A Prefect artifact with the metrics table, linked to the run id, for the UI.

    ``store_arguments`` (`` --project DIR``) end its commands, so they run from anywhere.
    """
    from prefect.artifacts import create_markdown_artifact

    from oloproof.report import render_run

    lines = render_run({**manifest.model_dump(mode="json"), "metrics": [m for m in metrics if m["slice"] is None]})
    system = manifest.system
    markdown = "\n".join([
        f"# Run `{manifest.run_id}`",
        (f"{system['name']} {system['version']} · index {system.get('index_version')} · "
         f"{manifest.case_count} cases"),
        "",
        "```",
        *lines[1:],
        "```",
        "",
        (f"Inspect: `oloproof show {manifest.run_id}{store_arguments}` · "
         f"`oloproof inspect {manifest.run_id}{store_arguments}`"),
    ])
    key = "oloproof-" + manifest.run_id.lower().replace("_", "-")
    create_markdown_artifact(markdown=markdown, key=key, description=f"Oloproof run {manifest.run_id}")
