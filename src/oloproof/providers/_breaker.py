"""The circuit breaker: a provider that cannot be connected to is not called again.

A provider whose server is gone refuses every connection; retrying each of a
run's judgments against it only spends the backoff of every retry. The breaker
counts attempts that could not connect, retries included, over all of one
provider's calls: after ``threshold`` in a row the provider is *unreachable* for
the rest of the run, no request is sent to it again, and every call left fails
with the breaker's reason. An attempt that gets a reply, an HTTP error too,
resets the count (429s and 5xx are the retry policy's business: the provider
answered); one that connects and then times out or is cut off leaves it as it is.

One breaker per provider name lives in the run's `ProviderPool`; it is used from
the pool's event loop only.
"""

from __future__ import annotations

from dataclasses import dataclass

from oloproof.providers._errors import UNREACHABLE
from oloproof.providers._retry import Failure, GaveUp, failure_from

__all__ = ["UNREACHABLE_AFTER", "Breaker", "ProviderHealth", "Unreachable"]

UNREACHABLE_AFTER = 5
"""Attempts in a row, retries included, that could not connect before a provider is unreachable."""


class Unreachable(GaveUp):
    """A request not sent: the provider's breaker is open."""


@dataclass(frozen=True)
class ProviderHealth:
    """What one provider's breaker has seen so far in a run."""

    sent: int
    """Requests sent to the provider, retries and re-asks included."""
    failures: int
    """Attempts in a row, up to now, that could not connect."""
    unreachable: str | None
    """The reason the provider is not called any more; ``None`` while it is."""


class Breaker:
    """One provider's count of failed connections, and whether it is still called.

    Args:
        threshold: Attempts in a row that could not connect before the breaker
            opens (at least 1).
    """

    def __init__(self, threshold: int = UNREACHABLE_AFTER) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
            raise ValueError(f"threshold must be an integer >= 1, not {threshold!r}")
        self.threshold = threshold
        self._sent = 0
        self._failures = 0
        self._opened: Failure | None = None

    @property
    def reason(self) -> str | None:
        """Why the provider is not called any more; ``None`` while it is."""
        return None if self._opened is None else self._opened.message

    def health(self) -> ProviderHealth:
        """A snapshot of the counts."""
        return ProviderHealth(sent=self._sent, failures=self._failures, unreachable=self.reason)

    def check(self) -> None:
        """Raise instead of sending when the provider is unreachable.

        Raises:
            Unreachable: The breaker is open.
        """
        if self._opened is not None:
            raise Unreachable(self._opened, self._opened.message)

    def sending(self) -> None:
        """Count one request about to be sent (after `check`)."""
        self._sent += 1

    def attempted(self, error: BaseException | None) -> None:
        """Count how one sent request went: ``error`` is what it raised, ``None`` for a reply."""
        if self._opened is not None:
            return
        failure = failure_from(error) if error is not None else None
        if failure is None or failure.kind == "status":
            self._failures = 0  # the provider answered
            return
        if failure.connect is None:
            return  # connected, then timed out or cut: neither gone nor shown to be there
        self._failures += 1
        if self._failures >= self.threshold:
            reason = (f"{UNREACHABLE}: {self._failures} consecutive connection failures "
                      f"(last: {failure.message})")  # fmt: skip
            self._opened = Failure(failure.kind, reason, connect=failure.connect)
