"""Recorded agent rows, the catalogue's way: ``builtin.groundedness`` with
``data_mapping: {query: "{{item.query}}", response: "{{item.response}}"}`` and no
context mapping reads each row's ``response`` transcript in agent-response mode,
through ``oloproof run`` against a local OpenAI-compatible server.

The judged response is the final assistant text and the context the context tools'
results (``file_search`` always, ``search_kb`` named under ``context_tools:``),
numbered with their document ids; a transcript with no context tool result is
excluded and counted. A malformed transcript is one error line naming the file, the
line and the path inside it, and nothing is written.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from providers_wire import Script, chat_json, serve
from transcripts.conversations import ANSWER, FORMATS, QUESTION, SEARCH_FORMATS

pytestmark = pytest.mark.slow

SHIPPING_Q = "Do you ship abroad?"
SHIPPING_A = "We ship to 30 countries, but not to islands."
SHIPPING = [  # the Responses API's own file search: structured results, no tool output text
    {"role": "user", "content": [{"type": "input_text", "text": SHIPPING_Q}]},
    {"type": "file_search_call", "id": "fs_9", "status": "completed", "queries": ["shipping"], "results": [
        {"file_id": "file-7", "filename": "shipping.md", "score": 0.8, "text": "We ship to 30 countries."}]},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": SHIPPING_A}]},
]  # fmt: skip

ORDER_ONLY = [  # a tool that is not a context tool: nothing to judge groundedness against
    {"role": "user", "content": "Where is order 7?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "order_status", "arguments": '{"order": 7}'}}]},
    {"role": "tool", "tool_call_id": "c2", "content": '{"status": "shipped"}'},
    {"role": "assistant", "content": "Order 7 has shipped."},
]  # fmt: skip

ROWS = [
    # One conversation in two formats: the vendor's agent messages and Chat Completions.
    {"id": "fs-chat", "query": [{"role": "user", "content": QUESTION}], "response": SEARCH_FORMATS["chat"]},
    {"id": "fs-vendor", "query": QUESTION, "response": SEARCH_FORMATS["vendor"]},
    {"id": "fs-responses", "query": SHIPPING_Q, "response": SHIPPING},
    # search_kb is context (named under context_tools); order_status is not.
    {"id": "kb-anthropic", "query": QUESTION, "response": FORMATS["anthropic"]},
    {"id": "no-context", "query": "Where is order 7?", "response": ORDER_ONLY},
]  # fmt: skip

CRITERIA = [
    {"type": "azure_ai_evaluator", "name": "groundedness", "evaluator_name": "builtin.groundedness",
     "initialization_parameters": {"deployment_name": "gpt-4o"},
     "data_mapping": {"query": "{{item.query}}", "response": "{{item.response}}"}},
]  # fmt: skip
"""The catalogue's groundedness criterion in agent-response mode: no ``context`` mapping."""

FILE_SEARCH_CONTEXT = "[1] refunds.md\nRefunds take 5 days.\n\n[2] file-2\nCards are refunded."
KB_CONTEXT = "[1] kb-3\nRefunds take 5 days.\n\n[2] kb-9\nRefunds go to the original card."
SHIPPING_CONTEXT = "[1] shipping.md\nWe ship to 30 countries."


def _user(seen) -> str:
    return next(m["content"] for m in seen.body["messages"] if m["role"] == "user")


def _grade(seen):
    answer = _user(seen).split("Answer:\n", 1)[1].strip()
    score = 2 if answer == SHIPPING_A else 5  # the islands are in no passage
    return chat_json({"score": score, "reason": f"scripted {score}"})


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows),
                    encoding="utf-8")  # fmt: skip
    return path


@pytest.fixture
def folder(tmp_path, monkeypatch, server):
    script = serve(server, "/v1/chat/completions", Script(_grade))
    (tmp_path / "oloproof.yaml").write_text(
        "providers:\n"
        f"  local: {{type: openai, base_url: {json.dumps(server.url_for('/v1'))}, deployments: [gpt-4o]}}\n"
        "context_tools: [search_kb]\n"
        "dataset: rows.jsonl\n"
        "testing_criteria: testing_criteria.json\n",
        encoding="utf-8",
    )
    (tmp_path / "testing_criteria.json").write_text(json.dumps(CRITERIA, indent=4), encoding="utf-8")
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "ANTHROPIC_API_KEY", "OLOPROOF_RESULTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path, script


def test_groundedness_over_recorded_agent_rows_prints_the_catalogue_shape(run_cli, folder):
    tmp_path, script = folder
    _write(tmp_path / "rows.jsonl", ROWS)
    code, out, err = run_cli("run", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["case_count"] == 5
    assert report["system"]["kind"] == "recorded"

    # What the judge read: the numbered passages and the final assistant text, never a tool's raw JSON.
    prompts = [_user(seen) for seen in script.seen]
    assert {seen.body["model"] for seen in script.seen} == {"gpt-4o"}
    expected = {
        f"Question:\n{QUESTION}\n\nPassages:\n{FILE_SEARCH_CONTEXT}\n\nAnswer:\n{ANSWER}",
        f"Question:\n{QUESTION}\n\nPassages:\n{KB_CONTEXT}\n\nAnswer:\n{ANSWER}",
        f"Question:\n{SHIPPING_Q}\n\nPassages:\n{SHIPPING_CONTEXT}\n\nAnswer:\n{SHIPPING_A}",
    }  # fmt: skip
    assert set(prompts) == expected, prompts
    for prompt in prompts:
        for raw in ('{"', "[{", '"doc_id"', '"file_id"', '"status"', 'shipped"', "Let me look."):
            assert raw not in prompt, (raw, prompt)
    # fs-chat and fs-vendor are one conversation in two formats: byte-identical prompts, so one judgment
    # serves both and the server hears three requests for four judged rows.
    assert len(prompts) == 3, prompts
    assert (report["judges"][0]["requests"], report["judges"][0]["cached"]) == (3, 1), report["judges"]

    overall = next(m for m in report["metrics"] if m["criterion"] == "groundedness" and m["slice"] is None)
    assert (overall["successes"], overall["observed"], overall["excluded"]) == (3, 4, 1), overall

    code, out, err = run_cli("results", report["run_id"])
    assert code == 0, err
    lines = {line["id"]: line["results"] for line in map(json.loads, out.splitlines())}
    assert sorted(lines) == sorted(row["id"] for row in ROWS)  # the excluded row is listed, not dropped
    grounded = {case: results[0] for case, results in lines.items()}
    assert all(len(results) == 1 for results in lines.values())
    assert grounded["fs-vendor"] == {
        "type": "azure_ai_evaluator", "name": "groundedness", "metric": "groundedness", "score": 5.0,
        "label": "pass", "reason": "scripted 5", "threshold": 3.0, "passed": True, "status": "observed",
    }  # fmt: skip
    assert grounded["fs-chat"] == grounded["fs-vendor"] == grounded["kb-anthropic"]
    assert grounded["fs-responses"] == {
        "type": "azure_ai_evaluator", "name": "groundedness", "metric": "groundedness", "score": 2.0,
        "label": "fail", "reason": "scripted 2", "threshold": 3.0, "passed": False, "status": "observed",
    }  # fmt: skip
    assert grounded["no-context"]["status"] == "excluded"
    assert grounded["no-context"]["reason"] == "not_applicable:no_context_tool_results"
    assert grounded["no-context"]["score"] is None and grounded["no-context"]["passed"] is None

    # Nothing changed: a second run asks the judge nothing.
    code, out, err = run_cli("run")
    assert code == 0, err
    assert len(script.seen) == 3
    row = next(line for line in out.splitlines() if line.startswith("│ groundedness "))
    assert "3 / 4 observed · 0 missing · 1 excluded" in row, out


def test_a_malformed_transcript_names_the_file_line_and_path_inside_it(run_cli, folder):
    tmp_path, script = folder
    broken = copy.deepcopy(FORMATS["chat"])
    broken[1]["tool_calls"][0]["function"]["arguments"] = "{not json"
    rows = _write(tmp_path / "rows.jsonl", [ROWS[1], ROWS[3], {"id": "bad", "query": QUESTION, "response": broken}])
    code, out, err = run_cli("run")
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    line = err.removeprefix("oloproof: error: ").rstrip("\n")
    assert line.startswith(
        f"{rows}:3: field 'response[1].tool_calls[0].function.arguments': expected JSON text "
        "of an object, could not parse it"
    ), line
    assert not (tmp_path / ".oloproof").exists()
    assert script.seen == []
