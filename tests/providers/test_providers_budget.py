"""A call's time budget: charged while its requests are out, never while it waits."""

from __future__ import annotations

import asyncio

import pytest

from oloproof.providers import BudgetSpent, TimeBudget, current_budget


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_waiting_outside_is_not_charged_and_a_request_is():
    clock = Clock()
    budget = TimeBudget(2.0, clock=clock)

    async def go() -> float:
        async with budget.limit():
            assert current_budget() is budget
            clock.now += 0.5  # user code before the provider: charged
            with budget.outside():
                clock.now += 50.0  # queued for a slot: not charged

                async def request() -> str:
                    clock.now += 1.0  # the request out at the provider
                    return "reply"

                assert await budget.charged(request()) == "reply"
                clock.now += 30.0  # a retry's backoff: not charged
            return budget.remaining()

    assert asyncio.run(go()) == pytest.approx(0.5)
    assert budget.used == pytest.approx(1.5)
    assert current_budget() is None


def test_a_spent_budget_sends_nothing_more():
    clock = Clock()
    budget = TimeBudget(1.0, clock=clock)
    sent: list[str] = []

    async def request() -> None:
        sent.append("request")
        clock.now += 1.0

    async def go() -> None:
        async with budget.limit():
            with budget.outside():
                await budget.charged(request())
                await budget.charged(request())

    with pytest.raises(BudgetSpent, match=r"^timeout after 1s$"):
        asyncio.run(go())
    assert sent == ["request"]


def test_a_request_still_out_when_the_budget_runs_out_is_cut_off():
    budget = TimeBudget(0.05)
    cancelled = []

    async def never() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def go() -> None:
        async with budget.limit():
            with budget.outside():
                await budget.charged(never())

    with pytest.raises(BudgetSpent):
        asyncio.run(go())
    assert cancelled == [True]


def test_user_code_past_the_budget_times_out_like_asyncio_timeout():
    async def go() -> None:
        async with TimeBudget(0.05).limit():
            await asyncio.Event().wait()

    with pytest.raises(TimeoutError):
        asyncio.run(go())


def test_the_deadline_does_not_run_while_suspended():
    # Suspended, the block outlives the whole budget and is not cancelled.
    budget = TimeBudget(0.05)

    async def go() -> str:
        async with budget.limit():
            with budget.outside():
                await asyncio.sleep(0.2)
            return "done"

    assert asyncio.run(go()) == "done"
