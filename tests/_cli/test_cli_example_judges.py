"""The example's judge configuration (``examples/support_rag/judges.yaml``) against a
local OpenAI-compatible server with scripted verdicts.

The server grades each request by rule, from what the request says: a groundedness
score derived from a hash of the prompt, and a citation supported when its passage
holds the answer's first sentence. The test then checks that every reply reached
its case's row, the report's rows and ``Judges:`` line, and that a second run, and
a run with another threshold, make no call at all.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path

import pytest
from providers_wire import Script, chat_json, serve
from pytest_httpserver import HTTPServer

from oloproof.report import judges_line

pytestmark = pytest.mark.slow

PROMPT_TOKENS, COMPLETION_TOKENS = 90, 12


def _user(seen) -> str:
    """The request's prompt (a re-ask appends the reply and a correction after it)."""
    return next(m["content"] for m in seen.body["messages"] if m["role"] == "user")


def _grade(seen) -> object:
    body = seen.body
    schema = body["response_format"]["json_schema"]["name"]
    user = _user(seen)
    if schema.startswith("citation_support"):
        answer = user.split("Answer:\n", 1)[1].split("\n\nCitations", 1)[0].strip()
        cited = re.findall(r"^\[([^\]\n]+)\]\n(.*)$", user.split("Citations, each", 1)[1], re.MULTILINE)
        verdicts = [{"id": cid, "supported": answer[:20] in text, "reason": "scripted"} for cid, text in cited]
        return chat_json({"citations": verdicts}, prompt_tokens=PROMPT_TOKENS, completion_tokens=COMPLETION_TOKENS)
    score = int(hashlib.sha256(user.encode()).hexdigest(), 16) % 5 + 1
    return chat_json({"score": score, "reason": f"scripted {score}"},
                     prompt_tokens=PROMPT_TOKENS, completion_tokens=COMPLETION_TOKENS)  # fmt: skip


class Judge:
    """The scripted judge endpoint and what it answered."""

    def __init__(self, server: HTTPServer) -> None:
        self.lock = threading.Lock()
        self.replies: list[dict] = []
        self.script = serve(server, "/v1/chat/completions", Script(self._answer))
        self.url = server.url_for("/v1")

    def _answer(self, seen):
        answer = _grade(seen)
        schema = seen.body["response_format"]["json_schema"]["name"]
        with self.lock:
            self.replies.append({"schema": schema, **json.loads(answer.body["choices"][0]["message"]["content"])})
        return answer

    @property
    def calls(self) -> int:
        return len(self.script.seen)


@pytest.fixture
def judge(server) -> Judge:
    return Judge(server)


def _overall(report: dict, criterion: str) -> dict:
    return next(m for m in report["metrics"] if m["criterion"] == criterion and m["slice"] is None)


def _rows(run_cli, project: Path, run_id: str, criterion: str) -> list[dict]:
    code, out, err = run_cli(
        "query", "SELECT case_id, status, outcome, score, passed, threshold, model, input_tokens, hit "
        "FROM judgments WHERE run_id = $1 AND criterion = $2 ORDER BY case_id",
        "--param", run_id, "--param", criterion, "--project", str(project), "--json",
    )  # fmt: skip
    assert code == 0, err
    return json.loads(out)


def test_the_example_judges_score_every_case_and_a_rerun_calls_nothing(run_cli, example_project, judge):
    config = example_project / "judges.yaml"
    at = ("--set", f"providers.local.base_url={judge.url}")
    code, out, err = run_cli("run", str(config), *at, "--json")
    assert code == 0, err
    report = json.loads(out)

    # One call per case and judge (three judges); each reply is the row of its case.
    assert judge.calls == 39
    grounded = _rows(run_cli, example_project, report["run_id"], "groundedness_judge")
    assert len(grounded) == 13 and {r["outcome"] for r in grounded} == {"completed"}
    scores = sorted(reply["score"] for reply in judge.replies if reply["schema"].startswith("groundedness"))
    assert sorted(r["score"] for r in grounded) == scores
    assert all(r["passed"] == (r["score"] >= 3) and r["threshold"] == 3 for r in grounded)
    assert {(r["model"], r["input_tokens"]) for r in grounded} == {("llama3.1:8b", PROMPT_TOKENS)}
    metric = _overall(report, "groundedness_judge")
    assert (metric["successes"], metric["observed"], metric["missing"]) == (sum(s >= 3 for s in scores), 13, 0)

    cited = _overall(report, "citation_support_judge")
    supported = [v["supported"] for reply in judge.replies for v in reply.get("citations", [])]
    assert cited["observed"] == 13  # one citation a case: shares of 0 or 1, reported as a proportion
    assert cited["estimate"] == pytest.approx(sum(supported) / len(supported))

    assert report["judges"] == [{
        "provider": "local", "provider_type": "openai", "model": "llama3.1:8b", "calls": 39, "judgments": 39,
        "requests": 39, "cached": 0,
        "retries": 0, "errors": 0, "input_tokens": 39 * PROMPT_TOKENS, "output_tokens": 39 * COMPLETION_TOKENS,
        "cost_usd": None,
    }]  # fmt: skip

    assert judges_line(report["judges"]) == ["Judges: 39 judgments · 39 requests · 0 cached · 3,978 tokens · 0 retries · 0 errors"]

    # Nothing changed: every judgment is a hit, and the server hears nothing.
    code, out, err = run_cli("run", str(config), *at)
    assert code == 0, err
    assert judge.calls == 39
    assert "Cache: execution 13 hit/0 miss; judgment 104 hit/0 miss" in out
    assert "Judges: 0 judgments · 0 requests · 39 cached · 0 tokens · 0 retries · 0 errors" in out
    row = next(line for line in out.splitlines() if line.startswith("│ groundedness_judge "))
    assert f"{metric['successes']} / 13 observed · 0 missing · 0 excluded" in row


def test_a_new_threshold_rederives_verdicts_without_a_call(run_cli, example_project, judge):
    config = example_project / "judges.yaml"
    at = ("--set", f"providers.local.base_url={judge.url}")
    code, out, err = run_cli("run", str(config), *at, "--json")
    assert code == 0, err
    calls = judge.calls

    strict = example_project / "judges_strict.yaml"
    strict.write_text(config.read_text().replace('model: "llama3.1:8b"}', 'model: "llama3.1:8b", threshold: 5}', 1))
    code, out, err = run_cli("run", str(strict), *at, "--json")
    assert code == 0, err
    assert judge.calls == calls
    report = json.loads(out)
    rows = _rows(run_cli, example_project, report["run_id"], "groundedness_judge")
    assert all(r["passed"] == (r["score"] == 5) and r["threshold"] == 5 and r["hit"] for r in rows)
    assert _overall(report, "groundedness_judge")["successes"] == sum(r["score"] == 5 for r in rows)
    assert report["judges"][0]["calls"] == 0 and report["judges"][0]["cached"] == 39


def test_a_judge_error_is_a_missing_case_judged_again_by_the_next_run(run_cli, example_project, server):
    def answer(seen):
        user = _user(seen)
        grounded = seen.body["response_format"]["json_schema"]["name"].startswith("groundedness_judge")
        if grounded and "Can I get my money back?" in user:
            return chat_json({"score": 9, "reason": "off the scale"})  # fails the schema twice: an error
        return _grade(seen)

    script = serve(server, "/v1/chat/completions", Script(answer))
    config = example_project / "judges.yaml"
    at = ("--set", f"providers.local.base_url={server.url_for('/v1')}")
    code, out, err = run_cli("run", str(config), *at, "--json")
    assert code == 0, err
    report = json.loads(out)
    metric = _overall(report, "groundedness_judge")
    assert (metric["observed"], metric["missing"], metric["judge_errors"]) == (12, 1, 1)
    (row,) = [r for r in _rows(run_cli, example_project, report["run_id"], "groundedness_judge")
              if r["outcome"] == "error"]  # fmt: skip
    assert row["case_id"] == "money_back" and row["status"] == "missing" and row["score"] is None
    assert report["judges"][0]["errors"] == 1
    first = len(script.seen)

    code, out, err = run_cli("run", str(config), *at)
    assert code == 0, err
    # Only the errored judgment is asked again (with its one re-ask); it fails again.
    assert len(script.seen) - first == 2
    row = next(line for line in out.splitlines() if line.startswith("│ groundedness_judge "))
    assert "12 observed · 1 missing (1 judge error) · 0 excluded" in row
    assert "Judges: 1 judgment · 2 requests · 38 cached" in out
