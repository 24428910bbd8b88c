"""Single flight: equal calls in flight at once are made once.

Batches of a run (and of runs sharing one `Flights`, the settings of a sweep)
look a stage's cache up at the same moment, miss it together, and would each
call the retriever, the generator or the judge for the same identity key. A
batch claims the keys it is about to compute before it looks them up: the first
claimer leads a key, and a later claimer waits for the leader's call and shares
its result. The leader releases its keys once its batch has written their
records, so a claimer arriving later finds the record in the cache instead.
Nothing outlives a batch: an entry is removed when the batch that leads it ends,
whatever happened to the call.

Judgments are claimed by key and follow through `flown` (a judge's wait is not
charged to its time limit); the other stages claim ``<stage>:<key>`` and follow
through `follow`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from oloproof.providers import current_budget

__all__ = ["Claim", "Flights", "Shared", "cancel", "flown", "follow", "publish"]


class Shared:
    """A judge's value that another claimer's call made (the call's result, not this one's)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


@dataclass(frozen=True)
class Claim:
    """A batch's claim on one judgment key."""

    flight: concurrent.futures.Future[Any]
    """The key's call: its result once the leader's call returned."""
    leads: bool
    """Whether this claim leads the key (makes the call) or follows another's."""


class Flights:
    """The keys being computed now, each led by the batch that claimed it first.

    Thread-safe, and not bound to an event loop: the runs sharing it may each
    have their own call loop. Give one instance to every run that should share
    calls (`prepare_environment`'s ``flights``); it holds an entry only while the
    batch that leads it runs.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[str, concurrent.futures.Future[Any]] = {}

    def __len__(self) -> int:
        """How many keys are being computed now."""
        with self._lock:
            return len(self._flights)

    def claim(self, keys: Iterable[str]) -> dict[str, Claim]:
        """Claim ``keys``: the caller leads those nobody leads, and follows the others."""
        claims: dict[str, Claim] = {}
        with self._lock:
            for key in keys:
                flight = self._flights.get(key)
                if flight is None:
                    flight = self._flights[key] = concurrent.futures.Future()
                    claims[key] = Claim(flight, leads=True)
                else:
                    claims[key] = Claim(flight, leads=False)
        return claims

    def release(self, claims: dict[str, Claim]) -> None:
        """End the flights the caller leads. One without a result is cancelled, so
        whoever follows it makes the call itself."""
        led = {key: claim.flight for key, claim in claims.items() if claim.leads}
        with self._lock:
            for key, flight in led.items():
                if self._flights.get(key) is flight:
                    del self._flights[key]
        for flight in led.values():
            flight.cancel()  # a no-op on a flight that has its result


def flown(claim: Claim, call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """``call`` as ``claim`` makes it: the leader calls and publishes the result,
    a follower waits for the leader's and returns it as `Shared`."""
    flight = claim.flight
    if not claim.leads:

        async def follow(*args: Any) -> Any:
            try:
                value = await _wait(flight)
            except concurrent.futures.CancelledError:
                return await call(*args)  # the leader made no call: make it here
            return Shared(value)

        return follow

    async def lead(*args: Any) -> Any:
        try:
            value = await call(*args)
        except asyncio.CancelledError:
            flight.cancel()
            raise
        except BaseException as error:
            if flight.set_running_or_notify_cancel():
                flight.set_exception(error)
            raise
        if flight.set_running_or_notify_cancel():
            flight.set_result(value)
        return value

    return lead


def follow(
    claim: Claim, call: Callable[[], concurrent.futures.Future[Any]]
) -> concurrent.futures.Future[tuple[Any, bool]]:
    """The leader's result, as a future of ``(result, shared)``, for a claim that follows.

    ``shared`` is true when the value is the leader's; when the leader made no call
    (its run stopped first), ``call()`` makes it here and its result is this one's own.
    A cancelled future means this call could not be made either.
    """
    outcome: concurrent.futures.Future[tuple[Any, bool]] = concurrent.futures.Future()

    def settle(source: concurrent.futures.Future[Any], shared: bool) -> None:
        if source.cancelled():
            cancel(outcome)
        elif source.exception() is not None:
            outcome.set_exception(source.exception())
        else:
            outcome.set_result((source.result(), shared))

    def landed(flight: concurrent.futures.Future[Any]) -> None:
        if not flight.cancelled():
            settle(flight, True)
            return
        try:
            own = call()
        except BaseException:  # noqa: BLE001 - a stopped run: nothing can be called any more
            cancel(outcome)
            return
        own.add_done_callback(lambda done: settle(done, False))

    claim.flight.add_done_callback(landed)
    return outcome


def cancel(future: concurrent.futures.Future[Any]) -> None:
    """Cancel a future no executor runs, waking whoever waits on it.

    ``cancel`` alone wakes ``result()`` but not ``concurrent.futures.wait`` or
    ``as_completed``: those are told only by ``set_running_or_notify_cancel``, which an
    executor calls on picking the work up.
    """
    if future.cancel():
        try:
            future.set_running_or_notify_cancel()
        except RuntimeError:  # cancelled and told before
            pass


def publish(claim: Claim, future: concurrent.futures.Future[Any]) -> None:
    """Make ``future``'s result the flight's, for the claims that follow a key this one leads."""
    flight = claim.flight

    def land(done: concurrent.futures.Future[Any]) -> None:
        if done.cancelled() or not flight.set_running_or_notify_cancel():
            flight.cancel()
        elif done.exception() is not None:
            flight.set_exception(done.exception())
        else:
            flight.set_result(done.result())

    future.add_done_callback(land)


async def _wait(flight: concurrent.futures.Future[Any]) -> Any:
    """The leader's result, waited for on this loop; the wait is not charged to this
    call's time limit (the leader's own limit bounds it).

    Raises:
        concurrent.futures.CancelledError: The leader made no call.
        BaseException: What the leader's call raised.
    """
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()

    def settle() -> None:
        if not waiter.done():
            waiter.set_result(None)

    def wake(_: concurrent.futures.Future[Any]) -> None:
        try:
            loop.call_soon_threadsafe(settle)
        except RuntimeError:  # this run's loop is closed: nobody waits any more
            pass

    flight.add_done_callback(wake)
    budget = current_budget()
    if budget is None:
        await waiter
    else:
        with budget.outside():
            await waiter
    if flight.cancelled():
        raise concurrent.futures.CancelledError
    return flight.result()
