"""``examples/support_agent``: a live agent's runs and tool calls cached as stages, its
diagnosis, and its judges in agent-response mode against a local OpenAI-protocol server.

One copy of the example serves the module's story (flows are slow): a first run, the
same run again, a prompt change, the tool cache's own counts, and the gold-context
diagnosis of the first run's failures.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
from inprocess import invoke_ok as _ok
from projects import copy_project
from providers_wire import Script, chat_json, serve

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_agent"
RUN_ID = r"run_[0-9A-Z]{26}"


def _stages(output: str) -> tuple[str, str]:
    cache = next(line for line in output.splitlines() if line.startswith("Cache:"))
    stages = next(line for line in output.splitlines() if line.startswith("Stages:"))
    return cache, stages


@pytest.fixture(scope="module")
def story(prefect_api, tmp_path_factory):
    project = copy_project(EXAMPLE, tmp_path_factory.mktemp("agent-example") / "support_agent", batched=False)
    where = ("--project", str(project))
    s: dict = {"project": project, "where": where}
    s["first"] = _ok("run", str(project))
    s["run_id"] = re.match(f"Run ({RUN_ID})", s["first"]).group(1)
    s["again"] = _ok("run", str(project))
    s["p2"] = _ok("run", str(project), "--set", "system.agent.generator.prompt_version=p2")
    s["index"] = _ok("run", str(project), "--set", "system.agent.index_version=kb-2026-10-01")
    s["cases"] = json.loads(_ok("inspect", s["run_id"], *where, "--json"))["cases"]
    s["inspect"] = _ok("inspect", s["run_id"], *where)
    s["diagnosis"] = _ok("diagnose", s["run_id"], "--intervention", "gold-context", "--criterion", "answer_correct",
                         *where)  # fmt: skip
    s["diagnosis_id"] = re.search(r"^Diagnosis (sha256:[0-9a-f]{64})$", s["diagnosis"], re.MULTILINE).group(1)
    s["labels"] = _ok("inspect", s["diagnosis_id"], *where)
    return s


def test_a_second_run_makes_no_tool_call_and_runs_no_agent(story):
    assert _stages(story["first"]) == ("Cache: execution 0 hit/13 miss; judgment 0 hit/76 miss",
                                       "Stages: tools 0 hit/12 miss; generate 0 hit/13 miss")  # fmt: skip
    assert _stages(story["again"]) == ("Cache: execution 13 hit/0 miss; judgment 76 hit/0 miss",
                                       "Stages: none ran: all 13 cases were served from the execution cache")


def test_a_prompt_change_reruns_every_agent_and_reuses_every_unchanged_tool_call(story):
    assert _stages(story["p2"])[1] == "Stages: tools 12 hit/0 miss; generate 0 hit/13 miss"
    # p2 answers with the whole passage: seat_count's answer is in its second sentence.
    assert "│ answer_correct       │ 69.2%" in story["p2"]


def test_a_new_index_misses_every_tool_call(story):
    assert _stages(story["index"])[1] == "Stages: tools 0 hit/12 miss; generate 0 hit/13 miss"


def test_the_transcript_is_recorded_and_inspect_shows_the_tool_calls(story):
    by_id = {case["case_id"]: case for case in story["cases"]}
    items = by_id["refund_annual"]["output_items"]
    assert [item["role"] for item in items] == ["user", "assistant", "tool", "assistant"]
    call = items[1]["content"][0]
    assert (call["type"], call["name"], call["arguments"]) == (
        "tool_call", "search_kb", {"query": "How long do refunds take for annual plans?"})
    assert next(p["doc_id"] for p in items[2]["content"][0]["tool_result"]) == "kb-01"
    assert items[3]["content"][0]["text"] == by_id["refund_annual"]["output"]["answer"]
    # The context tool's results are the case's retrieval and context.
    assert by_id["refund_annual"]["best_relevant_position"] == 1
    lines = {line.split(":", 1)[0]: line for line in story["inspect"].splitlines()[1:]}
    assert "tools none called" in lines["sso_setup"]
    assert 'tools search_kb({"query":"Can I get my money back?"}) → kb-20' in lines["money_back"]


def test_diagnosis_labels_the_planted_failures_beside_a_control(story):
    lines = story["diagnosis"].splitlines()
    assert lines[:10] == [
        "Selected: 5 failed cases with gold context (observed; no population claim)",
        "Control: 0 of 5 passed when re-executed without the intervention",
        "Recovered under gold context: 4 of 5",
        "RETRIEVAL_MISS: 1 of 5, recovered; no relevant evidence was retrieved",
        "CONTEXT_DISTRACTION: 2 of 5, recovered; relevant evidence was in the context beside other passages",
        "GENERATION_FAILURE: 1 of 5, still failed with the gold context",
        ("TOOL_NOT_CALLED: 1 of 5, the agent called no context tool; 1 of 1 recovered under a forced call with the "
        "gold context"),
        "Implicated: context composition, in 2 of the 4 recovered failures.",
        # An agent's experiments are its tools', never a top_k it does not have.
        ("Candidate experiment: a reranker inside the context tool. This is a hypothesis to test, not an established "
        "cause."),
        "Candidate experiment: fewer results per search. This is a hypothesis to test, not an established cause.",
    ]
    assert re.search(f"^Child runs: gold context {RUN_ID}, control {RUN_ID}$", story["diagnosis"], re.MULTILINE)
    labels = {line.split(":", 1)[0]: line.split(", ")[0].split(": ")[1] for line in story["labels"].splitlines()}
    assert labels == {"money_back": "RETRIEVAL_MISS", "refund_review": "CONTEXT_DISTRACTION",
                      "security_review": "CONTEXT_DISTRACTION", "seat_count": "GENERATION_FAILURE",
                      "sso_setup": "TOOL_NOT_CALLED"}  # fmt: skip
    for word in ("cause of", "caused", "because", "root cause"):
        assert word not in story["diagnosis"].lower()


def test_an_agent_run_refuses_the_replay_interventions(story, run_cli):
    code, out, err = run_cli("diagnose", story["run_id"], "--intervention", "top-k", "--top-k", "4",
                             "--criterion", "answer_correct", *story["where"])  # fmt: skip
    assert (code, out) == (2, "")
    assert err == (f"oloproof: error: an agent has no top_k or ranking of its own to replay: diagnose agent run "
                   f"{story['run_id']} with --intervention gold-context\n")  # fmt: skip


class Judge:
    """A scripted OpenAI-protocol judge that records every prompt it is sent."""

    def __init__(self, server) -> None:
        self.lock = threading.Lock()
        self.prompts: list[tuple[str, str]] = []
        self.script = serve(server, "/v1/chat/completions", Script(self._answer))
        self.url = server.url_for("/v1")

    def _answer(self, seen):
        user = next(m["content"] for m in seen.body["messages"] if m["role"] == "user")
        with self.lock:
            self.prompts.append((seen.body["response_format"]["json_schema"]["name"], user))
        return chat_json({"score": 4, "reason": "scripted"}, prompt_tokens=50, completion_tokens=5)


def test_the_judges_read_the_agents_transcript_in_agent_response_mode(run_cli, server, tmp_path):
    project = copy_project(EXAMPLE, tmp_path / "support_agent")
    judge = Judge(server)
    code, out, err = run_cli("run", str(project / "judges.yaml"), "--set", f"providers.local.base_url={judge.url}",
                             "--json")  # fmt: skip
    assert code == 0, err
    metrics = {m["criterion"]: m for m in json.loads(out)["metrics"] if m["slice"] is None}
    # sso_setup called no context tool: groundedness and retrieval exclude it, relevance judges it.
    for criterion, observed, excluded in (("groundedness", 12, 1), ("retrieval", 12, 1), ("relevance", 13, 0)):
        assert (metrics[criterion]["observed"], metrics[criterion]["excluded"]) == (observed, excluded), criterion
    grounded = [user for schema, user in judge.prompts if schema.startswith("groundedness")]
    assert len(grounded) == 12 and len(judge.prompts) == 37
    refund = next(user for user in grounded if "How long do refunds take for annual plans?" in user)
    assert "[1] kb-01\nRefunds for annual plans are issued within 14 days" in refund
    assert "Refunds for annual plans are issued within 14 days of an approved request." in refund
    assert "tool_result" not in refund and '"doc_id"' not in refund
    code, out, err = run_cli("query", "SELECT reason FROM judgments WHERE criterion = 'groundedness' AND "
                             "case_id = 'sso_setup'", "--project", str(project), "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == [{"reason": "not_applicable:no_context_tool_results"}]
