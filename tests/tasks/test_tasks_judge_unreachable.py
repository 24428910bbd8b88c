"""A run whose judge provider goes away mid-run: the run completes, its judgments are
missing, and the report says which provider, how many and why.

The example's judges run against a local OpenAI-compatible server that answers the
first requests and is then stopped, so every later connection is refused. The
circuit breaker bounds what the run spends on it: counted in requests and retries,
never in seconds.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from providers_wire import Script, chat_json, serve
from pytest_httpserver import HTTPServer

from oloproof.providers import UNREACHABLE_AFTER

pytestmark = pytest.mark.slow

ANSWERED = 4
"""Requests the server answers before it is stopped."""
CONCURRENCY = 4
"""The example's ``max_concurrency`` for its provider."""


@pytest.fixture
def dying_server() -> Iterator[tuple[HTTPServer, Script]]:
    """A judge endpoint that answers `ANSWERED` requests, then stops."""
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    lock = threading.Lock()
    answered: list[int] = []

    def answer(seen: object) -> object:
        with lock:
            answered.append(1)
            if len(answered) == ANSWERED:
                # Stopped from another thread: a handler cannot stop its own server.
                threading.Thread(target=server.stop, daemon=True).start()
        return chat_json({"score": 4, "reason": "scripted"})

    script = serve(server, "/v1/chat/completions", Script(answer))
    yield server, script
    if server.is_running():
        server.stop()


def _config(project: Path) -> Path:
    # The two judges that reply with a score; each case makes one call of each.
    config = project / "judges_scored.yaml"
    text = (project / "judges.yaml").read_text()
    config.write_text(text.replace('  - {type: citation_support_judge, provider: local, model: "llama3.1:8b"}\n', ""))
    return config


def test_a_provider_gone_mid_run_is_one_line_of_the_report(run_cli, example_project, dying_server):
    server, script = dying_server
    at = ("--set", f"providers.local.base_url={server.url_for('/v1')}")
    code, out, err = run_cli("run", str(_config(example_project)), *at, "--json")
    assert code == 0, err  # judge errors make cases missing, never a failed run
    report = json.loads(out)
    [usage] = report["judges"]
    errors = usage["errors"]
    assert usage["calls"] == 26 and errors >= 26 - ANSWERED - CONCURRENCY

    # The manifest keeps the kinds and a message of each: the breaker's, and the
    # refusals that opened it.
    kinds, samples = usage["error_kinds"], usage["error_samples"]
    assert sum(kinds.values()) == errors
    assert set(kinds) <= {"provider unreachable", "connection refused", "connection error"}
    where = f"127.0.0.1:{server.port}/v1/chat/completions"
    unreachable = samples["provider unreachable"]
    assert unreachable == (f"provider unreachable: {UNREACHABLE_AFTER} consecutive connection failures "
                           f"(last: connection refused at http://{where})")  # fmt: skip
    assert kinds["provider unreachable"] == max(kinds.values())

    # Bounded: the threshold's refusals, the requests in flight when the breaker opened,
    # and those cut off while the server stopped. Without it: 4 retries a judgment.
    assert usage["retries"] <= UNREACHABLE_AFTER + 2 * CONCURRENCY - 1
    assert len(script.seen) <= ANSWERED + CONCURRENCY

    # The remaining judgments are missing with the breaker's reason.
    code, out, err = run_cli(
        "query", "SELECT status, outcome, reason, detail FROM judgments WHERE run_id = $1 AND outcome = 'error'",
        "--param", report["run_id"], "--project", str(example_project), "--json",
    )  # fmt: skip
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == errors and {(r["status"], r["reason"]) for r in rows} == {("missing", "judge_error")}
    messages = [json.loads(r["detail"])["error"] if isinstance(r["detail"], str) else r["detail"]["error"]
                for r in rows]  # fmt: skip
    assert sum(message == unreachable for message in messages) == kinds["provider unreachable"]

    # The report, then and later, says it in one line after the `Judges:` line.
    line = (f"judge provider 'local': {errors} judgments missing, {len(kinds)} kinds of error; "
            f"most often ({kinds['provider unreachable']}): {unreachable}") if len(kinds) > 1 else (
            f"judge provider 'local': {errors} judgments missing, {unreachable}")  # fmt: skip
    code, out, err = run_cli("show", report["run_id"], "--project", str(example_project))
    assert code == 0, err
    lines = out.splitlines()
    judges = next(i for i, text in enumerate(lines) if text.startswith("Judges: "))
    assert re.fullmatch(rf"Judges: 26 judgments · \d+ requests · 0 cached · [\d,]+ tokens · \d+ retr(y|ies) · {errors} errors",
                        lines[judges])  # fmt: skip
    assert lines[judges + 1] == line
