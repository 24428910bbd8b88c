"""What the flows show on their flow-run pages in the Prefect UI, and the HTML report
each writes into the store beside what it recorded.

Every flow's page gets a link artifact to its HTML report (``runs/<id>/report.html``,
``diagnoses/<id>/report.html``, ``comparisons/<id>/report.html``, on S3 too) and the
failure funnel as a table; a diagnosis adds its labels, a comparison its decisions and
gate, and a run started by a deployment the criterion's trend across the store's runs.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from oloproof.records import ComparisonRecord, StoredDiagnosis
from oloproof.report import Funnel, ReportPage, TrendRow, render_html
from oloproof.store import ResultsStore, comparison_report, diagnosis_report, run_report
from oloproof.tasks._report_page import build_report_page
from oloproof.tasks._retry import retry_io_only

__all__ = ["artifact_key", "publish_comparison", "publish_diagnosis", "publish_run_report", "publish_trend"]

TREND_RUNS = 20
"""How many of the store's runs a deployment's trend artifact shows."""


def artifact_key(kind: str, identity: str) -> str:
    """A Prefect artifact key: lower-case letters, digits and dashes only."""
    cleaned = "".join(c if c.isalnum() else "-" for c in identity.lower().removeprefix("sha256:"))
    return f"oloproof-{kind}-{cleaned}"[:100]


def _link(store: ResultsStore, relpath: str) -> str:
    """Where a person opens the report: a ``file://`` URL for a local store, else the store's URL."""
    if store.location.is_local:
        return Path(store.location.full_path(relpath)).resolve().as_uri()
    return store.location.url_for(relpath)


def _funnel_markdown(funnel: Funnel) -> str:
    """The funnel as a Markdown table (the UI renders Markdown artifacts in place)."""
    rows = [f"| {step.title} | {step.count} | {len(step.lost) or ''} | "
            + ", ".join(f"{label} {n}" for label, n in sorted(step.labels.items())) + " |"
            for step in funnel.steps]  # fmt: skip
    return "\n".join([f"# Failure funnel of {funnel.criterion}: " + " → ".join(str(c) for c in funnel.counts), "",
                      "| step | cases | lost | lost cases by label |", "|---|---:|---:|---|", *rows])


def _publish_page(store: ResultsStore, page: ReportPage, relpath: str, kind: str, identity: str) -> str:
    """Write the page's HTML into the store, then link it and table its funnel on the flow-run page."""
    from prefect.artifacts import create_link_artifact, create_markdown_artifact

    store.write_bytes(relpath, render_html(page).encode("utf-8"))
    link = _link(store, relpath)
    create_link_artifact(link=link, link_text=f"HTML report of {identity}", key=artifact_key(f"{kind}-report", identity),
                         description=f"Self-contained HTML report ({relpath})")  # fmt: skip
    if page.funnels:
        funnel = page.funnels[0]
        create_markdown_artifact(markdown=_funnel_markdown(funnel), key=artifact_key(f"{kind}-funnel", identity),
                                 description=f"Failure funnel of {funnel.criterion}: "
                                             + " → ".join(str(c) for c in funnel.counts))  # fmt: skip
    return link


@task(cache_policy=NO_CACHE, name="publish-html-report", task_run_name="publish html report {run_id}", retries=2,
      retry_condition_fn=retry_io_only, retry_delay_seconds=1)  # fmt: skip
def publish_run_report(store: ResultsStore, run_id: str) -> str:
    """The run's HTML report, written beside its tables and linked on the flow-run page; returns its link."""
    return _publish_page(store, build_report_page(store, run_id), run_report(run_id), "run", run_id)


@task(cache_policy=NO_CACHE, name="publish-diagnosis", retries=2, retry_condition_fn=retry_io_only,
      retry_delay_seconds=1)  # fmt: skip
def publish_diagnosis(store: ResultsStore, record: StoredDiagnosis, lines: list[str], with_page: bool = True) -> None:
    """A diagnosis's labels on its flow-run page, and (``with_page``) its run's report labelled by it."""
    from prefect.artifacts import create_markdown_artifact

    diagnosis_id = record["diagnosis_id"]
    create_markdown_artifact(markdown="\n".join([f"# Diagnosis of run `{record['parent_run_id']}`", "", "```",
                                                 *lines, "```"]),
                             key=artifact_key("diagnosis", diagnosis_id), description=f"Diagnosis {diagnosis_id}")
    if with_page:
        page = build_report_page(store, record["parent_run_id"], diagnosis_id=diagnosis_id)
        _publish_page(store, page, diagnosis_report(diagnosis_id.removeprefix("sha256:")), "diagnosis", diagnosis_id)


@task(cache_policy=NO_CACHE, name="publish-comparison", retries=2, retry_condition_fn=retry_io_only,
      retry_delay_seconds=1)  # fmt: skip
def publish_comparison(store: ResultsStore, record: ComparisonRecord, lines: list[str], with_page: bool = True) -> None:
    """A comparison's decisions and gate on its flow-run page, and (``with_page``) its candidate's report with it."""
    from prefect.artifacts import create_markdown_artifact

    comparison_id = record["comparison_id"]
    gate = record.get("gate")
    head = f"# Gate: {gate}" if gate else "# Comparison (no policy: no gate)"
    runs = f"`{record['candidate_run_id']}` against `{record['baseline_run_id']}`"
    create_markdown_artifact(markdown="\n".join([head, "", runs, "", "```", *lines, "```"]),
                             key=artifact_key("comparison", comparison_id),
                             description=f"Comparison {comparison_id}")  # fmt: skip
    if with_page:
        page = build_report_page(store, record["candidate_run_id"], comparison_id=comparison_id)
        _publish_page(store, page, comparison_report(comparison_id.removeprefix("sha256:")), "comparison",
                      comparison_id)  # fmt: skip


@task(cache_policy=NO_CACHE, name="publish-trend", retries=2, retry_condition_fn=retry_io_only,
      retry_delay_seconds=1)  # fmt: skip
def publish_trend(store: ResultsStore, run_id: str, rows: list[TrendRow], criterion: str) -> None:
    """The criterion across the store's last runs, as a table on a nightly run's page."""
    from prefect.artifacts import create_table_artifact

    table = [{"run": row.run_id, "created": row.created_at[:19], "version": row.version,
              "index": row.index_version or "none", criterion: row.shown, "interval": row.shown_interval,
              "changed": "yes" if row.changed else "",
              "against the run before": "" if row.difference is None else
              f"{row.difference:+.1f} points [{row.difference_low:+.1f}, {row.difference_high:+.1f}], "
              + ("distinguishable" if row.distinguishable else "not distinguishable")}
             for row in rows]  # fmt: skip
    create_table_artifact(table=table, key=artifact_key("trend", run_id),
                          description=f"{criterion} across the store's last {len(rows)} runs")
