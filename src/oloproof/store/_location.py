"""Where a results store is: its URL, fsspec filesystem and root.

A store is addressed by a URL: a local path (the default, e.g.
``/abs/project/.oloproof/results``) or any fsspec URL such as
``s3://bucket/prefix`` or ``memory://x``. Credentials and endpoints come from
the environment (``AWS_*`` variables, read by s3fs itself) or from
``storage_options``; they are held in memory only and never written to the store.
"""

from __future__ import annotations

import logging
import os
from contextlib import AbstractContextManager
from typing import Any

import fsspec
from fsspec.core import split_protocol, url_to_fs
from fsspec.implementations.local import LocalFileSystem

from oloproof._exceptions import ConfigError, StoreError
from oloproof.store._errors import endpoint_of, guard, one_line
from oloproof.store._layout import validate_relpath

__all__ = ["StoreLocation"]

_log = logging.getLogger("oloproof.store")

_WAITED_FOR = frozenset({"ReadTimeoutError", "ConnectTimeoutError"})
"""Failures that took a whole timeout: the ones a retry notice is for."""

_CACHED_LISTING_PROTOCOLS = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl"})

S3_CONNECT_TIMEOUT_S = 10.0
"""Default seconds to open a connection to an S3 endpoint (``config_kwargs.connect_timeout``)."""
S3_READ_TIMEOUT_S = 10.0
"""Default seconds to wait for an S3 endpoint's answer (``config_kwargs.read_timeout``)."""
S3_ATTEMPTS = 2
"""Default tries of one S3 request by botocore (``config_kwargs.retries.max_attempts``)."""
S3FS_RETRIES = 1
"""Default tries of one call by s3fs around botocore's (``retries``). An endpoint that accepts
connections and never answers fails within S3_ATTEMPTS x S3FS_RETRIES x S3_READ_TIMEOUT_S
(20 s) a call, instead of botocore's default 60 s x 5 inside s3fs's 5 tries."""


# fsspec's and botocore's keyword options, passed through as the user wrote them.
StorageOptions = dict[str, Any]
"""Options of an fsspec filesystem (``storage_options``) or a botocore setting."""


def _s3_defaults(options: StorageOptions) -> tuple[StorageOptions, int]:
    """``options`` with bounded timeouts wherever the user set none, and s3fs's tries
    (``retries``: an attribute of the filesystem, not a constructor option)."""
    options = dict(options)
    retries = options.pop("retries", S3FS_RETRIES)
    config = dict(options.get("config_kwargs") or {})
    config.setdefault("connect_timeout", S3_CONNECT_TIMEOUT_S)
    config.setdefault("read_timeout", S3_READ_TIMEOUT_S)
    config.setdefault("retries", {"max_attempts": S3_ATTEMPTS, "mode": "standard"})
    return {**options, "config_kwargs": config}, retries


def _noticing_session(
    url: str, endpoint: str | None, config: StorageOptions, session_kwargs: StorageOptions
) -> Any:
    """An aiobotocore session that logs a warning each time a request that timed out is retried.

    Without it a store that does not answer is silent for as long as the tries take.
    s3fs creates its client from this session (made with the options s3fs would give its
    own, e.g. ``profile``); a session the user passes is left alone.
    """
    from aiobotocore.session import AioSession

    retries = config.get("retries")
    tries = retries.get("max_attempts") if isinstance(retries, dict) else None
    where = url if endpoint is None else f"{url} at {endpoint}"

    def on_retry(attempts: int, caught_exception: BaseException | None = None,
                 operation: Any = None, **_: Any) -> None:  # fmt: skip
        if caught_exception is None or (isinstance(tries, int) and attempts >= tries):
            return  # an answer that botocore may retry, or the last try: the error says it
        if not {cls.__name__ for cls in type(caught_exception).__mro__} & _WAITED_FOR:
            return  # a refused connection is retried at once: nothing to wait through
        of = f" of {tries}" if isinstance(tries, int) else ""
        name = getattr(operation, "name", "a request")
        _log.warning("the results store %s did not answer %s (%s) on try %d%s; trying again",
                     where, name, type(caught_exception).__name__, attempts, of)  # fmt: skip

    session = AioSession(**session_kwargs)
    session.register("needs-retry.s3", on_retry)
    return session


class StoreLocation:
    """The filesystem and root of a store at a local path or fsspec URL.

    Args:
        url: A local path or an fsspec URL (``s3://bucket/prefix``, ``memory://x``).
        storage_options: Options for the fsspec filesystem (``endpoint_url``,
            ``key``, ``secret``, ``client_kwargs``, ``config_kwargs``, ...).
            They are never written into the store.

    Attributes:
        url: The URL the store was opened with.
        fs: The fsspec filesystem.
        root: The store's root path inside ``fs``.
        is_local: Whether ``fs`` is the local filesystem.
        is_s3: Whether the store is on S3 (``s3://`` or ``s3a://``, through s3fs).
        endpoint: The custom object-store endpoint, named in errors, or None.

    Raises:
        ConfigError: The URL names an unknown protocol or the options are invalid.
    """

    def __init__(self, url: str, storage_options: StorageOptions | None = None) -> None:
        if not isinstance(url, str) or not url.strip():
            raise ConfigError("the results store URL must be a non-empty string", path=str(url))
        options = dict(storage_options or {})
        protocol, _ = split_protocol(url)
        if protocol in _CACHED_LISTING_PROTOCOLS:
            # Other processes add objects at any time: never trust a cached listing.
            options.setdefault("use_listings_cache", False)
        retries = None
        if protocol in ("s3", "s3a"):
            options, retries = _s3_defaults(options)
        try:
            fs, root = url_to_fs(url, skip_instance_cache=True, **options)
        except (ValueError, TypeError, ImportError) as error:
            raise ConfigError(
                f"cannot open the results store: {one_line(error)}", path=url
            ) from error
        if retries is not None:
            fs.retries = retries
            if "session" not in options:
                fs.session = _noticing_session(
                    url, endpoint_of(options), options["config_kwargs"], getattr(fs, "kwargs", {})
                )
        self.url = url
        self.fs: fsspec.AbstractFileSystem = fs
        self.root: str = root.rstrip("/") or root
        self.is_local = isinstance(fs, LocalFileSystem)
        self.is_s3 = protocol in ("s3", "s3a")
        self.endpoint = None if self.is_local else endpoint_of(options)
        if self.is_local and os.path.exists(self.root) and not os.path.isdir(self.root):
            # A file is never a store: reading it as an empty one would answer "no runs".
            raise ConfigError("the results store is a file, not a folder", path=url)

    def __repr__(self) -> str:
        return f"StoreLocation({self.url!r})"

    def full_path(self, relpath: str) -> str:
        """The path inside :attr:`fs` of a path relative to the store root.

        Raises:
            StoreError: The path is not a valid relative path.
        """
        relpath = validate_relpath(relpath)
        if self.is_local:
            return os.path.join(self.root, *relpath.split("/"))
        return f"{self.root.rstrip('/')}/{relpath}"

    def url_for(self, relpath: str = "") -> str:
        """The URL of a path relative to the store root (the root itself for ``""``)."""
        if not relpath:
            return self.url
        return f"{self.url.rstrip('/')}/{validate_relpath(relpath)}"

    def guard(
        self, action: str, relpath: str = "", *, missing_is_lookup: bool = True
    ) -> AbstractContextManager[None]:
        """A block whose filesystem errors become one :class:`StoreError`.

        Args:
            action: What the block does, e.g. ``"read"``; starts the message.
            relpath: The path the block is about; ``""`` is the store itself.
            missing_is_lookup: Whether a missing object means
                :class:`NotFoundError` (reads) rather than a missing bucket or
                directory (writes, listings).
        """
        return guard(
            url=self.url_for(relpath),
            action=action,
            endpoint=self.endpoint,
            missing_is_lookup=missing_is_lookup,
        )

    def check_writable(self) -> None:
        """Check that the store can be written, before any work is done.

        Locally, the root must be (or be creatable as) a writable directory.
        On S3 the bucket must exist and the credentials must be accepted; the
        endpoint must answer.

        Raises:
            StoreError: One clear error naming the URL and what is wrong.
        """
        if self.is_local:
            self._check_local_writable()
            return
        with self.guard("write to the results store", missing_is_lookup=False):
            if self.is_s3:
                self._check_bucket()
            else:
                try:
                    self.fs.ls(self.root, detail=False)
                except FileNotFoundError:
                    pass  # a missing prefix is created by the first write

    def _check_bucket(self) -> None:
        bucket = self.root.split("/", 1)[0]
        if not bucket:
            raise StoreError("the URL names no bucket", path=self.url)
        try:
            # Asks for the bucket itself, so that a wrong key or a missing
            # bucket shows now rather than at the end of a run.
            self.fs.call_s3("head_bucket", Bucket=bucket)
        except FileNotFoundError as error:
            raise StoreError(
                f"cannot write to the results store: bucket {bucket!r} does not exist",
                path=self.url,
            ) from error

    def _check_local_writable(self) -> None:
        # The root is created by the first write; what must be writable is its
        # nearest existing ancestor.
        path = self.root
        while not os.path.exists(path):
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
        if not os.path.isdir(path):
            raise StoreError(
                f"cannot write to the results store: {path} exists and is not a directory",
                path=self.url,
            )
        if not os.access(path, os.W_OK | os.X_OK):
            raise StoreError(
                f"cannot write to the results store: directory {path} is not writable",
                path=self.url,
            )
