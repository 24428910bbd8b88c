"""An agent's generate stage: one ``run(input, tools)`` per case, its tool calls cached.

The run's identity is the agent's (name, version, run parameters, every tool's
version and parameters, ``index_version``) and the input; under the gold-context
intervention, the gold passages and the forced call too. Each tool call inside it
is looked up in the ``tool`` stage cache on its own identity, so a run re-executed
after a prompt change reuses every call whose arguments did not change.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue, ValidationError

from oloproof._json import json_copy
from oloproof._system._passage import Passage
from oloproof._system._toolbox import Tools, ToolSession
from oloproof.records import AssembledPassage, Candidate, GenerationRecord, ToolRecord, ToolTally
from oloproof.stages._batch import Batch
from oloproof.stages._identity import agent_run_key
from oloproof.store import ResultsStore
from oloproof.tasks._cached import CaseFailure, WorkItem, fresh
from oloproof.tasks._environment import RunEnvironment
from oloproof.transcripts import read_vendor_messages

__all__ = ["AgentRun", "StoreToolCache", "agent_items", "agent_passages"]


@dataclass(frozen=True, slots=True)
class AgentRun:
    """What one agent run returned, and what its tools did."""

    output: Any
    """The agent's final output."""
    items: list[JsonValue]
    """The transcript."""
    hits: int
    """Tool calls answered from the cache."""
    misses: int
    """Tool calls that ran."""


@dataclass(frozen=True)
class StoreToolCache:
    """The ``tool`` stage cache of a run's store."""

    store: ResultsStore
    """The run's store."""

    def get(self, key: str) -> JsonValue | None:
        # Tool results are only ever stored alone: one GET, no index listing.
        return self.store.records.get_singles("tool", [key]).get(key)

    def put(self, key: str, result: JsonValue) -> None:
        self.store.put_record("tool", key, ToolRecord(result=result).stored())


def _run_sync(run: Any, session: ToolSession, case_input: Any, extra: tuple[Any, ...]) -> AgentRun:
    session.begin(case_input)
    try:
        output = run(case_input, Tools(session), *extra)
    except ValidationError as error:
        raise _case_error(error) from None
    return AgentRun(output=output, items=session.finish(output), hits=session.hits, misses=session.misses)


async def _run_async(run: Any, session: ToolSession, case_input: Any, extra: tuple[Any, ...]) -> AgentRun:
    session.begin(case_input)
    try:
        output = await run(case_input, Tools(session), *extra)
    except ValidationError as error:
        raise _case_error(error) from None
    skipped = session.unawaited()
    if skipped is not None:
        raise CaseFailure(f"the agent called the async tool {skipped!r} without awaiting it: the call never ran")
    return AgentRun(output=output, items=session.finish(output), hits=session.hits, misses=session.misses)


def _case_error(error: ValidationError) -> ValueError:
    """A validation error inside an agent's run (a tool building an invalid ``Passage``)
    as the case's own error: the run goes on. Raised as it is, the generate stage would
    take it for a retriever breaking its ``Retrieval`` contract and stop the run. It keeps
    its traceback, so the case's error still names the line of the user's code."""
    return ValueError(str(error)).with_traceback(error.__traceback__)


def agent_items(env: RunEnvironment, batch: Batch) -> list[WorkItem]:
    """The agent runs of the batch's cases."""
    handle = env.system
    run = handle.generate
    caller = _run_async if inspect.iscoroutinefunction(run) else _run_sync
    extra: tuple[Any, ...] = () if handle.generator_params is None else (handle.generator_params,)
    cache = StoreToolCache(env.store)
    gold = env.request.context_source == "gold"
    forced = handle.context_tools[0] if gold and handle.context_tools else None
    items = []
    for case_id in batch.case_ids:
        case = env.cases[case_id]
        passages = [Passage.model_validate(p.model_dump()) for p in case.expected.gold_context or []] if gold else None
        intervention: JsonValue = None if passages is None else {
            "gold_context": [p.model_dump(mode="json") for p in passages], "forced": forced}
        session = ToolSession(system=handle.config, tools=handle.tools, cache=cache, gold=passages, forced=forced)
        items.append(WorkItem(
            case_id=case_id, key=agent_run_key(handle.config, case.input, intervention, batch.repeat), call=caller,
            args=(run, session, fresh(case.input), tuple(map(fresh, extra))), finish=functools.partial(_record, env),
        ))  # fmt: skip
    return items


def _record(env: RunEnvironment, value: AgentRun) -> GenerationRecord:
    try:
        output = json_copy(value.output)
    except ValueError as error:
        raise CaseFailure(f"{env.system.config.object}.run returned a value that is not JSON ({error}); "
                          "outputs must be JSON-serializable") from None  # fmt: skip
    return GenerationRecord(output=output, output_items=value.items,
                            tools=ToolTally(hits=value.hits, misses=value.misses))  # fmt: skip


def agent_passages(
    items: list[JsonValue] | None, context_tools: tuple[str, ...]
) -> tuple[list[Candidate], list[AssembledPassage]] | None:
    """What an agent's context tools returned, as the retrieval and the context it saw.

    In call order, then rank; ``None`` when no context tool was called (or no transcript).
    """
    if items is None:
        return None
    called = [(call, result) for call, result in read_vendor_messages(items).calls() if call.name in context_tools]
    if not called:
        return None
    candidates: list[Candidate] = []
    for _call, result in called:
        content = result.content if result is not None else None
        for passage in content if isinstance(content, list) else []:
            if isinstance(passage, dict):
                candidates.append(Candidate(doc_id=str(passage.get("doc_id")), score=_score(passage.get("score")),
                                            text=_text(passage.get("text")), chunk_id=_text(passage.get("chunk_id"))))
    context = [AssembledPassage(position=position, doc_id=c["doc_id"], chunk_id=c["chunk_id"], text=c["text"],
                                tokens=None) for position, c in enumerate(candidates, start=1)]  # fmt: skip
    return candidates, context


def _score(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None
