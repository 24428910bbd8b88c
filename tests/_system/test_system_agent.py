"""A live agent's identities and its tool calls, without running a flow.

A tool call's identity is the tool (name, version, declared parameters), its canonical
arguments and ``index_version``, never the agent's version or run parameters; an agent
run's identity is all of the agent's settings, the input and the intervention. Each
call through ``tools`` is looked up in the tool cache, checked and recorded.
"""

from __future__ import annotations

import asyncio
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from oloproof import Passage
from oloproof._exceptions import ConfigError
from oloproof._system._agent import AgentTool, declared_tools, tool
from oloproof._system._resolve import SystemHandle, resolve_system
from oloproof._system._toolbox import Tools, ToolSession
from oloproof.config import load_project
from oloproof.stages._identity import agent_run_key, tool_key

MODULE = '''
from pydantic import BaseModel, Field

from oloproof import Passage, agent_system, tool


class Scope(BaseModel):
    corpus: str = "kb"


class Prompt(BaseModel):
    temperature: float = 0.0


@agent_system(name="ids", version="1", index_version="i1", generator=Prompt)
class Agent:
    def __init__(self):
        self.calls = []

    @tool(context=True, parameters=Scope)
    def search(self, query: str, params: Scope, limit: int = 3, filters: dict | None = None):
        self.calls.append(("search", query, limit, params.corpus))
        return [Passage(doc_id=f"d{n}", score=1.0 / n, text=f"{query} {n}") for n in range(1, limit + 1)]

    @tool
    def lookup(self, order: int):
        self.calls.append(("lookup", order))
        return {"order": order, "status": "shipped"}

    @tool(context=True)
    async def asearch(self, query: str):
        self.calls.append(("asearch", query))
        return [Passage(doc_id="a1", text=query)]

    @tool(context=True)
    def text_only(self, query: str):
        self.calls.append(("text_only", query))
        return query

    @tool(context=True)
    def untexted(self, query: str):
        self.calls.append(("untexted", query))
        return [{"doc_id": "u1"}]

    @tool
    def opaque(self):
        self.calls.append(("opaque",))
        return object()

    @tool(parameters=Scope)
    def meddle(self, data: list, params: Scope):
        self.calls.append(("meddle", list(data), params.corpus))
        data.append("changed by the tool")
        params.corpus = "changed by the tool"
        return {"seen": len(data)}

    @tool(context=True)
    def unscored(self, query: str):
        self.calls.append(("unscored", query))
        return [Passage(doc_id="n1", score=float("nan"), text=query)]

    async def run(self, input, tools, params):  # async: it may await asearch
        return {"answer": tools.search(query=input)[0].text}


class Revised(Agent):
    """The same agent whose search tool's code changed."""

    @tool(context=True, parameters=Scope, version="2")
    def search(self, query: str, params: Scope, limit: int = 3, filters: dict | None = None):
        return []
'''


def _project(tmp_path: Path, module: str, cls: str = "Agent") -> Path:
    (tmp_path / f"{module}.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "oloproof.yaml").write_text(textwrap.dedent(f"""\
        system:
          agent:
            object: {module}:{cls}
        dataset: cases.jsonl
        """), encoding="utf-8")  # fmt: skip
    return tmp_path


@pytest.fixture
def project(tmp_path) -> Path:
    return _project(tmp_path, f"agent_ids_{tmp_path.name[-24:].replace('-', '_')}")


def _handle(project: Path, cls: str = "Agent", **settings: Any) -> SystemHandle:
    if cls != "Agent":
        settings["system.agent.object"] = f"{next(project.glob('agent_ids_*.py')).stem}:{cls}"
    return resolve_system(load_project(project, settings))


def _key(handle: SystemHandle, name: str, *args: Any, **kwargs: Any) -> str:
    return ToolSession(system=handle.config, tools=handle.tools, cache=None).prepare(name, args, kwargs)[2]


class DictCache:
    """A tool cache in memory, as the store's ``tool`` stage holds it."""

    def __init__(self) -> None:
        self.records: dict[str, Any] = {}

    def get(self, key: str) -> Any:
        return self.records.get(key)

    def put(self, key: str, result: Any) -> None:
        self.records[key] = {"result": result}


# -- identities -------------------------------------------------------------------------------


def test_a_call_s_identity_is_its_canonical_arguments(project):
    handle = _handle(project)
    key = _key(handle, "search", query="x")
    # Defaults filled in, positional or named, in any order: one call.
    assert _key(handle, "search", query="x", limit=3) == key
    assert _key(handle, "search", "x") == key
    assert _key(handle, "search", limit=3, query="x", filters=None) == key
    assert key == tool_key(handle.config, "search", {"query": "x", "limit": 3, "filters": None})
    nested = _key(handle, "search", query="x", filters={"a": 1, "b": [1, {"c": 2, "d": 3}]})
    assert _key(handle, "search", filters={"b": [1, {"d": 3, "c": 2}], "a": 1}, query="x") == nested
    # Any other value is another call.
    others = {_key(handle, "search", query="x", limit=4), _key(handle, "search", query="y"), nested,
              _key(handle, "search", query="x", filters={"a": 2}), _key(handle, "lookup", order=1)}  # fmt: skip
    assert len(others | {key}) == 6


def test_a_call_s_identity_follows_the_tool_and_the_index_never_the_agent(project):
    handle = _handle(project)
    base = {name: _key(handle, name, **arguments) for name, arguments in (("search", {"query": "x"}),
                                                                          ("lookup", {"order": 7}))}  # fmt: skip

    def keys(cls: str = "Agent", **settings: Any) -> dict[str, str]:
        changed = _handle(project, cls, **settings)
        return {"search": _key(changed, "search", query="x"), "lookup": _key(changed, "lookup", order=7)}

    # The agent's version and its run's parameters are not a call's identity: a new prompt reuses every call.
    assert keys(**{"system.version": "2"}) == base
    assert keys(**{"system.agent.generator.temperature": 0.7}) == base
    # The tool's version and declared parameters are its own calls' identity, and no other tool's.
    assert keys("Revised") == {"search": keys("Revised")["search"], "lookup": base["lookup"]}
    assert keys("Revised")["search"] != base["search"]
    assert keys(**{"system.agent.tools.search.corpus": "faq"}) == {"search": keys(**{
        "system.agent.tools.search.corpus": "faq"})["search"], "lookup": base["lookup"]}  # fmt: skip
    assert keys(**{"system.agent.tools.search.corpus": "faq"})["search"] != base["search"]
    # The index is every call's identity.
    reindexed = keys(**{"system.agent.index_version": "i2"})
    assert reindexed["search"] != base["search"] and reindexed["lookup"] != base["lookup"]


def test_an_agent_run_s_identity_is_the_whole_agent_the_input_and_the_intervention(project):
    handle = _handle(project)
    base = agent_run_key(handle.config, {"question": "x", "n": 1})
    assert agent_run_key(_handle(project).config, {"n": 1, "question": "x"}) == base
    gold = {"gold_context": [{"doc_id": "g1", "score": None, "text": "gold", "chunk_id": None}], "forced": "search"}
    changed = [
        agent_run_key(handle.config, {"question": "y", "n": 1}),
        agent_run_key(_handle(project, **{"system.version": "2"}).config, {"question": "x", "n": 1}),
        agent_run_key(_handle(project, **{"system.agent.generator.temperature": 0.7}).config, {"question": "x", "n": 1}),
        agent_run_key(_handle(project, **{"system.agent.index_version": "i2"}).config, {"question": "x", "n": 1}),
        agent_run_key(_handle(project, "Revised").config, {"question": "x", "n": 1}),
        agent_run_key(_handle(project, **{"system.agent.tools.search.corpus": "faq"}).config, {"question": "x", "n": 1}),
        agent_run_key(handle.config, {"question": "x", "n": 1}, gold),
        agent_run_key(handle.config, {"question": "x", "n": 1}, {**gold, "forced": None}),
    ]  # fmt: skip
    assert len({base, *changed}) == len(changed) + 1


def test_the_resolved_agent_records_each_tool_s_spec(project):
    handle = _handle(project, **{"system.agent.tools.search.corpus": "faq"})
    assert handle.config.kind == "agent"
    assert (handle.config.name, handle.config.version, handle.config.index_version) == ("ids", "1", "i1")
    assert handle.config.generator == {"temperature": 0.0}
    assert handle.config.tools == {
        "asearch": {"version": "1", "context": True, "parameters": None},
        "lookup": {"version": "1", "context": False, "parameters": None},
        "meddle": {"version": "1", "context": False, "parameters": {"corpus": "kb"}},
        "opaque": {"version": "1", "context": False, "parameters": None},
        "search": {"version": "1", "context": True, "parameters": {"corpus": "faq"}},
        "text_only": {"version": "1", "context": True, "parameters": None},
        "unscored": {"version": "1", "context": True, "parameters": None},
        "untexted": {"version": "1", "context": True, "parameters": None},
    }
    assert handle.context_tools == ("asearch", "search", "text_only", "unscored", "untexted")


# -- calls through ``tools`` ------------------------------------------------------------------


def _tools(project: Path, cache: DictCache | None = None, **session: Any) -> tuple[Tools, ToolSession, list]:
    handle = _handle(project)
    toolbox = ToolSession(system=handle.config, tools=handle.tools, cache=cache, **session)
    toolbox.begin("x")
    return Tools(toolbox), toolbox, handle.target.calls


def test_the_same_call_twice_in_one_run_runs_the_tool_once(project):
    cache = DictCache()
    tools, session, calls = _tools(project, cache)
    first = tools.search(query="x", limit=2)
    again = tools.search("x", 2)
    assert first == again == [Passage(doc_id="d1", score=1.0, text="x 1"), Passage(doc_id="d2", score=0.5, text="x 2")]
    assert calls == [("search", "x", 2, "kb")]
    assert (session.hits, session.misses) == (1, 1)
    # Both calls are in the transcript, each with its own id and its canonical arguments.
    transcript = session.finish({"answer": "x 1"})
    assert [item["role"] for item in transcript] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [part["tool_call_id"] for item in transcript[1::2][:2] for part in item["content"]] == ["call_1", "call_2"]
    assert transcript[3]["content"][0]["arguments"] == {"query": "x", "limit": 2, "filters": None}
    assert transcript[2]["content"][0]["tool_result"] == transcript[4]["content"][0]["tool_result"]
    assert transcript[-1] == {"role": "assistant", "content": [{"type": "text", "text": "x 1"}]}
    # Another run (another session on the same cache) runs nothing.
    tools, session, calls = _tools(project, cache)
    assert tools.search(query="x", limit=2) == first
    assert (calls, session.hits, session.misses) == ([], 1, 0)


def test_what_the_agent_gets_back_is_its_own_copy(project):
    cache = DictCache()
    tools, _session, calls = _tools(project, cache)
    result = tools.lookup(order=7)
    result["status"] = "changed by the agent"
    assert tools.lookup(order=7) == {"order": 7, "status": "shipped"}
    assert calls == [("lookup", 7)]


def test_a_tool_that_changes_what_it_was_handed_changes_neither_the_transcript_nor_the_next_call(project):
    tools, session, calls = _tools(project, DictCache())
    given = ["a"]
    assert tools.meddle(data=given) == {"seen": 2}
    assert tools.meddle(data=["b"]) == {"seen": 2}
    assert given == ["a"]  # the agent's own list is not the tool's
    # Each call was handed the file's parameters, whatever the call before did to its copy.
    assert calls == [("meddle", ["a"], "kb"), ("meddle", ["b"], "kb")]
    transcript = session.finish({"answer": ""})
    assert [transcript[i]["content"][0]["arguments"] for i in (1, 3)] == [{"data": ["a"]}, {"data": ["b"]}]


def test_async_tools_return_awaitables_and_are_cached_alike(project):
    cache = DictCache()
    tools, session, calls = _tools(project, cache)

    async def run() -> list:
        return [await tools.asearch(query="q"), await tools.call("asearch", query="q")]

    assert asyncio.run(run()) == [[Passage(doc_id="a1", text="q")]] * 2
    assert calls == [("asearch", "q")]
    assert (session.hits, session.misses) == (1, 1)


def test_an_undeclared_tool_is_an_error_naming_it_and_the_declared_ones(project):
    tools, _session, _calls = _tools(project, DictCache())
    declared = "(declared: asearch, lookup, meddle, opaque, search, text_only, unscored, untexted)"
    with pytest.raises(AttributeError, match=rf"^the agent called the undeclared tool 'nope' {re.escape(declared)}$"):
        tools.nope(query="x")
    with pytest.raises(AttributeError, match=r"undeclared tool 'nope' \(declared: asearch, "):
        tools.call("nope", query="x")
    assert tools.names == ("asearch", "lookup", "meddle", "opaque", "search", "text_only", "unscored", "untexted")


@pytest.mark.parametrize(("arguments", "problem"), [
    ({"query": {"a", "b"}}, "Object of type set is not JSON serializable"),
    ({"query": "x", "limit": float("nan")}, "Out of range float values are not JSON compliant"),
    ({"query": object()}, "Object of type object is not JSON serializable"),
    # {1: ...} would be written as {"1": ...}, silently colliding with a "1" beside it.
    ({"query": "x", "filters": {1: "a", "1": "b"}}, "a key that is not text: 1 (int)"),
], ids=["set", "nan", "object", "key"])  # fmt: skip
def test_arguments_that_are_not_json_are_refused_before_the_tool_runs(project, arguments, problem):
    cache = DictCache()
    tools, session, calls = _tools(project, cache)
    with pytest.raises(TypeError) as raised:
        tools.search(**arguments)
    assert str(raised.value).startswith("tool 'search': its arguments must be JSON values (")
    assert problem in str(raised.value)
    assert (calls, cache.records, session.misses) == ([], {}, 0)


def test_arguments_the_tool_cannot_take_are_refused(project):
    tools, _session, calls = _tools(project, DictCache())
    with pytest.raises(TypeError, match=r"^tool 'search': "):
        tools.search(question="x")
    with pytest.raises(TypeError, match=r"^tool 'search': params are Oloproof's to pass, not the agent's$"):
        tools.search(query="x", params=None)
    assert calls == []


@pytest.mark.parametrize(("name", "message"), [
    ("text_only", "context tool 'text_only' returned str, expected a list of Passage"),
    ("untexted", "context tool 'untexted': result 1 (u1) has no text"),
    ("opaque", "tool 'opaque' returned a value that is not JSON (Object of type object is not JSON serializable)"),
    ("unscored", ("context tool 'unscored' returned passages that are not JSON (Out of range float values are not "
                 "JSON compliant)")),
])  # fmt: skip
def test_a_result_of_the_wrong_shape_is_an_error_and_is_not_cached(project, name, message):
    cache = DictCache()
    tools, _session, calls = _tools(project, cache)
    arguments = {} if name == "opaque" else {"query": "x"}
    with pytest.raises(TypeError) as raised:
        tools.call(name, **arguments)
    assert str(raised.value) == message
    assert cache.records == {}
    assert [call[0] for call in calls] == [name]


def test_gold_passages_replace_every_context_tool_s_result_uncached(project):
    cache = DictCache()
    gold = [Passage(doc_id="g1", text="gold")]
    tools, _session, calls = _tools(project, cache, gold=gold, forced="search")
    assert tools.forced == "search"
    assert tools.search(query="x") == gold
    assert asyncio.run(tools.asearch(query="x")) == gold
    # A tool that is not a context tool runs and is cached as ever.
    assert tools.lookup(order=1) == {"order": 1, "status": "shipped"}
    assert calls == [("lookup", 1)]
    assert list(cache.records.values()) == [{"result": {"order": 1, "status": "shipped"}}]


# -- declarations -----------------------------------------------------------------------------


def test_two_methods_declaring_one_tool_name_are_refused():
    class Twice:
        @tool
        def search(self, query: str) -> list:
            return []

        @tool(name="search")
        def search_again(self, query: str) -> list:
            return []

    with pytest.raises(ValueError, match=r"^two methods declare the tool 'search': search and search_again$"):
        declared_tools(Twice)


def test_a_tool_named_file_search_is_refused(tmp_path):
    project = _project(tmp_path, "agent_file_search")
    (tmp_path / "agent_file_search.py").write_text(MODULE + textwrap.dedent('''

        class FileSearch(Agent):
            @tool(name="file_search", context=True)
            def files(self, query: str):
                return []
        '''), encoding="utf-8")  # fmt: skip
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(project, {"system.agent.object": "agent_file_search:FileSearch"}))
    assert raised.value.field == "system.agent.object"
    assert raised.value.message.startswith("agent_file_search:FileSearch.files declares the tool name 'file_search'")


@pytest.mark.parametrize("name", ["call", "names", "forced"])
def test_a_tool_named_like_an_attribute_of_tools_is_refused(tmp_path, name):
    # tools.forced, tools.names and tools.call are the tools object's own: such a tool could never be called.
    module = f"agent_own_{name}"
    project = _project(tmp_path, module, cls="Shadowed")
    (tmp_path / f"{module}.py").write_text(MODULE + textwrap.dedent(f'''

        class Shadowed(Agent):
            @tool(name="{name}")
            def shadowed(self, query: str):
                return {{}}
        '''), encoding="utf-8")  # fmt: skip
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(project))
    assert (raised.value.line, raised.value.field) == (3, "system.agent.object")
    assert raised.value.message == (f"{module}:Shadowed.shadowed declares the tool name {name!r}, which the tools "
                                    f"object handed to run has for itself (tools.{name}): name it otherwise "
                                    "with @tool(name=...)")  # fmt: skip


@pytest.mark.parametrize(("run", "declares", "message"), [
    ("def run(self, input):", "", "run(input, tools) is how an agent is called; it does not take those arguments"),
    ("def run(self, input, tools):", ", generator=Prompt",
     "run(input, tools, params) is how a system with generator parameters is called; it does not take those arguments"),
], ids=["no-tools", "no-params"])  # fmt: skip
def test_a_run_that_cannot_take_its_arguments_is_refused_before_any_call(tmp_path, run, declares, message):
    module = f"agent_arity_{'params' if declares else 'tools'}"
    project = _project(tmp_path, module, cls="Narrow")
    (tmp_path / f"{module}.py").write_text(MODULE + textwrap.dedent(f'''

        @agent_system(name="narrow", version="1", index_version="i1"{declares})
        class Narrow:
            {run}
                return {{}}
        '''), encoding="utf-8")  # fmt: skip
    with pytest.raises(ConfigError) as raised:
        resolve_system(load_project(project))
    assert (raised.value.line, raised.value.field) == (3, "system.agent.object")
    assert raised.value.message == f"{module}:Narrow.{message}"


def test_a_tool_s_spec_is_its_version_kind_and_parameters():
    def search(query: str) -> list:
        return []

    assert AgentTool(name="s", version="3", context=True, method=search).spec() == {
        "version": "3", "context": True, "parameters": None}  # fmt: skip
