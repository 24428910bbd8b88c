"""Canonical JSON: one text for one value.

Content hashes (stage identities, diagnosis and comparison ids) and the JSON
documents of the results store are both written through :func:`canonical_json`,
so a value always hashes and stores the same way.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from oloproof._exceptions import StoreError

__all__ = ["canonical_json", "content_hash"]


def content_hash(value: Any) -> str:
    """Return the sha256 hex digest of ``value``'s canonical JSON."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """Serialise a value as canonical JSON text.

    Keys are sorted, non-ASCII characters are kept as they are and no
    insignificant whitespace is emitted, so equal values give equal text.
    The text of a JSON-native value never changes: existing cache keys stay valid.

    Args:
        value: Any JSON-serialisable value; NumPy scalars and arrays are accepted
            and written as the Python values they hold.

    Returns:
        The JSON text.

    Raises:
        StoreError: The value cannot be represented as JSON, so it can be
            neither stored nor hashed.
    """
    try:
        return json.dumps(
            value,
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
            default=_to_python,
        )
    except (TypeError, ValueError) as error:
        raise StoreError(f"value is not JSON-serialisable: {error}") from error


def _to_python(value: Any) -> Any:
    # NumPy scalars and arrays both have tolist(); item() covers other array-likes
    # that hold a single value. Anything else has no JSON form.
    for name in ("tolist", "item"):
        method = getattr(value, name, None)
        if callable(method):
            return method()
    raise TypeError(f"object of type {type(value).__name__} is not JSON serialisable")
