"""A run's judgments in the catalogue's result shape, one line per row.

Each row becomes ``{"id": …, "results": [...]}``; each result is the shape the
vendor's evaluators print (``type``, ``name``, ``metric``, ``score``, ``label``,
``reason``, ``threshold``, ``passed``), so dashboards reading that shape keep
working. ``name`` is the criterion (a testing criterion's ``name``); ``metric``
the evaluator's metric. Two keys are Oloproof's own: ``status`` (``observed``,
``excluded`` or ``missing``) and, for rows not scored, why (``reason``).
"""

from __future__ import annotations

from collections.abc import Iterable

from oloproof.config._criteria import BUILTINS, CRITERION_TYPE
from oloproof.records import CatalogueEntry, CatalogueResult, StoredJudgment, StoredManifest

__all__ = ["catalogue_results"]

_CATALOGUE_TYPES = frozenset(BUILTINS.values())


def catalogue_results(manifest: StoredManifest, judgments: Iterable[StoredJudgment]) -> list[CatalogueEntry]:
    """Judgment rows grouped by case, in the catalogue's result shape.

    Args:
        manifest: The run manifest (its ``evaluators`` give each criterion's evaluator).
        judgments: The run's judgment rows.

    Returns:
        One ``{"id", "results"}`` entry per case, in case-id order.
    """
    # A multi-output evaluator's criteria carry their own metric; a single output's
    # metric is the evaluator type's name.
    metrics = {str(entry["criterion"]): entry.get("metric") for entry in manifest.get("evaluators", [])}
    by_case: dict[str, list[CatalogueResult]] = {}
    for row in sorted(judgments, key=lambda r: (str(r["case_id"]), str(r["criterion"]))):
        result: CatalogueResult = {
            "type": CRITERION_TYPE if row["evaluator"] in _CATALOGUE_TYPES else "oloproof",
            "name": row["criterion"],
            "metric": metrics.get(str(row["criterion"])) or row["evaluator"],
            "score": row.get("score"),
            "label": row.get("label"),
            "reason": row.get("reason"),
            "threshold": row.get("threshold"),
            "passed": row.get("passed"),
            "status": row["status"],
        }
        by_case.setdefault(str(row["case_id"]), []).append(result)
    return [{"id": case_id, "results": results} for case_id, results in by_case.items()]
