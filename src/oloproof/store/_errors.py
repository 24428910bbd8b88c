"""Translation of filesystem, object-store and network errors into store errors."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from oloproof._exceptions import NotFoundError, OloproofError, StoreError

__all__ = ["endpoint_of", "guard", "is_connection_error", "one_line", "translate"]

_CONNECTION_ERRORS = frozenset(
    {
        "ClientConnectorError",
        "ClientOSError",
        "ConnectTimeoutError",
        "ConnectionClosedError",
        "ConnectionError",
        "EndpointConnectionError",
        "ReadTimeoutError",
        "ServerDisconnectedError",
        "ServerTimeoutError",
    }
)


def one_line(error: BaseException) -> str:
    """The first non-empty line of an error's message, or its type's name.

    DuckDB and botocore messages run over several lines; the CLI prints one.
    """
    line = _first_line(error)
    return line if line is not None else type(error).__name__


def is_connection_error(error: BaseException) -> bool:
    """Whether an error means the storage endpoint could not be reached."""
    if isinstance(error, ConnectionError | TimeoutError):
        return True
    return any(cls.__name__ in _CONNECTION_ERRORS for cls in type(error).__mro__)


def endpoint_of(storage_options: Mapping[str, Any]) -> str | None:
    """The custom endpoint a store talks to, without any user-info part.

    Args:
        storage_options: The options the filesystem was created with.

    Returns:
        The endpoint URL from ``endpoint_url``, ``client_kwargs.endpoint_url``
        or the ``AWS_ENDPOINT_URL_S3``/``AWS_ENDPOINT_URL`` environment
        variables, or None for the provider's default endpoint.
    """
    client_kwargs = storage_options.get("client_kwargs") or {}
    endpoint = storage_options.get("endpoint_url") or (
        client_kwargs.get("endpoint_url") if isinstance(client_kwargs, Mapping) else None
    )
    endpoint = endpoint or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get(
        "AWS_ENDPOINT_URL"
    )
    if not endpoint:
        return None
    parts = urlsplit(str(endpoint))
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def translate(
    error: BaseException,
    *,
    url: str,
    action: str,
    endpoint: str | None = None,
    missing_is_lookup: bool = True,
) -> StoreError:
    """Turn an error from a filesystem call into one :class:`StoreError`.

    Args:
        error: The error the filesystem raised.
        url: The URL of the object or store the call was about.
        action: What was being done, e.g. ``"read"``; starts the message.
        endpoint: The custom endpoint, named when it cannot be reached.
        missing_is_lookup: Whether a missing object means :class:`NotFoundError`
            (reads) rather than a missing bucket or directory (writes, listings).

    Returns:
        The error to raise (``raise translate(...) from error``).
    """
    if isinstance(error, StoreError):
        return error
    if isinstance(error, OloproofError):
        return StoreError(str(error), path=url)
    if isinstance(error, FileNotFoundError):
        if missing_is_lookup:
            return NotFoundError(f"cannot {action}: no such object", path=url)
        return StoreError(
            f"cannot {action}: the bucket or directory does not exist ({_detail(error)})",
            path=url,
        )
    if isinstance(error, PermissionError):
        return StoreError(
            f"cannot {action}: access denied; check the credentials and their permissions "
            f"({_detail(error)})",
            path=url,
        )
    if is_connection_error(error):
        where = f" at {endpoint}" if endpoint else ""
        return StoreError(
            f"cannot {action}: the storage endpoint{where} is unreachable ({_detail(error)})",
            path=url,
        )
    return StoreError(f"cannot {action}: {_detail(error)}", path=url)


@contextmanager
def guard(
    *,
    url: str,
    action: str,
    endpoint: str | None = None,
    missing_is_lookup: bool = True,
) -> Iterator[None]:
    """Run a block, translating any error it raises with :func:`translate`."""
    try:
        yield
    except Exception as error:
        raise translate(
            error,
            url=url,
            action=action,
            endpoint=endpoint,
            missing_is_lookup=missing_is_lookup,
        ) from error


def _detail(error: BaseException) -> str:
    line = _first_line(error)
    return type(error).__name__ if line is None else f"{type(error).__name__}: {line}"


def _first_line(error: BaseException) -> str | None:
    for line in str(error).splitlines():
        if line.strip():
            return line.strip()
    return None
