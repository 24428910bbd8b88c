"""Reading dotted fields out of outputs and expectations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import JsonValue

__all__ = ["MISSING", "cited_ids", "get_field", "query_text", "relevance_labels", "text_field"]

MISSING = object()


def get_field(value: Any, path: str | None) -> Any:
    """Return ``value`` at the dotted ``path`` (``None`` path: the value itself).

    Returns:
        The value, or ``MISSING`` when any step of the path is absent.
    """
    if path is None or path == "":
        return value
    current = value
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return MISSING
    return current


def cited_ids(output: Any, path: str) -> list[str]:
    """The ids ``output`` cites at ``path``: a list of ids, or one id; none when absent."""
    cited = get_field(output, path)
    if cited is MISSING or cited is None:
        return []
    return [str(item) for item in cited] if isinstance(cited, list) else [str(cited)]


def text_field(value: Any, path: str | None) -> str | None:
    """``value`` at ``path`` as text; ``None`` when absent or null."""
    found = get_field(value, path)
    if found is MISSING or found is None:
        return None
    return found if isinstance(found, str) else str(found)


def relevance_labels(expected: Mapping[str, JsonValue]) -> list[dict[str, JsonValue]]:
    """The ``relevant`` labels of a case's ``expected``: objects with ``doc_id``,
    ``chunk_id`` and ``grade`` (the dataset checked their shape)."""
    relevant = expected.get("relevant")
    return [item for item in relevant if isinstance(item, dict)] if isinstance(relevant, list) else []


def query_text(case_input: Any, path: str | None) -> str | None:
    """A case's query: a string input is the query itself, else the input at ``path``."""
    return case_input if isinstance(case_input, str) else text_field(case_input, path)
