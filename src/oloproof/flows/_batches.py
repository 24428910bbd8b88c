"""A run's batches through their stages, a bounded number of cases at a time.

Each batch's chain (execution lookup, retrieve, assemble, generate, merge, judge)
and one encode task per group of batches (see `group_batches`) are submitted to
the flow's task runner; a group's part (`BatchPart`) is collected as soon as it is
encoded, and its other futures are let go then. At most `IN_FLIGHT_CASES` cases'
groups are submitted and not yet encoded: when a later stage is slower than an
earlier one, the run holds that many cases' results waiting, never the whole run's.
"""

from __future__ import annotations

import functools
import queue
from typing import Any

from prefect import Task
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import opaque, quote

from oloproof.flows._storage import prefect_batch_locks, prefect_result_storage
from oloproof.stages._batch import MAX_BATCH
from oloproof.tasks import (
    Batch,
    BatchPart,
    CachedExecution,
    RunEnvironment,
    assemble_contexts,
    encode_batch,
    generate_outputs,
    group_batches,
    judge_cases,
    lookup_executions,
    plan_batches,
    record_executions,
    retrieve_passages,
)

__all__ = ["IN_FLIGHT_CASES", "opaque_of", "quoted", "run_batches"]

IN_FLIGHT_CASES = 4 * MAX_BATCH
"""The most cases whose groups are submitted and not yet encoded (a group larger than
this runs alone). Enough to keep every call slot of a latency-bound run busy; few
enough that a run of 100,000 cases holds a few batches' results, not all of them."""

StageTasks = dict[str, Task[..., Any]]
"""The stage tasks by name, bound to the run's result storage."""


def _stage_tasks(env: RunEnvironment) -> StageTasks:
    """The stage tasks writing to the store's Prefect records, one writer per batch key
    at a time (so runs computing a batch at once never read a record being rewritten);
    a task waiting for a batch's lock stops with the run."""
    storage = prefect_result_storage(env.store, env.project.config.storage_options)
    locks = prefect_batch_locks(storage, stopped=lambda: env.executor.closed)
    tasks = {
        task.name: task.with_options(
            result_storage=storage,
            cache_policy=task.cache_policy.configure(lock_manager=locks, isolation_level="SERIALIZABLE"),
        )
        for task in (retrieve_passages, assemble_contexts, generate_outputs, judge_cases)
    }
    if not any(e.is_llm_judge or e.is_async for e in env.evaluators):
        # Judges that call nothing judge a batch again from their per-judgment records
        # for less than reading the batch's record back would cost (one JSON row a
        # case and criterion): the batch's result is kept in memory for its encoding,
        # never recorded. Its rows, their keys and hits are those of a recorded batch.
        tasks["judge"] = judge_cases.with_options(cache_policy=NO_CACHE, persist_result=False,
                                                  cache_result_in_memory=True)  # fmt: skip
    return tasks


def run_batches(env: RunEnvironment) -> list[BatchPart]:
    """Run every batch of ``env`` through its stages; returns each group's part, in order.

    Every batch's execution lookup is submitted first (reads that the later stages
    wait on); a group's stages are submitted once the groups in flight leave room.
    Must run inside a flow run.
    """
    tasks = _stage_tasks(env)
    batches = plan_batches(list(env.cases), env.project.config.batch_size)
    repeats = range(env.repeats)
    lookups = {(batch.index, r): lookup_executions.submit(quoted(env), batch.at(r)) for batch in batches for r in repeats}
    parts = _Parts(env)
    for group, spanning in group_batches(batches):
        while parts.cases_in_flight and parts.cases_in_flight + len(spanning.case_ids) > IN_FLIGHT_CASES:
            parts.collect_one()
        futures: list[PrefectFuture[Any]] = []
        merged_all, judged_all = [], []
        for batch in group:
            found = [lookups.pop((batch.index, r)) for r in repeats]
            stages, merged = _submit_batch(env, batch, [lookup.result() for lookup in found], tasks)
            futures += [*found, *stages]
            for r, merged_r in enumerate(merged):
                judged = tasks["judge"].submit(quoted(env), batch.at(r), opaque_of(merged_r))
                futures += [merged_r, judged]
                merged_all.append(opaque_of(merged_r))
                judged_all.append(opaque_of(judged))
        parts.add(spanning, futures, encode_batch.submit(quoted(env), spanning, merged_all, judged_all))
    return parts.collect_all()


def _submit_batch(
    env: RunEnvironment, batch: Batch, cached: list[dict[str, CachedExecution]], tasks: StageTasks
) -> tuple[list[PrefectFuture[Any]], list[PrefectFuture[Any]]]:
    """A batch's stages: retrieve and assemble once, for every case some repeat still
    needs, then each repeat's generation and merge (with ``retrieve_repeats``, each
    repeat its own chain). Returns the stage futures and each repeat's merge."""
    if not env.retrieve_repeats:
        return _submit_repeats(env, batch, dict(enumerate(cached)), tasks)
    stages, merged = [], []
    for r, found in enumerate(cached):
        stages_r, merged_r = _submit_repeats(env, batch.at(r), {r: found}, tasks)
        stages += stages_r
        merged += merged_r
    return stages, merged


def _submit_repeats(
    env: RunEnvironment, batch: Batch, cached: dict[int, dict[str, CachedExecution]], tasks: StageTasks
) -> tuple[list[PrefectFuture[Any]], list[PrefectFuture[Any]]]:
    """One retrieval and assembly (at ``batch``'s repeat) for the cases these repeats
    still need, then each repeat's generation and merge."""
    todo = batch.at(batch.repeat, tuple(c for c in batch.case_ids if any(c not in found for found in cached.values())))
    retrieved = assembled = None
    generated: dict[int, PrefectFuture[Any] | None] = dict.fromkeys(cached)
    if todo.case_ids and env.system.config.kind != "recorded":  # recorded rows run nothing
        if env.system.config.kind == "rag":
            retrieved = tasks["retrieve"].submit(quoted(env), todo)
        if env.request.stages == "all":
            if retrieved is not None:
                assembled = tasks["assemble"].submit(quoted(env), todo, opaque_of(retrieved))
            for r, found in cached.items():
                needed = batch.at(r, tuple(c for c in batch.case_ids if c not in found))
                if needed.case_ids:
                    generated[r] = tasks["generate"].submit(quoted(env), needed, opaque_of(assembled))
    stages = [future for future in (retrieved, assembled, *generated.values()) if future is not None]
    merged = [
        record_executions.submit(
            quoted(env), batch.at(r), quoted(found), opaque_of(retrieved), opaque_of(assembled), opaque_of(generated[r])
        )
        for r, found in cached.items()
    ]
    return stages, merged


def _threads() -> bool:
    context = FlowRunContext.get()
    return context is not None and isinstance(context.task_runner, ThreadPoolTaskRunner)


def opaque_of(future: PrefectFuture[Any] | None) -> Any:
    # Resolve the upstream result without Prefect walking (and copying) every
    # nested value of it: batch results hold thousands of passages. Only Prefect's
    # own thread runner unwraps these annotations; Dask resolves arguments itself.
    if future is None or not _threads():
        return future
    return opaque(future)


def quoted(value: Any) -> Any:
    # Pass a materialized value without Prefect walking every nested value of it
    # (the environment holds every case). Dask pickles arguments instead; the
    # environment pickles as its request.
    return quote(value) if _threads() else value


class _Parts:
    """Each group's part as it is encoded, letting go of the group's other futures then.

    Futures are watched as they finish, not in order: the first failure closes the
    run's executor, which cancels every other batch's pending calls so they return
    at once, and is then the one error reported.
    """

    def __init__(self, env: RunEnvironment) -> None:
        self._env = env
        self._finished: queue.SimpleQueue[tuple[int, PrefectFuture[Any]]] = queue.SimpleQueue()
        self._pending: dict[int, tuple[int, PrefectFuture[BatchPart]]] = {}
        self._parts: list[BatchPart] = []

    @property
    def cases_in_flight(self) -> int:
        """Cases of the groups submitted and not yet encoded."""
        return sum(size for size, _ in self._pending.values())

    def add(self, spanning: Batch, futures: list[PrefectFuture[Any]], part: PrefectFuture[BatchPart]) -> None:
        """Watch a submitted group: its stage futures and the future of its part."""
        self._pending[spanning.index] = (len(spanning.case_ids), part)
        for future in (*futures, part):
            future.add_done_callback(functools.partial(self._report, spanning.index))

    def _report(self, index: int, done: PrefectFuture[Any]) -> None:
        self._finished.put((index, done))

    def collect_one(self) -> None:
        """Wait until one more group's part is in.

        Raises:
            Exception: The first failure of any watched task, as its future raises it.
        """
        waiting = len(self._pending)
        while len(self._pending) == waiting:
            index, future = self._finished.get()
            future.wait()  # settles the future's own final state (the API's may lag behind)
            if future.state.is_failed() or future.state.is_crashed():
                self._env.executor.close()
                future.result()
            entry = self._pending.get(index)
            if entry is not None and future is entry[1]:
                self._parts.append(future.result())
                del self._pending[index]

    def collect_all(self) -> list[BatchPart]:
        """Every group's part, in batch order, once all are in."""
        while self._pending:
            self.collect_one()
        return sorted(self._parts, key=lambda part: part.index)


