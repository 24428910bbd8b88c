"""A stage task plans its batch once: for its cache key, then taken by its body."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from oloproof.tasks._plans import Plans


class Planner:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> list[int]:
        self.calls += 1
        return [self.calls]


def test_the_body_takes_the_plan_made_for_the_key() -> None:
    plans, planner, batch = Plans(), Planner(), object()
    made = plans.make(("judge", 0, 0), (batch,), planner)
    assert plans.take(("judge", 0, 0), (batch,), planner) is made
    assert planner.calls == 1 and len(plans) == 0


def test_a_plan_of_other_input_objects_is_never_taken() -> None:
    plans, planner = Plans(), Planner()
    plans.make(("judge", 0, 0), ({"a": 1},), planner)
    # Equal but not the same inputs: the body plans its own.
    assert plans.take(("judge", 0, 0), ({"a": 1},), planner) == [2]
    assert planner.calls == 2 and len(plans) == 0


def test_a_body_without_a_kept_plan_plans_itself_and_a_plan_is_taken_once() -> None:
    plans, planner, batch = Plans(), Planner(), object()
    assert plans.take(("generate", 1, 0), (batch,), planner) == [1]
    plans.make(("generate", 1, 0), (batch,), planner)
    plans.take(("generate", 1, 0), (batch,), planner)
    assert plans.take(("generate", 1, 0), (batch,), planner) == [3]


def test_plans_never_taken_are_dropped_oldest_first() -> None:
    plans, planner = Plans(kept=3), Planner()
    inputs = [(object(),) for _ in range(5)]
    for index, one in enumerate(inputs):
        plans.make(("retrieve", index, 0), one, planner)
    assert len(plans) == 3
    assert plans.take(("retrieve", 0, 0), inputs[0], planner) == [6]  # dropped: planned again
    assert plans.take(("retrieve", 4, 0), inputs[4], planner) == [5]


@pytest.mark.slow
@pytest.mark.services
def test_a_run_plans_each_batch_of_each_stage_once(prefect_api: None, example_project: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from _cli.inprocess import invoke_ok

    from oloproof.tasks import _assemble_task, _generate, _judge, _retrieve

    planned: Counter[tuple[str, str]] = Counter()  # (stage, the batch's first case)

    def counting(stage: str, module: Any, name: str, first_case: Any) -> None:
        original = getattr(module, name)

        def wrapper(*args: Any) -> Any:
            planned[(stage, first_case(*args))] += 1
            return original(*args)

        monkeypatch.setattr(module, name, wrapper)

    counting("retrieve", _retrieve, "retrieval_items", lambda env, batch: batch.case_ids[0])
    counting("assemble", _assemble_task, "assembly_items", lambda env, batch, _: batch.case_ids[0])
    counting("generate", _generate, "generation_items", lambda env, batch, _: batch.case_ids[0])
    counting("judge", _judge, "_plan", lambda env, results: min(results))
    report = json.loads(invoke_ok("run", str(example_project), "--json"))
    assert report["case_count"] > 1
    assert {stage for stage, _ in planned} == {"retrieve", "assemble", "generate", "judge"}
    assert len(planned) > 4  # more than one batch
    assert all(count == 1 for count in planned.values()), planned


def test_a_stage_s_plan_of_a_batch_is_kept_by_stage_batch_and_repeat() -> None:
    from oloproof.stages._batch import Batch

    plans, planner, env = Plans(), Planner(), object()
    batch = Batch(index=2, case_ids=("a", "b"), repeat=1)
    made = plans.of_batch("judge", batch, (env, batch), planner, body=False)
    # Another stage, or another repeat of the batch, is another plan.
    assert plans.of_batch("generate", batch, (env, batch), planner, body=True) == [2]
    other = batch.at(0)
    assert plans.of_batch("judge", other, (env, other), planner, body=True) == [3]
    assert plans.of_batch("judge", batch, (env, batch), planner, body=True) is made
    assert planner.calls == 3 and len(plans) == 0
