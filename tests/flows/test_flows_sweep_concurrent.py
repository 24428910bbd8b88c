"""Settings run at once: one limiter over all of them, equal calls made once, equal batches recorded once."""

from __future__ import annotations

import json
import threading
from collections import Counter
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


@pytest.mark.slow
def test_settings_computing_one_batch_at_once_record_it_once_and_never_read_it_half_written(
    prefect_api, tmp_path, monkeypatch
):
    # Prefect writes a local record in place. Each write of a batch the settings share
    # pauses halfway until some read of that record comes (or a few seconds pass):
    # a setting that looked the batch up while another was recording it would be seen.
    from prefect.filesystems import LocalFileSystem

    shared = ("oloproof-retrieve-", "oloproof-assemble-")
    writes: Counter[str] = Counter()
    writing: set[str] = set()
    read_while_written: list[str] = []
    seen = threading.Condition()
    read_path = LocalFileSystem.read_path

    def write_in_two_halves(self: LocalFileSystem, path: str, content: bytes, **_: object) -> str:
        full = Path(self._resolve_path(path))
        full.parent.mkdir(parents=True, exist_ok=True)
        with seen:
            writes[full.name] += 1
            writing.add(full.name)
        try:
            with full.open("wb") as file:
                file.write(content[: len(content) // 2])
                file.flush()
                with seen:
                    seen.wait_for(lambda: not full.name.startswith(shared) or full.name in read_while_written, 2)
                file.write(content[len(content) // 2 :])
        finally:
            with seen:
                writing.discard(full.name)
        return str(full)

    def watched_read(self: LocalFileSystem, path: str, **options: object) -> bytes:
        name = Path(self._resolve_path(path)).name
        with seen:
            if name in writing:
                read_while_written.append(name)
                seen.notify_all()
        return read_path(self, path, **options)

    monkeypatch.setattr(LocalFileSystem, "write_path", write_in_two_halves)
    monkeypatch.setattr(LocalFileSystem, "read_path", watched_read)
    project = copy_project(PARAMS, tmp_path / "params_rag")
    cases = len((project / "cases.jsonl").read_text(encoding="utf-8").splitlines())

    result = sweep(project=str(project), grids=["system.rag.generator.prompt_version=p2,p3"],
                   objective="answer_correct", parallel=3)  # fmt: skip

    store = ResultsStore(str(project / ".oloproof" / "results"))
    for entry in result["settings"]:
        rows = store.read_table(run_table(entry["run_id"], "cases"))
        assert [row["error"] for row in rows] == [None] * cases
    assert read_while_written == []
    recorded = [name for name in writes if name.startswith(shared)]
    assert recorded and all(writes[name] == 1 for name in recorded)  # each equal batch recorded once
