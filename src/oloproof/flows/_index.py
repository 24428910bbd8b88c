"""The flow an index rebuild triggers: evaluate a project at the new ``index_version``.

``index_version`` is part of every retrieval identity, so the evaluation can
never be served retrievals cached against the old index.
"""

from __future__ import annotations

from prefect import flow

from oloproof._exceptions import ConfigError
from oloproof.flows._run import evaluate
from oloproof.records import RunReport

__all__ = ["evaluate_on_index_update"]


@flow(name="oloproof-index-updated", flow_run_name="index {index_version} updated", validate_parameters=False)
def evaluate_on_index_update(project: str = ".", index_version: str = "", results: str | None = None) -> RunReport:
    """Evaluate ``project`` with ``system.rag.index_version`` set to the event's version.

    Raises:
        ConfigError: The event carried no ``index_version``.
    """
    if not str(index_version or "").strip():
        raise ConfigError("the index event carries no index_version", path="event.payload", field="index_version")
    return evaluate(project=project or ".", index_version=str(index_version), results=results or None)
