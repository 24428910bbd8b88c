"""A run whose cases repeat the same judged inputs: one call per distinct judgment.

The example's 13 cases, each 12 times under another id (156 cases in batches of 8,
run concurrently), judged by its three LLM judges: every judge is called once per
distinct input, and the report counts the rest as cached.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from providers_wire import Script, chat_json, serve

pytestmark = pytest.mark.slow

REPEATS = 12


def _user(seen) -> str:
    return next(m["content"] for m in seen.body["messages"] if m["role"] == "user")


def _grade(seen) -> object:
    if seen.body["response_format"]["json_schema"]["name"].startswith("citation_support"):
        cited = re.findall(r"^\[([^\]\n]+)\]\n", _user(seen).split("Citations, each", 1)[1], re.MULTILINE)
        return chat_json({"citations": [{"id": cid, "supported": True, "reason": "scripted"} for cid in cited]})
    return chat_json({"score": 4, "reason": "scripted"})


def test_repeated_inputs_make_one_call_per_judge_and_input(run_cli, example_project, server):
    script = serve(server, "/v1/chat/completions", Script(_grade))
    cases = [json.loads(line) for line in (example_project / "cases.jsonl").read_text().splitlines() if line]
    # Repeat-major order: each batch of 8 holds different inputs, and every input is in many batches.
    with (example_project / "repeated.jsonl").open("w") as out:
        for n in range(REPEATS):
            for case in cases:
                out.write(json.dumps({**case, "id": f"{case['id']}_{n}"}) + "\n")
    config = example_project / "repeated.yaml"
    text = (example_project / "judges.yaml").read_text().replace("dataset: cases.jsonl", "dataset: repeated.jsonl")
    config.write_text(f"{text.rstrip()}\nbatch_size: 8\n")

    code, out, err = run_cli("run", str(config), "--set", f"providers.local.base_url={server.url_for('/v1')}",
                             "--json")  # fmt: skip
    assert code == 0, err
    calls = Counter(seen.body["response_format"]["json_schema"]["name"] for seen in script.seen)
    assert calls == {"groundedness_judge_verdict": 13, "citation_support_judge_verdict": 13, "relevance_verdict": 13}
    [usage] = json.loads(out)["judges"]
    judged = 3 * len(cases) * REPEATS
    assert (usage["judgments"], usage["requests"], usage["cached"], usage["errors"]) == (39, 39, judged - 39, 0)
