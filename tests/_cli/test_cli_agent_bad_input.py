"""A live agent's bad configuration through ``oloproof run``: exit 2, exactly one error line
naming the file, the line and the field, and no run written.

Every refusal here comes before the command connects to Prefect: the API given answers
nothing, so input that got past validation by mistake fails its test rather than running.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

from offline import line_of, offline_run_cli  # noqa: F401 - the module's run_cli fixture

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "support_agent"

MODULE = '''
from pydantic import BaseModel, Field

from oloproof import Passage, agent_system, tool


class Limit(BaseModel):
    limit: int = Field(default=2, ge=1)


class Agent:
    """No @agent_system: an ordinary class with the right methods."""

    @tool(context=True)
    def search(self, query: str):
        return [Passage(doc_id="d1", text=query)]

    def run(self, input, tools):
        return {"answer": tools.search(query=input)[0].text}


@agent_system(name="{name}", version="1", index_version="i1")
class Declared(Agent):
    @tool
    def lookup(self, order: int):
        return {"order": order}


class Twice(Declared):
    @tool(name="search", context=True)
    def search_again(self, query: str):
        return []


class FileSearch(Declared):
    @tool(name="file_search", context=True)
    def files(self, query: str):
        return []


class Waits(Declared):
    @tool
    async def later(self, order: int):
        return {"order": order}


class Limited(Declared):
    @tool(context=True, parameters=Limit)
    def search(self, query: str, params: Limit):
        return [Passage(doc_id="d1", text=query)][: params.limit]
'''


def agent_project(tmp_path: Path, module: str, cls: str = "Declared", system_yaml: str = "", extra_yaml: str = "") -> Path:
    """A two-case agent project whose agent lives in ``<module>.py`` (unique per test)."""
    directory = tmp_path / module
    directory.mkdir()
    (directory / f"{module}.py").write_text(MODULE.replace("{name}", module), encoding="utf-8")
    cases = [{"id": "c1", "input": "alpha", "expected": {"answer": "alpha"}},
             {"id": "c2", "input": "beta", "expected": {"answer": "beta"}}]  # fmt: skip
    (directory / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (directory / "oloproof.yaml").write_text(
        textwrap.dedent(f"""\
            system:
              agent:
                object: {module}:{cls}
            """)
        + system_yaml
        + "dataset: cases.jsonl\nevaluators:\n  - {type: contains}\n"
        + extra_yaml,
        encoding="utf-8",
    )  # fmt: skip
    return directory


def assert_rejected(run_cli, project: Path, expected: str, *extra: str) -> None:
    """Exit 2, exactly the one line ``oloproof: error: <expected>`` on stderr, nothing written."""
    code, out, err = run_cli("run", str(project), *extra)
    assert (code, err) == (2, f"oloproof: error: {expected}\n")
    assert out == ""
    assert not (project / ".oloproof").exists() or not list((project / ".oloproof").rglob("run.json"))


def test_a_class_not_declared_as_an_agent_is_refused(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_undeclared", cls="Agent")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:3: field 'system.agent.object': agent_bad_undeclared:Agent is not "
                    "declared as an agent: decorate its class with @oloproof.agent_system(name=..., version=...)")


def test_a_rag_system_and_an_agent_at_once_are_refused(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_both", system_yaml="  rag: {object: x:Rag}\n")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:2: field 'system.agent': "
                    "a system is staged (system.rag) or an agent (system.agent), not both")


def test_parameters_of_a_tool_that_does_not_exist_are_refused(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_tool", system_yaml="    tools:\n      serch: {limit: 1}\n")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:{line_of(config, 'serch')}: field 'system.agent.tools.serch': "
                    "agent_bad_tool:Declared declares no tool 'serch' (declared: lookup, search)")


def test_parameters_of_a_tool_that_does_not_exist_are_refused_at_set(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_tool_set")
    assert_rejected(run_cli, project, "--set: field 'system.agent.tools.nope': agent_bad_tool_set:Declared "
                    "declares no tool 'nope' (declared: lookup, search)", "--set", "system.agent.tools.nope.limit=1")


def test_parameters_for_a_tool_declaring_none_are_refused(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_params", system_yaml="    tools:\n      lookup: {limit: 1}\n")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:{line_of(config, 'lookup:')}: field 'system.agent.tools.lookup': "
                    "the tool 'lookup' declares no parameters: name their model in @tool(parameters=...)")


def test_an_invalid_tool_parameter_is_refused_in_the_file_and_on_the_command_line(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_value", cls="Limited",
                            system_yaml="    tools:\n      search: {limit: 0}\n")  # fmt: skip
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:{line_of(config, 'limit: 0')}: field 'system.agent.tools.search.limit': "
                    "Input should be greater than or equal to 1 (got 0)")


def test_an_invalid_parameter_of_the_example_s_search_tool_is_refused(run_cli, tmp_path):
    project = tmp_path / "examples" / "support_agent"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".oloproof", "__pycache__"))
    # The example reads the support desk's knowledge base beside it, or from support_rag's folder.
    (tmp_path / "examples" / "support_rag").mkdir()
    shutil.copy(ROOT / "examples" / "support_rag" / "knowledge_base.jsonl", tmp_path / "examples" / "support_rag")
    assert_rejected(run_cli, project, "--set: field 'system.agent.tools.search_kb.limit': "
                    "Input should be greater than or equal to 1 (got 0)", "--set", "system.agent.tools.search_kb.limit=0")
    assert_rejected(run_cli, project, "--set: field 'system.agent.tools.search_kb.depth': "
                    "unknown parameter of Search (known: limit)", "--set", "system.agent.tools.search_kb.depth=2")


def test_a_context_tool_the_agent_does_not_declare_is_refused(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_context", extra_yaml="context_tools: [search, nope]\n")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:{line_of(config, 'context_tools')}: field 'context_tools.1': "
                    "the agent declares no context tool 'nope' (its context tools: search); "
                    "declare it with @tool(context=True)")
    # A tool it declares, but not as a context tool, is refused alike.
    project = agent_project(tmp_path, "agent_bad_context_kind", extra_yaml="context_tools: [lookup]\n")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:{line_of(config, 'context_tools')}: field 'context_tools.0': "
                    "the agent declares no context tool 'lookup' (its context tools: search); "
                    "declare it with @tool(context=True)")


def test_two_methods_declaring_one_tool_name_are_refused(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_twice", cls="Twice")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:3: field 'system.agent.object': "
                    "two methods declare the tool 'search': search and search_again")


def test_a_tool_named_file_search_is_refused(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_file_search", cls="FileSearch")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:3: field 'system.agent.object': "
                    "agent_bad_file_search:FileSearch.files declares the tool name 'file_search', the vendor's "
                    "retrieval tool, whose results have another shape: name it otherwise with @tool(name=...)")


def test_a_synchronous_run_with_an_async_tool_is_refused(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_waits", cls="Waits")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:3: field 'system.agent.object': agent_bad_waits:Waits.run is "
                    "synchronous and cannot await the async tool 'later': make run `async def`, or the tool a plain def")


def test_text_given_for_a_numeric_tool_parameter_is_refused(run_cli, tmp_path):
    project = agent_project(tmp_path, "agent_bad_text", cls="Limited", system_yaml="    tools:\n      search: {limit: '2'}\n")
    config = project / "oloproof.yaml"
    assert_rejected(run_cli, project, f"{config}:{line_of(config, 'limit:')}: field 'system.agent.tools.search.limit': "
                    "expected a number, got text '2'")
