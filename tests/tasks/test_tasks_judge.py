"""The judge stage: rows per case and criterion, the calls' accounting, and single-flight."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

import pytest
from judged_projects import answered, environment, judged_project, relevance_rows
from providers_wire import GOOD, Script, chat, chat_json, serve

from oloproof.evaluators import Verdict
from oloproof.records import JudgmentBrief, JudgmentRow
from oloproof.stages._batch import Batch
from oloproof.tasks._cached import CaseFailure
from oloproof.tasks._flights import Flights, Shared
from oloproof.tasks._judge import _identities, _Tally, _verdict_record, judge_cases, settle_judgments
from oloproof.tasks._results import CaseResult
from oloproof.tasks._summarize import judge_usage

QUESTIONS = ["How long do refunds take?", "Can I change my plan?", "Where is my invoice?"]


def _judge(env, case_ids=None):
    results = answered(env, case_ids)
    return judge_cases.fn(env, Batch(0, tuple(results)), results)


@pytest.fixture
def project(tmp_path, server):
    serve(server, "/v1/chat/completions", script := Script(chat_json(GOOD)))
    folder = judged_project(tmp_path / "p", server.url_for("/v1"), QUESTIONS)
    return folder, script


def test_every_case_has_a_row_of_every_criterion_with_its_call(project):
    folder, script = project
    env = environment(folder)
    try:
        judged = _judge(env)
    finally:
        env.close()
    assert sorted(judged) == ["q000", "q001", "q002"]
    assert all(sorted(row.criterion for row in rows) == ["answer_correct", "relevance"] for rows in judged.values())
    rows = relevance_rows(judged)
    assert len(script.seen) == 3
    assert {(row.outcome, row.score, row.provider, row.model, row.requests, row.hit) for row in rows} == {
        ("completed", 4.0, "local", "judge-model", 1, False)
    }
    correct = [row for rows_ in judged.values() for row in rows_ if row.criterion == "answer_correct"]
    assert {(row.outcome, row.provider, row.requests) for row in correct} == {("completed", None, None)}


def test_a_second_run_hits_the_cache_and_sends_nothing(project):
    folder, script = project
    first = environment(folder)
    try:
        _judge(first)
    finally:
        first.close()
    second = environment(folder, "run_02JUDGE")
    try:
        rows = relevance_rows(_judge(second))
    finally:
        second.close()
    assert len(script.seen) == 3
    assert {(row.hit, row.requests) for row in rows} == {(True, None)}
    [usage] = judge_usage([JudgmentBrief.of(row) for row in rows])
    assert (usage.judgments, usage.requests, usage.cached) == (0, 0, 3)


def test_a_cached_record_keeps_the_bytes_of_earlier_versions(project):
    # The requests a call sent are this run's accounting, never part of the cached verdict.
    folder, _ = project
    env = environment(folder)
    try:
        [row] = relevance_rows(_judge(env, ["q000"]))
        record = env.store.get_records("judge", [row.judgment_key])[row.judgment_key]
    finally:
        env.close()
    assert "requests" not in record["call"]
    assert set(record["call"]) == {
        "provider", "provider_type", "model", "prompt_hash", "mode", "input_tokens", "output_tokens",
        "latency_ms", "retries", "finish_reason", "cost_usd", "raw_reply",
    }  # fmt: skip


def test_a_re_ask_is_one_judgment_of_two_requests(tmp_path, server):
    script = serve(server, "/v1/chat/completions", Script(chat("not json"), chat_json(GOOD)))
    env = environment(judged_project(tmp_path / "p", server.url_for("/v1"), QUESTIONS[:1]))
    try:
        [row] = relevance_rows(_judge(env))
    finally:
        env.close()
    assert (row.outcome, row.requests, row.retries) == ("completed", 2, 0)
    [usage] = judge_usage([JudgmentBrief.of(row)])
    assert (usage.judgments, usage.requests, usage.calls) == (1, len(script.seen), 1)


def test_a_judgment_past_the_stage_timeout_is_an_error_counted_under_its_provider(project):
    # Cut off by the executor (not in the pool): its row still names the judge's provider.
    folder, script = project
    env = environment(folder)
    judge = next(e for e in env.evaluators if e.is_llm_judge)

    async def hang(fields, ctx):
        await asyncio.Event().wait()

    judge.judge = hang  # type: ignore[method-assign]
    env.executor.timeouts["judge"] = 0.05
    try:
        rows = relevance_rows(_judge(env))
    finally:
        env.close()
    assert not script.seen
    assert {(row.outcome, row.provider, row.provider_type, row.model) for row in rows} == {
        ("error", "local", "openai", "judge-model")
    }
    assert {row.detail["error"] for row in rows} == {"timeout after 0.05s"}
    [usage] = judge_usage([JudgmentBrief.of(row) for row in rows])
    assert (usage.judgments, usage.errors, usage.requests) == (3, 3, 0)
    assert usage.error_kinds == {"timeout after 0.05s": 3}


@pytest.mark.parametrize("runs", [1, 2], ids=["batches_of_one_run", "batches_of_two_runs"])
def test_equal_judgments_in_two_batches_at_once_make_one_call(tmp_path, server, runs):
    # Batch A's call is held at the server until batch B has claimed the same keys;
    # with two runs, each batch is another run's (its own loop), sharing the flights.
    claimed = threading.Event()
    release = threading.Event()
    arrived = threading.Event()

    def held(seen):
        arrived.set()
        release.wait(30)
        return chat_json(GOOD)

    script = serve(server, "/v1/chat/completions", Script(held))

    class Watched(Flights):
        claims = 0

        def claim(self, keys):
            claims = super().claim(keys)
            Watched.claims += 1
            if Watched.claims == 2:
                claimed.set()
            return claims

    flights = Watched()
    # The same questions twice: q000/q003 and so on judge equal inputs.
    folder = judged_project(tmp_path / "p", server.url_for("/v1"), QUESTIONS * 2)
    envs = [environment(folder, f"run_0{n}JUDGE", flights=flights) for n in range(runs)]
    judged: dict[str, dict] = {}

    def batch(name, ids):
        judged[name] = _judge(envs[-1] if name == "b" else envs[0], ids)

    first = threading.Thread(target=batch, args=("a", ["q000", "q001", "q002"]))
    second = threading.Thread(target=batch, args=("b", ["q003", "q004", "q005"]))
    try:
        first.start()
        assert arrived.wait(30)
        second.start()
        assert claimed.wait(30)
        release.set()
        first.join(30)
        second.join(30)
    finally:
        release.set()
        for env in envs:
            env.close()
    assert len(script.seen) == 3
    led, shared = relevance_rows(judged["a"]), relevance_rows(judged["b"])
    assert {(row.hit, row.requests) for row in led} == {(False, 1)}
    assert {(row.hit, row.requests) for row in shared} == {(True, None)}
    assert len(flights) == 0  # nothing outlives the batches
    briefs = [JudgmentBrief.of(row) for row in settle_judgments(led + shared, envs[0].run_id)]
    [usage] = judge_usage(briefs)
    assert (usage.judgments, usage.requests, usage.cached) == (3, len(script.seen), 3)


def test_a_verdict_record_leaves_the_requests_to_the_first_row_of_its_key():
    evaluator = type("E", (), {"type_name": "judge"})()
    tally = _Tally()
    verdict = Verdict(score=4.0, reason="ok", call={"provider": "local", "retries": 1, "requests": 3})
    record = _verdict_record(evaluator, tally, "k1", verdict)  # type: ignore[arg-type]
    assert record.call == {"provider": "local", "retries": 1}
    assert verdict.call == {"provider": "local", "retries": 1, "requests": 3}  # the verdict itself is untouched
    _verdict_record(evaluator, tally, "k1", verdict)  # type: ignore[arg-type]  # an equal case of the batch
    assert (tally.take("k1"), tally.take("k1"), tally.take("k2")) == (3, 0, None)

    _verdict_record(evaluator, tally, "k3", Shared(verdict))  # type: ignore[arg-type]
    assert "k3" in tally.shared and tally.take("k3") == 0

    failed = Verdict.error("timeout after 2s", call={"provider": "local", "requests": 2})
    with pytest.raises(CaseFailure) as raised:
        _verdict_record(evaluator, tally, "k4", failed)  # type: ignore[arg-type]
    assert raised.value.record is not None and "requests" not in raised.value.record.call
    assert tally.take("k4") == 2


def test_a_batch_s_identities_name_each_evaluator_s_spec(project):
    folder, _ = project
    env = environment(folder)
    try:
        identities = _identities({"env": env, "results": answered(env)})
    finally:
        env.close()
    judge = next(e for e in env.evaluators if e.is_llm_judge)
    relevance = [key for slot, key in identities if slot.endswith("\x1frelevance")]
    assert len(relevance) == 3 and all(key.endswith(f":{judge.spec_hash}") for key in relevance)


def test_a_batch_beside_other_missing_cases_is_another_batch(project):
    # A batch's result holds its missing cases' rows too: replaying it for a batch that
    # judges the same cases beside another missing case would report the wrong cases.
    folder, _ = project
    env = environment(folder)
    try:
        results = answered(env)
        first, second, third = list(results)
        missing = CaseResult(case_id=third, status="missing", execution_key=f"x-{third}", error_stage="generate",
                             error="boom")  # fmt: skip
        with_third = _identities({"env": env, "results": {**results, third: missing}})
        without_third = _identities({"env": env, "results": {first: results[first], second: results[second]}})
        other_missing = _identities({"env": env, "results": {**results, first: replace(missing, case_id=first)}})
    finally:
        env.close()
    judged = {slot for slot, key in with_third if not key.startswith("missing:")}
    assert judged == {slot for slot, _ in without_third}  # the same cases are judged ...
    assert sorted(with_third) != sorted(without_third)  # ... yet the batches differ
    assert sorted(with_third) != sorted(other_missing)
    assert all(key.startswith("missing:generate_error:") for slot, key in with_third if slot.startswith(third))


def test_a_row_replayed_from_an_earlier_run_is_this_run_s_hit_with_no_requests():
    from oloproof.records import JudgmentRow

    earlier = JudgmentRow(run_id="run_earlier", case_id="c1", criterion="relevance", evaluator="relevance",
                          spec_hash="s", status="observed", outcome="completed", detail={}, judgment_key="k1",
                          hit=False, provider="local", model="judge-model", requests=3)  # fmt: skip
    unjudged = earlier.model_copy(update={"judgment_key": None, "requests": None})
    mine = earlier.model_copy(update={"run_id": "run_now"})
    replayed, not_judged, own = settle_judgments([earlier, unjudged, mine], "run_now")
    assert (replayed.run_id, replayed.hit, replayed.requests) == ("run_now", True, None)
    assert (not_judged.run_id, not_judged.hit) == ("run_now", False)
    assert own is mine  # this run's own row keeps the requests it sent


def test_judge_repeats_call_the_judge_again_and_each_row_names_its_repeats(project):
    folder, script = project
    config = folder / "oloproof.yaml"
    config.write_text(config.read_text() + "judge_repeats: 3\n")
    env = environment(folder)
    try:
        results = {case_id: replace(result, repeat=1) for case_id, result in answered(env).items()}
        judged = judge_cases.fn(env, Batch(0, tuple(results), repeat=1), results)
    finally:
        env.close()
    assert len(script.seen) == 9  # three calls of the judge per output; the deterministic one once
    rows = relevance_rows(judged)
    assert sorted((row.case_id, row.repeat, row.judge_repeat) for row in rows) == [
        (case_id, 1, n) for case_id in ("q000", "q001", "q002") for n in range(3)]
    assert len({row.judgment_key for row in rows}) == 9  # each call cached on its own
    correct = [row for rows_ in judged.values() for row in rows_ if row.criterion == "answer_correct"]
    assert sorted((row.repeat, row.judge_repeat) for row in correct) == [(1, 0)] * 3


def test_every_row_a_batch_makes_is_what_validating_it_makes(project):
    # Rows are built from values validated where they were made: each must equal
    # the row validation makes of the same columns, value types included.
    folder, _script = project
    env = environment(folder)
    try:
        results = answered(env)
        failed = next(iter(results))
        results[failed] = replace(results[failed], status="missing", error_stage="generate", error="boom")
        judged = judge_cases.fn(env, Batch(0, tuple(results)), results)
    finally:
        env.close()
    rows = [row for rows_ in judged.values() for row in rows_]
    assert {row.status for row in rows} == {"observed", "missing"}
    for row in rows:
        validated = JudgmentRow.model_validate(row.model_dump())
        assert row == validated
        assert {k: type(v) for k, v in dict(row).items()} == {k: type(v) for k, v in dict(validated).items()}


def test_a_misspelt_column_of_a_judgment_row_is_an_error():
    from types import SimpleNamespace

    from oloproof.tasks._judge import _row

    evaluator = SimpleNamespace(type_name="fake", spec_hash="0" * 16)
    with pytest.raises(TypeError, match="valeu"):
        _row(SimpleNamespace(run_id="r"), evaluator, "q1", "c", status="observed", outcome="completed", valeu=1.0)
