"""Before a run: can each provider's endpoint be reached at all?

Only a TCP connection is tried, no HTTP request: it costs no tokens, needs no
key, and tells "nothing listens there" apart from everything that can only
fail per call.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit

__all__ = ["public_url", "reach"]

CONNECT_TIMEOUT_S = 3.0
"""How long the TCP connection may take."""


def public_url(url: str) -> str:
    """``url`` without any ``user:password@`` part, fit for a message."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def reach(url: str, *, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """Open (and close) a TCP connection to ``url``'s host and port.

    Returns:
        ``None`` when the connection was made, else why not, in a few words.
    """
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout_s):
            return None
    except TimeoutError:
        return f"no answer within {timeout_s:g} s"
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
