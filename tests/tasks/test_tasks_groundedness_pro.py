"""A run with ``groundedness_pro`` on a named content-safety provider: its calls go
through the provider layer, and the run's accounting counts what the server saw."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from providers_wire import Answer, Script, serve

pytestmark = pytest.mark.slow

PATH = "/contentsafety/text:detectGroundedness"
KEY = "cs-key-PLANTED-0b7e"


def _config(project: Path, endpoint: str) -> Path:
    config = project / "content_safety.yaml"
    text = (project / "judges.yaml").read_text()
    head = text[: text.index("providers:")]
    tail = text[text.index("slices:"):]
    config.write_text(
        f"{head}providers:\n  safety:\n    type: content_safety\n    endpoint: {endpoint}\n"
        "    api_key_env: OLOPROOF_TEST_CS_KEY\n    max_concurrency: 2\n\n"
        f"evaluators:\n  - {{type: groundedness_pro, provider: safety}}\n\n{tail}"
    )
    return config


def test_a_run_accounts_every_content_safety_request(run_cli, example_project, server, monkeypatch):
    monkeypatch.setenv("OLOPROOF_TEST_CS_KEY", KEY)
    lock = threading.Lock()
    answered: list[int] = []

    def answer(seen: object) -> Answer:
        with lock:
            answered.append(1)
            first = len(answered) == 1
        if first:  # one rate-limited reply: retried, and counted as a retry
            return Answer(status=429, body={"error": {"code": "TooManyRequests", "message": "later"}},
                          headers={"retry-after-ms": "1"})  # fmt: skip
        return Answer(body={"ungroundedDetected": False, "ungroundedPercentage": 0})

    script = serve(server, PATH, Script(answer))
    config = _config(example_project, server.url_for(""))
    code, out, err = run_cli("run", str(config), "--json")
    assert code == 0, err
    [usage] = json.loads(out)["judges"]
    assert (usage["provider"], usage["provider_type"], usage["errors"]) == ("safety", "content_safety", 0)
    assert usage["calls"] + usage["retries"] == len(script.seen) and usage["retries"] == 1
    assert all(seen.headers["ocp-apim-subscription-key"] == KEY for seen in script.seen)
    assert KEY not in out + err

    sent = len(script.seen)
    code, out, err = run_cli("run", str(config), "--json")
    assert code == 0, err
    [usage] = json.loads(out)["judges"]
    assert usage["calls"] == 0 and usage["cached"] > 0 and len(script.seen) == sent
