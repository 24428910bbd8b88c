"""Single-flight: the first claimer of a key leads its call, later ones share the result."""

from __future__ import annotations

import asyncio
import threading

import pytest

from oloproof.tasks._flights import Flights, Shared, flown


def test_the_first_claim_leads_and_a_later_one_follows():
    flights = Flights()
    first = flights.claim(["k1", "k2"])
    second = flights.claim(["k2", "k3"])
    assert (first["k1"].leads, first["k2"].leads) == (True, True)
    assert (second["k2"].leads, second["k3"].leads) == (False, True)
    assert second["k2"].flight is first["k2"].flight
    assert len(flights) == 3
    flights.release(second)
    assert len(flights) == 2  # only what it led
    flights.release(first)
    assert len(flights) == 0


def test_a_follower_shares_the_leaders_value_and_calls_nothing():
    flights = Flights()
    leader, follower = flights.claim(["k"])["k"], flights.claim(["k"])["k"]
    calls: list[str] = []

    async def judge(name: str) -> str:
        calls.append(name)
        await asyncio.sleep(0)
        return f"verdict of {name}"

    async def go() -> list[object]:
        return list(await asyncio.gather(flown(follower, judge)("b"), flown(leader, judge)("a")))

    shared, led = asyncio.run(go())
    assert calls == ["a"]
    assert led == "verdict of a"
    assert isinstance(shared, Shared) and shared.value == "verdict of a"


def test_a_follower_of_a_leader_that_made_no_call_makes_it():
    flights = Flights()
    leader = flights.claim(["k"])
    follower = flights.claim(["k"])["k"]
    flights.release(leader)  # the leader's case was served by the cache, say

    async def judge() -> str:
        return "own verdict"

    assert asyncio.run(flown(follower, judge)()) == "own verdict"
    assert len(flights) == 0


def test_a_follower_gets_the_leaders_error():
    flights = Flights()
    leader, follower = flights.claim(["k"])["k"], flights.claim(["k"])["k"]

    async def failing() -> str:
        raise RuntimeError("judge failed")

    async def go() -> None:
        with pytest.raises(RuntimeError):
            await flown(leader, failing)()
        await flown(follower, failing)()

    with pytest.raises(RuntimeError, match="judge failed"):
        asyncio.run(go())


def test_followers_on_another_loop_are_woken():
    # Runs in one process have a call loop each: the follower waits on its own.
    flights = Flights()
    leader, follower = flights.claim(["k"])["k"], flights.claim(["k"])["k"]
    got: list[object] = []

    async def judge() -> str:
        return "verdict"

    waiting = threading.Thread(target=lambda: got.append(asyncio.run(flown(follower, judge)())))
    waiting.start()
    asyncio.run(flown(leader, judge)())
    waiting.join(30)
    [shared] = got
    assert isinstance(shared, Shared) and shared.value == "verdict"
