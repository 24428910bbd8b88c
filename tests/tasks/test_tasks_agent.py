"""A live agent's generate stage: one run per case, each tool call a cached stage of its own.

The agents here count their real invocations in a file beside them, so a cache hit shows as
no invocation at all. The first tests drive the stage in-process (the run's environment,
the generate stage's work items, the stage cache), without Prefect; the slow ones run
``oloproof run`` and read the report, the manifest's cache counts and the ``cases`` table.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from oloproof.records import GenerationRecord
from oloproof.stages._batch import Batch
from oloproof.tasks import RunRequest, prepare_environment
from oloproof.tasks._cached import Outcome, run_cached
from oloproof.tasks._generate import generation_items

AGENT = '''
import asyncio
from pathlib import Path

from pydantic import BaseModel, Field

from oloproof import Passage, agent_system, tool

LOG = Path(__file__).with_name("invocations.log")
DOCS = {
    "d1": "alpha ships in two days",
    "d2": "beta costs ten dollars",
    "d3": "gamma needs an account",
    "d4": "delta is refunded in a week",
    "d5": "epsilon works offline",
}


def invoked(what):
    with LOG.open("a", encoding="utf-8") as log:
        log.write(what + "\\n")


def found(query, limit):
    words = set(query.split())
    return [Passage(doc_id=doc_id, score=1.0, text=text) for doc_id, text in DOCS.items()
            if words & set(text.split())][:limit]


class Search(BaseModel):
    limit: int = Field(default=2, ge=1, le=4)


class Prompt(BaseModel):
    style: str = "plain"


@agent_system(name="tiny-agent", version="1", index_version="i1", generator=Prompt)
class Agent:
    @tool(context=True, parameters=Search)
    def search(self, query: str, params: Search, exact: bool = False):
        invoked("search")
        return found(query, params.limit)

    @tool
    def order_status(self, order: str):
        invoked("order_status")
        raise RuntimeError(f"the order service is down for {order}")

    @tool(context=True, name="raw_search")
    def search_as_text(self, query: str):
        invoked("raw_search")
        return "passages, as one text"

    @tool(context=True)
    def broken_search(self, query: str):
        invoked("broken_search")
        return [Passage(doc_id=None, text=query)]

    def run(self, input, tools, params):
        invoked("run")
        question, mode = input["question"], input.get("mode", "ok")
        if mode == "meddle":  # what a run is handed is its own: the case and the next run keep theirs
            input["question"], params.style = "changed by the agent", "shout"
        if mode == "surrogate":
            return {"answer": "half a character: \\ud800"}
        if mode == "raise":
            raise ValueError("the model refused to answer")
        if mode == "tool_raises":
            tools.order_status(order=question)
        if mode == "undeclared":
            tools.nope(query=question)
        if mode == "set":
            tools.search(query={question})
        if mode == "text":
            tools.raw_search(query=question)
        if mode == "invalid":
            tools.broken_search(query=question)
        passages = tools.search(query=question)
        if mode == "twice":
            passages = tools.search(query=question, exact=False)
        answer = passages[0].text if passages else "I do not know"
        return {"answer": answer if params.style == "plain" else answer.upper(),
                "citations": [passage.doc_id for passage in passages]}


@agent_system(name="tiny-async-agent", version="1", index_version="i1")
class AsyncAgent:
    @tool(context=True)
    async def search(self, query: str):
        invoked("search")
        await asyncio.sleep(0)
        return found(query, 2)

    async def run(self, input, tools):
        invoked("run")
        if input.get("mode") == "slow":
            await asyncio.sleep(3)  # past the generate timeout: cancelled
        if input.get("mode") == "forget":
            tools.search(query=input["question"])  # never awaited: the call never runs
            return {"answer": "from memory", "citations": []}
        passages = await tools.search(query=input["question"])
        return {"answer": passages[0].text if passages else "I do not know",
                "citations": [passage.doc_id for passage in passages]}
'''

QUESTIONS = {"alpha": "alpha", "beta": "beta", "gamma": "gamma", "delta": "delta", "epsilon": "epsilon"}

CACHING = [("alpha", "ok"), ("beta", "ok"), ("gamma", "ok"), ("delta", "ok"), ("epsilon", "twice")]
"""Five cases, five distinct searches; the last searches twice with the same arguments."""

FAILING = [("alpha", "ok"), ("beta", "raise"), ("gamma", "tool_raises"), ("delta", "undeclared"), ("epsilon", "set"),
           ("alpha", "text"), ("beta", "invalid")]  # fmt: skip
"""One case that answers and one per way an agent's run fails."""

ERRORS = {
    "c1-raise": "ValueError: the model refused to answer (at {module}:{line_raise})",
    "c2-tool_raises": "RuntimeError: the order service is down for gamma (at {module}:{line_order})",
    "c3-undeclared": "AttributeError: the agent called the undeclared tool 'nope' "
                     "(declared: broken_search, order_status, raw_search, search) (at {module}:{line_nope})",
    "c4-set": "TypeError: tool 'search': its arguments must be JSON values "
              "(Object of type set is not JSON serializable) (at {module}:{line_set})",
    "c5-text": "TypeError: context tool 'raw_search' returned str, expected a list of Passage (at {module}:{line_text})",
    "c6-invalid": "ValueError: 1 validation error for Passage; doc_id; Input should be a valid string "
                  "[type=string_type, input_value=None, input_type=NoneType]",
}  # fmt: skip
"""Each failing case's error: the exception and the line of the agent's own code it came from."""


def agent_project(folder: Path, cases: list[tuple[str, str]], *, cls: str = "Agent", extra: str = "") -> Path:
    """A project of the agent ``cls`` over ``cases`` (``(question, mode)``, ids ``c<n>-<mode>``)."""
    folder.mkdir(parents=True)
    module = f"agent_{folder.name}"
    (folder / f"{module}.py").write_text(AGENT, encoding="utf-8")
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for n, (question, mode) in enumerate(cases):
            case = {"id": f"c{n}-{mode}", "input": {"question": question, "mode": mode},
                    "expected": {"answer": question, "relevant": [{"doc_id": f"d{list(QUESTIONS).index(question) + 1}"}]}}
            handle.write(json.dumps(case) + "\n")
    (folder / "oloproof.yaml").write_text(
        f"system:\n  agent:\n    object: {module}:{cls}\n"
        "dataset: cases.jsonl\n"
        "evaluators:\n"
        "  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}\n"
        "  - {type: hit_rate, k: 2}\n"
        "batch_size: 8\n" + extra,
        encoding="utf-8",
    )  # fmt: skip
    return folder


def invocations(project: Path) -> Counter[str]:
    """What the agent really ran so far: its runs and each tool's calls."""
    log = project / "invocations.log"
    return Counter(log.read_text(encoding="utf-8").split()) if log.exists() else Counter()


def expected_errors(project: Path) -> dict[str, str]:
    module = next(project.glob("agent_*.py"))
    lines = module.read_text(encoding="utf-8").splitlines()

    def line(needle: str) -> int:
        return next(n for n, text in enumerate(lines, start=1) if needle in text)

    where = {"module": module.resolve(), "line_raise": line('raise ValueError("the model'),
             "line_order": line("raise RuntimeError(f\"the order"), "line_nope": line("tools.nope("),
             "line_set": line("tools.search(query={question})"), "line_text": line("tools.raw_search(")}  # fmt: skip
    return {case_id: error.format(**where) for case_id, error in ERRORS.items()}


# -- the stage in-process -----------------------------------------------------------------------


def generate(project: Path, **settings: Any) -> tuple[dict[str, Outcome], Counter[str]]:
    """The generate stage of every case of ``project``, and what it invoked."""
    before = invocations(project)
    env = prepare_environment(RunRequest(run_id="run_01AGENTSTAGE", project=str(project), settings=settings))
    try:
        outcomes = run_cached(env, "generate", generation_items(env, Batch(index=0, case_ids=tuple(env.cases)), None))
    finally:
        env.close()
    return outcomes, invocations(project) - before


def _record(outcome: Outcome) -> GenerationRecord:
    record = outcome.record_of(GenerationRecord)
    assert record is not None
    return record


def test_each_failure_is_that_case_s_error_and_the_others_answer(tmp_path):
    project = agent_project(tmp_path / "stage_failing", FAILING)
    outcomes, ran = generate(project)
    errors = {case_id: outcome.error for case_id, outcome in outcomes.items() if not outcome.ok}
    assert sorted(errors) == sorted(ERRORS)
    expected = expected_errors(project)
    for case_id, error in errors.items():
        assert error is not None and error.startswith(expected[case_id]), case_id
        assert outcomes[case_id].error_stage == "generate"
    # A tool that builds an invalid Passage is the case's error, at that line, not a broken retrieve contract.
    assert errors["c6-invalid"].endswith(f"{next(project.glob('agent_*.py')).resolve()}:"
                                         f"{_line(project, 'Passage(doc_id=None')})")  # fmt: skip
    assert _record(outcomes["c0-ok"]).output == {"answer": "alpha ships in two days", "citations": ["d1"]}
    # Every run ran; the tools ran until each failed.
    assert ran == Counter({"run": 7, "search": 1, "order_status": 1, "raw_search": 1, "broken_search": 1})
    # Nothing that failed is cached: the next run tries every failing case again.
    outcomes, ran = generate(project)
    assert [case_id for case_id, outcome in outcomes.items() if outcome.hit] == ["c0-ok"]
    assert sorted(case_id for case_id, outcome in outcomes.items() if not outcome.ok) == sorted(ERRORS)
    assert ran["run"] == 6


def test_a_run_changes_neither_its_case_nor_the_next_run_and_text_that_cannot_be_stored_is_its_error(tmp_path):
    project = agent_project(tmp_path / "stage_meddle", [("alpha", "meddle"), ("beta", "ok"), ("gamma", "surrogate")],
                            extra="max_concurrency: 1\n")  # one run after the other, in order
    env = prepare_environment(RunRequest(run_id="run_01AGENTMEDDLE", project=str(project), settings={}))
    try:
        outcomes = run_cached(env, "generate", generation_items(env, Batch(index=0, case_ids=tuple(env.cases)), None))
        assert env.cases["c0-meddle"].input == {"question": "alpha", "mode": "meddle"}
    finally:
        env.close()
    assert _record(outcomes["c1-ok"]).output["answer"] == "beta costs ten dollars"  # not shouted
    assert not outcomes["c2-surrogate"].ok
    assert "not valid Unicode text: a lone surrogate \\ud800" in (outcomes["c2-surrogate"].error or "")


def test_an_async_tool_call_never_awaited_is_that_case_s_error(tmp_path, recwarn):
    project = agent_project(tmp_path / "stage_forget", [("alpha", "forget"), ("beta", "ok")], cls="AsyncAgent")
    outcomes, ran = generate(project)
    assert outcomes["c0-forget"].error == ("the agent called the async tool 'search' without awaiting it: "
                                          "the call never ran")  # fmt: skip
    assert outcomes["c1-ok"].ok and ran == Counter({"run": 2, "search": 1})
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


def _line(project: Path, needle: str) -> int:
    lines = next(project.glob("agent_*.py")).read_text(encoding="utf-8").splitlines()
    return next(n for n, text in enumerate(lines, start=1) if needle in text)


def test_a_run_records_its_transcript_and_its_tool_calls(tmp_path):
    project = agent_project(tmp_path / "stage_twice", [("epsilon", "twice")])
    outcomes, ran = generate(project)
    record = _record(outcomes["c0-twice"])
    assert ran == Counter({"run": 1, "search": 1})  # the second, equal call was the first's
    assert (record.tools.hits, record.tools.misses) == (1, 1)
    passage = {"doc_id": "d5", "score": 1.0, "text": "epsilon works offline", "chunk_id": None}
    arguments = {"query": "epsilon", "exact": False}
    assert record.output_items == [
        {"role": "user", "content": [{"type": "text", "text": json.dumps({"question": "epsilon", "mode": "twice"})}]},
        {"role": "assistant", "content": [{"type": "tool_call", "tool_call_id": "call_1", "name": "search",
                                           "arguments": arguments}]},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "tool_result", "tool_result": [passage]}]},
        {"role": "assistant", "content": [{"type": "tool_call", "tool_call_id": "call_2", "name": "search",
                                           "arguments": arguments}]},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "tool_result", "tool_result": [passage]}]},
        {"role": "assistant", "content": [{"type": "text", "text": "epsilon works offline"}]},
    ]  # fmt: skip


def test_an_async_agent_with_async_tools_runs_and_one_past_the_timeout_is_cancelled(tmp_path):
    cases = [("alpha", "ok"), ("beta", "slow"), ("gamma", "ok")]
    project = agent_project(tmp_path / "stage_async", cases, cls="AsyncAgent", extra="timeouts: {generate: 1}\n")
    outcomes, ran = generate(project)
    assert {case_id: outcome.error for case_id, outcome in outcomes.items()} == {
        "c0-ok": None, "c1-slow": "timeout after 1s", "c2-ok": None}  # fmt: skip
    assert _record(outcomes["c2-ok"]).output == {"answer": "gamma needs an account", "citations": ["d3"]}
    # The slow run was cancelled at its sleep: it never called its tool.
    assert ran == Counter({"run": 3, "search": 2})


# -- whole runs ---------------------------------------------------------------------------------


def run(run_cli, project: Path, *options: str) -> dict:
    """``oloproof run --json``, which must succeed: its report."""
    code, out, err = run_cli("run", str(project), "--json", *options)
    assert code == 0, err[-3000:]
    report: dict = json.loads(out)
    return report


def stages(report: dict) -> tuple[dict, ...]:
    cache = report["cache"]
    return cache["execution"], cache["tools"], cache["generate"]


def count(hit: int, miss: int) -> dict[str, int]:
    return {"hit": hit, "miss": miss}


def manifests(project: Path) -> list[dict]:
    """The runs' manifests, oldest first."""
    found = [json.loads(path.read_text(encoding="utf-8")) for path in (project / ".oloproof").rglob("run.json")]
    return sorted(found, key=lambda manifest: (manifest["created_at"], manifest["run_id"]))


@pytest.mark.slow
def test_a_first_run_misses_every_call_and_an_unchanged_one_runs_nothing(run_cli, tmp_path):
    project = agent_project(tmp_path / "run_unchanged", CACHING)
    report = run(run_cli, project)
    # Every search misses but the repeated one, which the same run had just made.
    assert stages(report) == (count(0, 5), count(1, 5), count(0, 5))
    assert invocations(project) == Counter({"run": 5, "search": 5})
    assert manifests(project)[0]["cache"]["tools"] == count(1, 5)
    # Nothing changed: the execution cache serves every case; no agent run, no tool call.
    report = run(run_cli, project)
    assert report["cache"]["execution"] == count(5, 0)
    assert invocations(project) == Counter({"run": 5, "search": 5})


@pytest.mark.slow
def test_a_new_agent_version_or_run_parameter_reruns_every_case_and_reuses_every_call(run_cli, tmp_path):
    project = agent_project(tmp_path / "run_prompt", CACHING)
    run(run_cli, project)
    report = run(run_cli, project, "--set", "system.version=2")
    assert stages(report) == (count(0, 5), count(6, 0), count(0, 5))
    code, out, err = run_cli("run", str(project), "--set", "system.agent.generator.style=shouting")
    assert code == 0, err[-3000:]
    assert "Stages: tools 6 hit/0 miss; generate 0 hit/5 miss" in out.splitlines()
    assert manifests(project)[-1]["cache"]["tools"] == count(6, 0)
    # Every case ran three times; each search once.
    assert invocations(project) == Counter({"run": 15, "search": 5})


@pytest.mark.slow
def test_a_new_index_or_new_tool_parameters_miss_every_tool_call(run_cli, tmp_path):
    project = agent_project(tmp_path / "run_index", CACHING)
    run(run_cli, project)
    for option in ("system.agent.index_version=i2", "system.agent.tools.search.limit=3"):
        report = run(run_cli, project, "--set", option)
        assert stages(report) == (count(0, 5), count(1, 5), count(0, 5)), option
    assert invocations(project) == Counter({"run": 15, "search": 15})


@pytest.mark.slow
def test_failing_cases_are_missing_with_their_errors_and_retried(run_cli, tmp_path):
    project = agent_project(tmp_path / "run_failing", FAILING)
    report = run(run_cli, project)
    overall = {row["criterion"]: row for row in report["metrics"] if row["slice"] is None}
    assert (overall["answer_correct"]["observed"], overall["answer_correct"]["missing"]) == (1, 6)
    assert report["cache"]["generate"] == count(0, 7)
    code, out, err = run_cli("query", "SELECT case_id, status, error_stage, error FROM cases ORDER BY case_id",
                             "--project", str(project), "--json")  # fmt: skip
    assert code == 0, err
    rows = {row.pop("case_id"): row for row in json.loads(out)}
    assert rows.pop("c0-ok") == {"status": "ok", "error_stage": None, "error": None}
    expected = expected_errors(project)
    assert sorted(rows) == sorted(expected)
    for case_id, row in rows.items():
        assert (row["status"], row["error_stage"]) == ("missing", "generate"), case_id
        assert row["error"].startswith(expected[case_id]), case_id

    # Nothing of a failing case was cached: the next run runs each of them again, and only them.
    report = run(run_cli, project)
    assert (report["cache"]["execution"], report["cache"]["generate"]) == (count(1, 6), count(0, 6))
    assert invocations(project)["run"] == 13


@pytest.mark.slow
def test_an_async_agent_past_the_generate_timeout_is_a_missing_case(run_cli, tmp_path):
    cases = [("alpha", "ok"), ("beta", "slow"), ("gamma", "ok"), ("delta", "ok")]
    project = agent_project(tmp_path / "run_async", cases, cls="AsyncAgent", extra="timeouts: {generate: 1}\n")
    report = run(run_cli, project)
    assert stages(report) == (count(0, 4), count(0, 3), count(0, 4))
    code, out, err = run_cli("query", "SELECT case_id, status, error FROM cases WHERE status <> 'ok'",
                             "--project", str(project), "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == [{"case_id": "c1-slow", "status": "missing", "error": "timeout after 1s"}]
