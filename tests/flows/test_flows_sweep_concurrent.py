"""Settings run at once: one limiter over all of them, and equal calls made once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from projects import copy_project

from oloproof.flows import sweep
from oloproof.store import ResultsStore, run_manifest, run_table

PARAMS = Path(__file__).resolve().parents[1] / "_cli" / "params_rag"

# Each prompt version's answer to the first case waits until the other two versions'
# answers to it are in flight too: only settings running at once get past the barrier
# (a setting run after another would find it broken, and its first case missing).
WATCHED = '''

import threading as _threading

_LOG = Path(__file__).with_name("calls.log")
_LOCK = _threading.Lock()
_IN_FLIGHT = [0]
_FIRST = _threading.Barrier(3, timeout=120)


def _watched(name, method):
    def call(self, *args):
        with _LOCK:
            _IN_FLIGHT[0] += 1
            with _LOG.open("a", encoding="utf-8") as log:
                log.write(f"{name} {_IN_FLIGHT[0]}\\n")
        try:
            if name == "generate" and args[0]["question"] == FIRST_QUESTION:
                _FIRST.wait()
            return method(self, *args)
        finally:
            with _LOCK:
                _IN_FLIGHT[0] -= 1

    return call


ParamsRag.retrieve = _watched("retrieve", ParamsRag.retrieve)
ParamsRag.generate = _watched("generate", ParamsRag.generate)
'''


@pytest.mark.slow
def test_settings_run_at_once_within_max_concurrency_and_share_equal_calls(prefect_api, tmp_path):
    project = copy_project(PARAMS, tmp_path / "params_rag")
    first = json.loads((project / "cases.jsonl").read_text(encoding="utf-8").splitlines()[0])["input"]["question"]
    app = project / "params_app.py"
    app.write_text(app.read_text(encoding="utf-8") + f"\nFIRST_QUESTION = {first!r}\n" + WATCHED, encoding="utf-8")
    cases = len((project / "cases.jsonl").read_text(encoding="utf-8").splitlines())

    result = sweep(project=str(project), grids=["system.rag.generator.prompt_version=p2,p3"],
                   objective="answer_correct", parallel=3)  # fmt: skip

    calls = [line.split() for line in (project / "calls.log").read_text(encoding="utf-8").splitlines()]
    # One retrieval identity a case for all three settings: retrieved once, shared or replayed.
    assert sum(name == "retrieve" for name, _ in calls) == cases
    assert sum(name == "generate" for name, _ in calls) == 3 * cases  # three prompts, each its own answers
    in_flight = max(int(count) for _, count in calls)
    assert 3 <= in_flight <= 4  # the barrier needed three at once; max_concurrency: 4 held over all settings
    store = ResultsStore(str(project / ".oloproof" / "results"))
    runs = [entry["run_id"] for entry in result["settings"]]
    assert len(set(runs)) == 3
    for entry in result["settings"]:
        manifest = store.read_json(run_manifest(entry["run_id"]))
        assert manifest["sweep"]["setting"] == entry["label"]  # each setting's run ran its own settings
        rows = store.read_table(run_table(entry["run_id"], "cases"))
        assert [row["error"] for row in rows] == [None] * cases  # the first case got past the barrier
