"""What kind of failure a judge call ended in, from the SDK's error or from its message.

A connection that was never made (refused, timed out while connecting, a host
name that does not resolve) is told apart from everything that happens once a
provider is reached: only the former can mean the provider is gone. A judge
call's error message is one line the pool writes; `error_kind` names its kind
from that line, so a run's summary can count errors by kind from the judgment
rows alone.
"""

from __future__ import annotations

import errno
import re
import socket
from urllib.parse import urlsplit, urlunsplit

from oloproof.providers._preflight import public_url

__all__ = ["CONNECT_FAILURES", "UNREACHABLE", "connect_failure", "error_kind", "request_url"]

UNREACHABLE = "provider unreachable"
"""How the error of a call the circuit breaker stopped begins."""

CONNECT_FAILURES = ("connection refused", "connect timeout", "DNS failure", "cannot connect")
"""The kinds of a connection never made, most specific first; a message of one begins with it."""

_CHAIN_LIMIT = 32
"""How many causes of an SDK error are looked through (the chains seen are 4 or 5 long)."""

# Message beginnings the pool, the retry policy and the reply checks write, and their kinds.
_PREFIXES = (
    (UNREACHABLE, UNREACHABLE),
    *((kind, kind) for kind in CONNECT_FAILURES),
    ("connection error", "connection error"),
    ("request timed out", "request timed out"),
    ("truncated reply", "truncated reply"),
    ("refused by the content filter", "content filter"),
    ("the model refused", "model refusal"),
    ("unusable reply", "unusable reply"),
    ("invalid reply", "invalid reply"),
    ("the reply does not judge", "incomplete reply"),
    ("unexpected ", "unexpected error"),
)
_HTTP = re.compile(r"HTTP (\d{3})(?: ([^\s:()]+))?")
_OTHER_CHARS = 60


def connect_failure(exc: BaseException) -> str | None:
    """The kind of connection failure behind an SDK error, if no connection was made.

    The SDKs wrap the transport's errors (``ConnectError``, ``ConnectTimeout``)
    around the socket's own (``ConnectionRefusedError``, ``socket.gaierror``);
    the chain of causes, and the members of an exception group (one per address
    tried), are looked through.

    Returns:
        ``connection refused``, ``DNS failure``, ``connect timeout`` or
        ``cannot connect`` (any other failure to connect, e.g. a TLS handshake);
        ``None`` when a connection was made (a reply, a read timeout, a dropped
        connection) or ``exc`` is not a transport error.
    """
    found: set[str] = set()
    pending: list[BaseException] = [exc]
    seen: set[int] = set()
    while pending and len(seen) < _CHAIN_LIMIT:
        error = pending.pop()
        if id(error) in seen:
            continue
        seen.add(id(error))
        name = type(error).__name__
        if isinstance(error, ConnectionRefusedError) or (
            isinstance(error, OSError) and error.errno == errno.ECONNREFUSED
        ):
            found.add("connection refused")
        elif isinstance(error, socket.gaierror):
            found.add("DNS failure")
        elif name == "ConnectTimeout":
            found.add("connect timeout")
        elif name == "ConnectError":
            found.add("cannot connect")
        pending += [cause for cause in (error.__cause__, error.__context__) if cause is not None]
        if isinstance(error, BaseExceptionGroup):
            pending += list(error.exceptions)
    return next((kind for kind in CONNECT_FAILURES if kind in found), None)


def request_url(exc: BaseException) -> str | None:
    """The URL an SDK error's request went to, without credentials or query; ``None`` if unknown."""
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    if url is None:
        return None
    parts = urlsplit(public_url(str(url)))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def error_kind(message: str | None) -> str:
    """The kind of a judge call's error, from its one-line message.

    Examples: ``connection refused``, ``provider unreachable``, ``HTTP 429
    rate_limit_exceeded``, ``request timed out``, ``invalid reply``. A message
    of no known shape is its own kind: its text up to the first ``:`` or ``(``.
    """
    text = " ".join((message or "").split())
    for prefix, kind in _PREFIXES:
        if text.startswith(prefix):
            return kind
    http = _HTTP.match(text)
    if http is not None:
        return f"HTTP {http[1]}" + (f" {http[2]}" if http[2] else "")
    head = re.split(r"[:(]", text, maxsplit=1)[0].strip()
    return head[:_OTHER_CHARS] or "error"
