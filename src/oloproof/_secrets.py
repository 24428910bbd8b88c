"""What counts as a credential, so it never reaches a parameter, a block or a record."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "has_secrets", "public_options", "public_settings", "redact_url"]

REDACTED = "REDACTED"

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


def redact_url(url: str) -> str:
    """``url`` as it may be recorded: no password in its user info, no query values.

    A presigned or SAS URL carries its credentials in the query string
    (``X-Amz-Signature``, ``sig``, ``token`` …): every query value is replaced, the
    names kept, so the URL still says what it was. What identifies a dataset is its
    content hash, never its URL.
    """
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    if not isinstance(url, str) or "://" not in url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        name = user.split(":", 1)[0]
        netloc = f"{name}:{REDACTED}@{host}" if ":" in user else f"{REDACTED}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(name, REDACTED) for name, _ in pairs], safe="-_.")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def public_settings(settings: Mapping[str, object]) -> dict[str, object]:
    """``dotted.key: value`` settings without those that set a credential."""
    kept: dict[str, object] = {}
    for dotted, value in settings.items():
        head, *rest = dotted.split(".")
        if head == "storage_options":
            if any(part != "endpoint_url" and _SECRET.search(part) for part in rest):
                continue
            value = public_options(value)
        if dotted in ("dataset", "results") and isinstance(value, str):
            value = redact_url(value)
        kept[dotted] = value
    return kept
