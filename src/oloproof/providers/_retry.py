"""The one retry policy of every provider call.

Every SDK client is built with ``max_retries=0``: retrying lives here and
nowhere else, because the adaptive concurrency limit has to see every 429 to
back off, and the SDKs' internal retries would hide them (and would sleep while
holding a concurrency slot and a rate-limit token).

What is retried: HTTP 408, 409, 429, 5xx (529 is Anthropic's "overloaded"),
timeouts and connection errors. What is not: ``insufficient_quota`` (a 429 that
waiting does not cure), content-filter refusals, and every other 4xx (400, 401,
403, 404, 422...). The wait is ``retry-after-ms`` or ``retry-after`` (seconds or
an HTTP date) when the reply carries one, else a fully jittered exponential
backoff. A provider asking for a wait longer than ``max_retry_after_s`` is not
waited for: the call fails, saying so.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import functools
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from oloproof.providers._errors import connect_failure, request_url

if TYPE_CHECKING:
    import anthropic
    import openai

__all__ = ["Failure", "GaveUp", "RetryPolicy", "failure_from", "rate_limited"]

T = TypeVar("T")

_RETRY_STATUSES = frozenset({408, 409, 429})
_NEVER_CODES = frozenset({"insufficient_quota", "content_filter", "content_policy_violation"})
_MESSAGE_CHARS = 300


@functools.cache
def _sdk_errors() -> tuple[
    tuple[type[openai.APITimeoutError], type[anthropic.APITimeoutError]],
    tuple[type[openai.APIConnectionError], type[anthropic.APIConnectionError]],
    tuple[type[openai.APIStatusError], type[anthropic.APIStatusError]],
]:
    """The SDKs' timeout, connection and status errors, imported at first need.

    Importing both SDKs takes a second or more; a command that only reads a
    configuration should not pay it.
    """
    import anthropic
    import openai

    return (
        (openai.APITimeoutError, anthropic.APITimeoutError),
        (openai.APIConnectionError, anthropic.APIConnectionError),
        (openai.APIStatusError, anthropic.APIStatusError),
    )


@dataclass(frozen=True)
class Failure:
    """One failed request, in the same words whatever the SDK."""

    kind: Literal["status", "timeout", "connection"]
    message: str
    """One line: what the provider said."""
    status: int | None = None
    codes: frozenset[str] = frozenset()
    """The error body's ``code`` and ``type`` (e.g. ``insufficient_quota``)."""
    retry_after_s: float | None = None
    """The wait the provider asked for, from ``retry-after-ms`` / ``retry-after``."""
    text: str = ""
    """The error body as text, to recognise a rejected parameter."""
    connect: str | None = None
    """How connecting failed (``connection refused``, ``connect timeout``, ``DNS
    failure``, ``cannot connect``); ``None`` when a connection was made."""

    @property
    def rate_limited(self) -> bool:
        """Whether this is a 429 that says "slow down" (not an exhausted quota)."""
        return self.status == 429 and "insufficient_quota" not in self.codes


class GaveUp(Exception):
    """A request failed for good: not retryable, or out of retries."""

    def __init__(self, failure: Failure, reason: str) -> None:
        super().__init__(reason)
        self.failure = failure
        self.reason = reason


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait before sending a failed request again.

    The number of retries is each provider's ``max_retries``; this holds the
    backoff: retry ``n`` (from 0) waits a uniformly random time in
    ``[0, min(cap_s, base_s * factor**n)]`` ("full jitter"), unless the reply
    asked for a specific wait.
    """

    base_s: float = 0.5
    """The backoff ceiling of the first retry."""
    factor: float = 2.0
    """How much the ceiling grows per retry."""
    cap_s: float = 30.0
    """The largest backoff ceiling."""
    max_retry_after_s: float = 60.0
    """The longest ``retry-after`` waited for; a longer one fails the call instead."""
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)
    """The source of jitter; seed it for reproducible waits."""

    def __post_init__(self) -> None:
        for name in ("base_s", "factor", "cap_s", "max_retry_after_s"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
            ):
                raise ValueError(f"RetryPolicy.{name} must be a finite number, not {value!r}")
            if value < 0 or (name == "factor" and value < 1):
                raise ValueError(f"RetryPolicy.{name} is out of range: {value!r}")

    def backoff(self, retry: int) -> float:
        """The jittered wait before retry number ``retry`` (0 is the first)."""
        ceiling = min(self.cap_s, self.base_s * self.factor ** min(retry, 64))
        return self.rng.uniform(0.0, ceiling)

    def wait(self, failure: Failure, retry: int) -> float | str:
        """The seconds to wait before retrying ``failure``, or why it is not retried."""
        if failure.codes & _NEVER_CODES:
            code = min(failure.codes & _NEVER_CODES)
            return f"{code}, not retried"
        if failure.kind == "status" and not (
            failure.status in _RETRY_STATUSES or (failure.status or 0) >= 500
        ):
            return "not retried"
        if failure.retry_after_s is not None:
            if failure.retry_after_s > self.max_retry_after_s:
                return (
                    f"the provider asks to wait {failure.retry_after_s:g} s, over the "
                    f"{self.max_retry_after_s:g} s cap; not retried"
                )
            return failure.retry_after_s
        return self.backoff(retry)

    async def run(
        self,
        attempt: Callable[[], Awaitable[T]],
        *,
        max_retries: int,
        on_retry: Callable[[], Any] = lambda: None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> T:
        """Call ``attempt`` until it succeeds or the failure is final.

        ``attempt`` raises an SDK error on failure; ``on_retry`` is called before
        each retry is sent. Anything that is not a provider failure (cancellation, a bug)
        propagates at once.

        Raises:
            GaveUp: The failure is not retryable, or ``max_retries`` are spent.
        """
        _, connections, statuses = _sdk_errors()
        retry = 0
        while True:
            try:
                return await attempt()
            except (*statuses, *connections) as exc:
                failure = failure_from(exc)
            decision = self.wait(failure, retry)
            if isinstance(decision, str):
                raise GaveUp(failure, f"{failure.message} ({decision})") from None
            if retry >= max_retries:
                raise GaveUp(failure, f"{failure.message} (after {retry} retries)") from None
            await sleep(decision)
            retry += 1
            on_retry()


def rate_limited(exc: BaseException) -> bool:
    """Whether ``exc`` is a 429 asking to slow down (what the concurrency limit backs off on)."""
    return isinstance(exc, _sdk_errors()[2]) and failure_from(exc).rate_limited


def failure_from(exc: BaseException) -> Failure:
    """Describe an OpenAI or Anthropic SDK error as a `Failure`."""
    timeouts, connections, statuses = _sdk_errors()
    connect = connect_failure(exc) if isinstance(exc, connections) else None
    if connect is not None:
        # The message begins with the kind: `error_kind` reads it back from the judgment row.
        where = request_url(exc)
        message = f"{connect} at {where}" if where else connect
        if connect == "cannot connect":
            message += f" ({_cause(exc)})"
        return Failure("timeout" if connect == "connect timeout" else "connection", _one_line(message),
                       connect=connect)  # fmt: skip
    if isinstance(exc, timeouts):
        return Failure("timeout", "request timed out")
    if isinstance(exc, statuses):
        status = int(exc.status_code)
        body = exc.body
        error = body.get("error", body) if isinstance(body, dict) else None
        codes: set[str] = set()
        message = ""
        if isinstance(error, dict):
            codes = {
                str(error[k]) for k in ("code", "type") if isinstance(error.get(k), (str, int))
            }
            if isinstance(error.get("message"), str):
                message = error["message"]
        text = body if isinstance(body, str) else repr(body)
        head = f"HTTP {status}" + (f" {min(codes)}" if codes else "")
        return Failure(
            "status",
            _one_line(f"{head}: {message}" if message else head),
            status=status,
            codes=frozenset(codes),
            retry_after_s=_retry_after(exc.response.headers),
            text=text,
        )
    return Failure("connection", _one_line(f"connection error ({_cause(exc)})"))


def _cause(exc: BaseException) -> str:
    """The transport's error behind an SDK error, ``Type: message``."""
    cause = exc.__cause__ or exc.__context__
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)


def _retry_after(headers: Any) -> float | None:
    """The wait a reply asks for, in seconds, or ``None``."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            seconds = float(value) / 1000
        except ValueError:
            seconds = math.nan
        if math.isfinite(seconds):
            return max(seconds, 0.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if moment.tzinfo is None:  # "-0000": HTTP dates are always GMT
            moment = moment.replace(tzinfo=datetime.UTC)
        seconds = moment.timestamp() - time.time()
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 1] + "…"
