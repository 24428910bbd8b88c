"""What an agent's ``run`` is handed: its tools, each call cached and recorded.

One `ToolSession` per agent run: every call through its `Tools` is looked up under
its identity (the tool's name, version and parameters, its canonical arguments
and the system's ``index_version``); a miss calls the tool and records its result.
Under the gold-context intervention a context tool's calls return the case's gold
passages instead, never cached. The session writes the transcript as it goes, in
the vendor's agent message format: the user's input, each call and its result,
and the final answer.
"""

from __future__ import annotations

import copy
import inspect
import json
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import JsonValue, ValidationError

from oloproof._json import json_copy
from oloproof._system._agent import AgentTool
from oloproof._system._passage import Passage
from oloproof.config._settings import SystemConfig
from oloproof.stages._identity import tool_key

__all__ = ["ToolCache", "ToolSession", "Tools", "final_text", "input_message"]


class ToolCache(Protocol):
    """Where tool results are cached: the run's store, under the ``tool`` stage."""

    def get(self, key: str) -> JsonValue | None:
        """The cached result under ``key`` (wrapped: ``{"result": ...}``), or ``None``."""

    def put(self, key: str, result: JsonValue) -> None:
        """Cache ``result`` under ``key``."""


@dataclass
class ToolSession:
    """One agent run's tool calls: their cache, their accounting and the transcript."""

    system: SystemConfig
    """The agent's configuration (its ``tools`` and ``index_version`` are in every call's identity)."""
    tools: Mapping[str, AgentTool]
    """The declared tools by name."""
    cache: ToolCache | None
    """The tool cache; ``None`` re-executes every call."""
    gold: Sequence[Passage] | None = None
    """The case's gold passages, returned by every context tool call instead of calling it."""
    forced: str | None = None
    """The context tool the agent must call (a forced call under diagnosis)."""
    hits: int = 0
    """Calls answered from the cache."""
    misses: int = 0
    """Calls that ran the tool."""
    items: list[JsonValue] = field(default_factory=list)
    """The transcript so far."""
    calls: int = 0
    """Calls recorded in the transcript (numbering their ids)."""
    pending: list[tuple[str, Coroutine[Any, Any, Any]]] = field(default_factory=list)
    """The ``async def`` tool calls handed out, to find one the run never awaited."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self, case_input: Any) -> None:
        """Start the transcript with the user's input."""
        self.items.append(input_message(case_input))

    def finish(self, output: Any) -> list[JsonValue]:
        """End the transcript with the final answer and return it."""
        with self._lock:
            self.items.append({"role": "assistant", "content": [{"type": "text", "text": final_text(output)}]})
            return list(self.items)

    def prepare(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[AgentTool, dict[str, Any], str]:
        """The tool, its canonical arguments and the call's key.

        Raises:
            AttributeError: No such tool is declared.
            TypeError: The arguments do not fit the tool, or are not JSON.
        """
        found = self.tools.get(name)
        if found is None:
            declared = ", ".join(self.tools) or "none"
            raise AttributeError(f"the agent called the undeclared tool {name!r} (declared: {declared})")
        arguments = found.arguments(args, kwargs)
        try:
            canonical = json_copy(arguments)
        except ValueError as error:
            raise TypeError(f"tool {name!r}: its arguments must be JSON values ({error})") from None
        return found, canonical, tool_key(self.system, name, canonical)

    def lookup(self, found: AgentTool, key: str) -> tuple[bool, JsonValue]:
        """``(True, result)`` when the call needs no tool: a gold replacement or a cache hit."""
        if found.context and self.gold is not None:
            return True, [passage.model_dump(mode="json") for passage in self.gold]
        if self.cache is not None:
            cached = self.cache.get(key)
            if isinstance(cached, dict) and "result" in cached:
                with self._lock:
                    self.hits += 1
                return True, cached["result"]
        return False, None

    def store(self, found: AgentTool, key: str, value: Any) -> JsonValue:
        """The result of a call that ran, checked, cached and counted.

        Raises:
            TypeError: A context tool returned no passages with text, or any tool a
                value that is not JSON.
        """
        result = _passages(found, value) if found.context else _json(found, value)
        with self._lock:
            self.misses += 1
        if self.cache is not None and not (found.context and self.gold is not None):
            self.cache.put(key, result)
        return result

    def record(self, found: AgentTool, arguments: dict[str, Any], result: JsonValue) -> Any:
        """Add the call and its result to the transcript; what the agent receives back."""
        with self._lock:
            self.calls += 1
            call_id = f"call_{self.calls}"
            self.items.append({"role": "assistant", "content": [
                {"type": "tool_call", "tool_call_id": call_id, "name": found.name, "arguments": arguments}]})
            self.items.append({"role": "tool", "tool_call_id": call_id,
                               "content": [{"type": "tool_result", "tool_result": result}]})  # fmt: skip
        if found.context and isinstance(result, list):
            return [Passage.model_validate(item) for item in result]
        return json.loads(json.dumps(result))  # a copy: the agent may change what it got

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call a synchronous tool (or answer it from the cache)."""
        found, arguments, key = self.prepare(name, args, kwargs)
        known, result = self.lookup(found, key)
        if not known:
            value = _invoke(found, arguments)
            result = self.store(found, key, value)
        return self.record(found, arguments, result)

    def awaitable(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        """The call of an ``async def`` tool, to await; one never awaited is found by `unawaited`."""
        call = self.acall(name, args, kwargs)
        with self._lock:
            self.pending.append((name, call))
        return call

    def unawaited(self) -> str | None:
        """The tool a finished run called without awaiting the call, if any; such calls are closed."""
        with self._lock:
            never = [(name, call) for name, call in self.pending
                     if inspect.getcoroutinestate(call) == inspect.CORO_CREATED]  # fmt: skip
            self.pending.clear()
        for _name, call in never:
            call.close()  # never run: no "was never awaited" warning at exit
        return never[0][0] if never else None

    async def acall(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call an ``async def`` tool (or answer it from the cache)."""
        found, arguments, key = self.prepare(name, args, kwargs)
        known, result = self.lookup(found, key)
        if not known:
            value = await _invoke(found, arguments)
            result = self.store(found, key, value)
        return self.record(found, arguments, result)


def _invoke(found: AgentTool, arguments: dict[str, Any]) -> Any:
    # By name, as the identity holds them; the declared parameters travel beside them. Copies
    # of both: a tool that changes what it was handed changes neither the transcript nor the
    # next call's parameters.
    own = copy.deepcopy(arguments)
    return found.method(**own) if found.params is None else found.method(**own, params=found.params.model_copy(deep=True))


def _passages(found: AgentTool, value: Any) -> JsonValue:
    items = list(value) if isinstance(value, list | tuple) else None
    if items is None:
        raise TypeError(f"context tool {found.name!r} returned {type(value).__name__}, expected a list of Passage")
    passages: list[JsonValue] = []
    for position, item in enumerate(items, start=1):
        try:
            passage = item if isinstance(item, Passage) else Passage.model_validate(item)
        except ValidationError as error:
            raise TypeError(f"context tool {found.name!r}: result {position} is not a Passage "
                            f"({error.errors()[0]['msg']})") from None  # fmt: skip
        if passage.text is None:
            raise TypeError(f"context tool {found.name!r}: result {position} ({passage.doc_id}) has no text")
        passages.append(passage.model_dump(mode="json"))
    try:
        return json_copy(passages)  # a NaN or infinite score is no JSON number
    except ValueError as error:
        raise TypeError(f"context tool {found.name!r} returned passages that are not JSON ({error})") from None


def _json(found: AgentTool, value: Any) -> JsonValue:
    try:
        result: JsonValue = json_copy(value)
    except ValueError as error:
        raise TypeError(f"tool {found.name!r} returned a value that is not JSON ({error})") from None
    return result


def input_message(case_input: Any) -> JsonValue:
    """The transcript's first message: the case's input as the user's text (text as it
    is, anything else as its JSON)."""
    text = case_input if isinstance(case_input, str) else json.dumps(case_input, ensure_ascii=False)
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def final_text(output: Any) -> str:
    """The transcript's final answer: the output when it is text, an object's ``answer``
    text when it has one, the output's JSON otherwise."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and isinstance(output.get("answer"), str):
        return output["answer"]
    return json.dumps(output, ensure_ascii=False, default=str)


class Tools:
    """The tools an agent's ``run`` is handed: ``tools.<name>(**arguments)`` calls one.

    A call of an ``async def`` tool returns an awaitable. Each call is a cached
    stage: a call whose identity was answered before returns the recorded result
    without running the tool.
    """

    def __init__(self, session: ToolSession) -> None:
        self._session = session

    @property
    def names(self) -> tuple[str, ...]:
        """The declared tools' names."""
        return tuple(self._session.tools)

    @property
    def forced(self) -> str | None:
        """The context tool this run must call (pass it to the model as its tool
        choice), or ``None``: set only under diagnosis's forced call."""
        return self._session.forced

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """Call the tool ``name`` with these arguments."""
        session = self._session
        found = session.tools.get(name)
        if found is not None and found.is_async:
            return session.awaitable(name, args, kwargs)
        return session.call(name, args, kwargs)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._session.tools:
            declared = ", ".join(self._session.tools) or "none"
            raise AttributeError(f"the agent called the undeclared tool {name!r} (declared: {declared})")

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call(name, *args, **kwargs)

        return call
