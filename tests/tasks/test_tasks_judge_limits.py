"""Judges under a rate limit: a judgment's time limit is charged while its requests are
out, never while it waits for the provider, and every request and error is counted.

Counts and order only: the limits are scaled so that the queue is longer than the
judgment's time limit, and a reply that never comes is cut off by that limit.
"""

from __future__ import annotations

import threading

import pytest
from judged_projects import answered, environment, judged_project, relevance_rows
from providers_wire import GOOD, Script, chat_json, serve

from oloproof.records import JudgmentBrief
from oloproof.report import judges_line
from oloproof.stages._batch import Batch
from oloproof.tasks._judge import judge_cases
from oloproof.tasks._summarize import judge_usage

pytestmark = pytest.mark.slow

JUDGMENTS = 200
RPM, WINDOW_S = 120, 4.0
"""120 requests per 4 s window: 200 requests queue for over 6 s, three times the
judgments' time limit of 2 s."""


def _judge(env):
    results = answered(env)
    return judge_cases.fn(env, Batch(0, tuple(results)), results)


def test_judgments_queued_past_their_time_limit_all_complete_and_are_counted(tmp_path, server):
    script = serve(server, "/v1/chat/completions", Script(chat_json(GOOD)))
    questions = [f"Question {n}: how long do refunds take?" for n in range(JUDGMENTS)]
    options = f", rpm: {RPM}, rate_window_s: {WINDOW_S}, timeout_s: 30, max_retries: 2"
    env = environment(judged_project(tmp_path / "p", server.url_for("/v1"), questions, provider=options,
                                     judge_timeout=2))  # fmt: skip
    try:
        rows = relevance_rows(_judge(env))
    finally:
        env.close()
    assert len(rows) == JUDGMENTS
    assert {row.outcome for row in rows} == {"completed"}, {row.detail.get("error") for row in rows}
    [usage] = judge_usage([JudgmentBrief.of(row) for row in rows])
    assert (usage.judgments, usage.errors, usage.retries) == (JUDGMENTS, 0, 0)
    assert usage.requests == len(script.seen) == JUDGMENTS
    assert judges_line([usage.model_dump(mode="json")]) == [
        f"Judges: {JUDGMENTS} judgments · {JUDGMENTS} requests · 0 cached · 3,000 tokens · 0 retries · 0 errors"
    ]


def test_a_reply_slower_than_the_time_limit_is_an_error_in_the_accounting(tmp_path, server):
    # The reply to one question never comes: the judgment's time limit cuts it off
    # (the provider's own timeout_s is longer), and the others are answered at once.
    never = threading.Event()

    def answer(seen):
        if any("refunds" in str(m.get("content")) for m in seen.body["messages"]):
            never.wait(60)
        return chat_json(GOOD)

    script = serve(server, "/v1/chat/completions", Script(answer))
    questions = ["How long do refunds take?", "Can I change my plan?", "Where is my invoice?"]
    env = environment(judged_project(tmp_path / "p", server.url_for("/v1"), questions,
                                     provider=", timeout_s: 30, max_retries: 2", judge_timeout=5))  # fmt: skip
    try:
        rows = relevance_rows(_judge(env))
    finally:
        never.set()
        env.close()
    [late] = [row for row in rows if row.outcome == "error"]
    assert late.case_id == "q000" and late.detail["error"] == "timeout after 5s"
    assert (late.provider, late.model, late.requests, late.retries) == ("local", "judge-model", 1, 0)
    [usage] = judge_usage([JudgmentBrief.of(row) for row in rows])
    assert (usage.judgments, usage.errors, usage.error_kinds) == (3, 1, {"timeout after 5s": 1})
    assert usage.requests == len(script.seen) == 3
    assert judges_line([usage.model_dump(mode="json")])[0].endswith("· 3 requests · 0 cached · 30 tokens · 0 retries · 1 error")
