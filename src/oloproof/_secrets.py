"""What counts as a credential, so it never reaches a parameter, a block or a record."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["has_secrets", "public_options", "public_settings"]

_SECRET = re.compile(r"(key|secret|token|password|credential|session)", re.IGNORECASE)


def public_options(options: Any) -> Any:
    """``options`` without any entry whose name looks like a credential."""
    if isinstance(options, dict):
        return {
            name: public_options(value)
            for name, value in options.items()
            if name == "endpoint_url" or not _SECRET.search(str(name))
        }
    return options


def has_secrets(options: Any) -> bool:
    """Whether ``options`` holds anything that looks like a credential."""
    return public_options(options) != options


def public_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``dotted.key: value`` settings without those that set a credential."""
    kept = {}
    for dotted, value in settings.items():
        head, *rest = dotted.split(".")
        if head == "storage_options":
            if any(part != "endpoint_url" and _SECRET.search(part) for part in rest):
                continue
            value = public_options(value)
        kept[dotted] = value
    return kept
