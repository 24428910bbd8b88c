"""Per-case facts the report slices by: relevant position and truncation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import JsonValue

from oloproof.dataset import Case
from oloproof.records import CaseFacts, StoredCase

__all__ = ["best_relevant_position", "case_facts", "first_repeats", "relevant_ids", "slice_value", "slice_values"]


def best_relevant_position(case: Case, candidates: Sequence[Mapping[str, JsonValue]] | None) -> int | None:
    """1-based position of the first relevant document among the candidates."""
    if not candidates or not case.expected.relevant:
        return None
    relevant = {unit.doc_id for unit in case.expected.relevant if unit.grade > 0}
    for position, passage in enumerate(candidates, start=1):
        if passage["doc_id"] in relevant:
            return position
    return None


def case_facts(
    case: Case,
    candidates: Sequence[Mapping[str, JsonValue]] | None,
    dropped: Sequence[Mapping[str, JsonValue]] | None,
    top_k: int | None,
) -> CaseFacts:
    """``best_relevant_position``, the ``relevant_position`` label and ``context_truncated``.

    Args:
        case: The case.
        candidates: What the retriever returned; ``None`` when the case was not executed.
        dropped: The candidates assembly left out, with their reasons.
        top_k: The cut-off of the context.
    """
    if candidates is None:
        return {"best_relevant_position": None, "relevant_position": None, "context_truncated": None}
    position = best_relevant_position(case, candidates)
    if not case.expected.relevant:
        label = "unlabelled"
    elif position is None:
        label = "none"
    elif top_k is not None and position > top_k:
        label = "beyond_top_k"
    else:
        label = str(position)
    truncated = any(item["reason"] == "token_budget" for item in dropped or [])
    return {
        "best_relevant_position": position,
        "relevant_position": label,
        "context_truncated": truncated,
    }


def slice_value(name: str, case: Case, facts: CaseFacts) -> str | None:
    """The value of slice ``name`` for a case (``None`` when it has none)."""
    if name == "relevant_position":
        return facts["relevant_position"]
    if name == "context_truncated":
        value = facts["context_truncated"]
        return None if value is None else str(value).lower()
    field = name.removeprefix("metadata.")
    current: object = case.metadata
    for part in field.split("."):
        if not isinstance(current, dict) or part not in current:
            return None
        current = current[part]
    return None if current is None else str(current)


def slice_values(cases: Sequence[StoredCase], name: str) -> dict[str, str]:
    """Each baseline case's value of slice ``name`` (cases without one are left out)."""
    values = {}
    for row in cases:
        found: object
        if name == "relevant_position":
            found = row.get("relevant_position")
            value = None if found is None else str(found).lower()
        elif name == "context_truncated":
            found = row.get("context_truncated")
            value = None if found is None else str(found).lower()
        else:
            found = row.get("metadata") or {}
            for part in name.removeprefix("metadata.").split("."):
                found = found.get(part) if isinstance(found, dict) else None
            value = None if found is None else str(found)
        if value is not None:
            values[row["case_id"]] = value
    return values


def relevant_ids(case: StoredCase) -> set[str]:
    """The document ids a stored case labels relevant (grade above 0; a unit without a grade counts)."""
    units = (case.get("expected") or {}).get("relevant")
    if not isinstance(units, list):
        return set()
    return {str(u["doc_id"]) for u in units
            if isinstance(u, dict) and "doc_id" in u and _grade(u.get("grade", 1)) > 0}  # fmt: skip


def _grade(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def first_repeats(cases: Sequence[StoredCase]) -> dict[str, StoredCase]:
    """Each case's row of its first repeat (rows of runs made before repeats: their one row)."""
    return {row["case_id"]: row for row in sorted(cases, key=lambda r: r.get("repeat") or 0, reverse=True)}
