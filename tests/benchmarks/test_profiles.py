"""The profiles RESULTS.md shows for targets not met: summarised from raw stacks, rendered."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import _profiles
import spy_summary

RAW = """\
thread (101): MainThread;main (oloproof/_cli/main.py:10);run (oloproof/flows/_run.py:5);encode (oloproof/store/_tables.py:40);dumps (json/__init__.py:2) 6
thread (101): MainThread;main (oloproof/_cli/main.py:11);run (oloproof/flows/_run.py:5);encode (oloproof/store/_tables.py:41) 2
thread (102): ThreadPoolExecutor-0_0;worker (concurrent/futures/thread.py:3);run_task_sync (prefect/task_engine.py:9);judge (oloproof/tasks/_judge.py:7);canonical_json (oloproof/_json.py:3) 3
thread (103): ThreadPoolExecutor-0_1;worker (concurrent/futures/thread.py:3);run_task_sync (prefect/task_engine.py:9);select (selectors.py:1) 1
thread (104): asyncio_0;select (selectors.py:1) 1
"""


@pytest.fixture
def raw(tmp_path) -> Path:
    path = tmp_path / "spy.txt"
    path.write_text(RAW)
    return path


def test_a_summary_counts_threads_leaves_and_frames(raw):
    summary = spy_summary.summarize(raw, match="oloproof/")
    assert summary.total == 13
    assert summary.groups == {"MainThread": 8, "ThreadPoolExecutor": 4, "asyncio": 1}
    assert summary.own["dumps (json/__init__.py)"] == 6
    # Lines of one function merge; a frame counts once per stack.
    assert summary.inclusive["main (oloproof/_cli/main.py)"] == 8
    assert summary.innermost == {"encode (oloproof/store/_tables.py)": 8, "canonical_json (oloproof/_json.py)": 3}
    assert sum(summary.innermost.values()) <= summary.total


def test_innermost_frames_are_counted_only_with_a_match(raw):
    assert not spy_summary.summarize(raw).innermost
    assert spy_summary.summarize(raw, thread="ThreadPool").total == 4


def test_a_profile_shows_shares_of_every_sample(raw):
    shown = _profiles.summary_of(raw)
    assert shown["samples"] == 13
    # Each sample is given to the oloproof or Prefect frame nearest its leaf.
    assert shown["oloproof"] == [("encode (oloproof/store/_tables.py)", 8 / 13), ("canonical_json (oloproof/_json.py)", 3 / 13)]
    assert shown["prefect"] == [("run_task_sync (prefect/task_engine.py)", 1 / 13)]
    assert shown["neither"] == pytest.approx(1 / 13)
    assert shown["threads"][0] == ("MainThread", 8 / 13)
    text = "\n".join(_profiles.render([{"scenario": "size", "targets": ["per-case cost"], "what": "A run",
                                        **shown}]))  # fmt: skip
    assert "### size: per-case cost" in text
    assert "| 61.5% | `encode (oloproof/store/_tables.py)` | | 7.7% | `run_task_sync (prefect/task_engine.py)` |" in text
    assert "| 23.1% | `canonical_json (oloproof/_json.py)` | |  |  |" in text
    assert "| 7.7% | *(no oloproof or Prefect frame on the stack)* | | | |" in text
    assert "A run, profiled: 13 samples (0.3 s holding the GIL)." in text
    compared = "\n".join(_profiles.render([{"scenario": "startup", "targets": ["t"], "what": "A run", **shown,
                                             "baseline": {"what": "a hello", "samples": 5}}]))  # fmt: skip
    assert "A run, profiled: 13 samples (0.3 s holding the GIL); a hello, profiled alike: 5 samples (0.1 s)." in compared


def _scenario(name, met, figures=None):
    return {"name": name, "targets": [{"name": "t1", "met": True}, {"name": "t2", "met": met}],
            "results": [{"figures": figures or {}}]}  # fmt: skip


def test_only_a_scenario_with_a_target_not_met_is_profiled():
    assert _profiles.profile(_scenario("size", True), quick=True, timeout=1) is None
    assert _profiles.profile(_scenario("size", None), quick=True, timeout=1) is None  # reported, not a target
    assert _profiles.profile_skipped(_scenario("size", True)) is None
    skipped = _profiles.profile_skipped(_scenario("size", False))
    assert skipped == {"scenario": "size", "targets": ["t2"], "error": "profiles were not taken (--no-profiles)"}
    assert "Not profiled: profiles were not taken" in "\n".join(_profiles.render([skipped]))


def test_a_scenario_without_a_workload_says_so():
    assert _profiles.profile(_scenario("judges", False), quick=True, timeout=1)["error"] == (
        "no profile is defined for this scenario")


def test_a_missing_profiler_is_named(monkeypatch):
    monkeypatch.setattr(_profiles, "_spy", lambda: None)
    assert "py-spy is not installed" in _profiles.profile(_scenario("size", False), quick=True, timeout=1)["error"]


def test_the_store_query_s_parts_come_from_its_measured_run():
    phases = {"oloproof": {"open a DuckDB connection": 10.0, "list the store": 1.5},
              "duckdb": {"open a DuckDB connection": 9.0}}  # fmt: skip
    item = _profiles.profile(_scenario("store_query", False, {"phases_ms": phases}), quick=True, timeout=1)
    text = "\n".join(_profiles.render([item]))
    assert "| open a DuckDB connection | 10.00 | 9.00 |" in text
    assert "| list the store | 1.50 | — |" in text
    assert "| **all** | **11.50** | **9.00** |" in text
    missing = _profiles.profile(_scenario("store_query", False, {"phases_error": "phases not measured: x"}),
                                quick=True, timeout=1)  # fmt: skip
    assert missing["error"] == "phases not measured: x"


def test_a_latency_profile_shows_where_the_measured_flow_call_went():
    latency = {"flow_engine_overhead_s": 1.0, "body_before_first_call_s": 0.25, "calls_window_s": 15.0,
               "body_after_last_call_s": 0.75, "flow_s": 17.0, "ideal_s": 13.75}  # fmt: skip
    scenario = {"name": "latency", "results": [{"latency": latency}, {"figures": {"wall_s": 14.0}}]}
    timeline = _profiles._timeline(scenario)["timeline"]
    assert [value for _, value in timeline] == [1.0, 0.25, 15.0, 0.75, 17.0, 14.0, 13.75]
    text = "\n".join(_profiles.render([{"scenario": "latency", "targets": ["t"], "what": "A run", "samples": 0,
                                         "rate": 50, "threads": [], "oloproof": [], "prefect": [], "leaves": [],
                                         "neither": 1.0, "timeline": timeline}]))  # fmt: skip
    assert "| Prefect's flow engine: the flow run's start and end | 1.00 |" in text
    assert "| the bare asyncio loop, first call to last answer | 14.00 |" in text


def test_a_rerun_profile_shows_the_warm_run_s_flow_call_against_the_cold_one():
    rerun = {"warm_flow_engine_overhead_s": 1.0, "warm_body_after_last_call_s": 1.5, "warm_flow_s": 3.0,
             "cold_flow_s": 17.0, "flow_s": 99.0}  # fmt: skip
    timeline = _profiles._timeline({"name": "rerun", "results": [{"rerun": rerun}]})["timeline"]
    assert timeline == [("Prefect's flow engine: the flow run's start and end", 1.0),
                        ("after the last stage call (the last batches' judging and encoding, tables, report)", 1.5),
                        ("**the flow call**", 3.0), ("the cold run's flow call", 17.0)]  # fmt: skip
    assert _profiles._timeline({"name": "size", "results": [{}]}) == {}
