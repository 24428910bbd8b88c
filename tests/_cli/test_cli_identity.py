"""Stage identity rules, observed through real runs of the example."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.slow


def _cache_lines(out: str) -> tuple[str, str]:
    lines = out.splitlines()
    cache = next(line for line in lines if line.startswith("Cache: "))
    stages = next(line for line in lines if line.startswith("Stages: "))
    return cache, stages


def test_each_setting_invalidates_exactly_its_stages(run_cli, example_project):
    # One batch per stage keeps each run to a handful of Prefect task runs.
    config = example_project / "oloproof.yaml"
    config.write_text(re.sub(r"^batch_size:.*$", "batch_size: 13", config.read_text(), flags=re.MULTILINE))
    project = str(example_project)
    code, out, err = run_cli("run", project)
    assert code == 0, err
    assert _cache_lines(out) == (
        "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
        "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss",
    )

    # top_k is not retrieval identity: every retrieval is reused.
    code, out, err = run_cli("run", project, "--set", "system.rag.top_k=1")
    assert code == 0, err
    assert _cache_lines(out) == (
        "Cache: execution 0 hit/13 miss; judgment 64 hit/1 miss",
        # With one passage fewer offered, a single context changes.
        "Stages: retrieve 13 hit/0 miss; generate 12 hit/1 miss",
    )

    # index_version is retrieval identity: nothing is reused there, but the same
    # contexts come back, so every generation is reused.
    code, out, err = run_cli("run", project, "--set", "system.rag.index_version=kb-2026-10-01")
    assert code == 0, err
    assert _cache_lines(out) == (
        "Cache: execution 0 hit/13 miss; judgment 65 hit/0 miss",
        "Stages: retrieve 0 hit/13 miss; generate 13 hit/0 miss",
    )

    # version is generation identity, never retrieval identity.
    code, out, err = run_cli("run", project, "--set", "system.version=v2")
    assert code == 0, err
    assert _cache_lines(out) == (
        # The same outputs come back, so their judgments are reused.
        "Cache: execution 0 hit/13 miss; judgment 65 hit/0 miss",
        "Stages: retrieve 13 hit/0 miss; generate 0 hit/13 miss",
    )

    # Nothing changed since the first run: every case comes from the execution cache.
    code, out, err = run_cli("run", project)
    assert code == 0, err
    assert _cache_lines(out) == (
        "Cache: execution 13 hit/0 miss; judgment 65 hit/0 miss",
        "Stages: none ran: all 13 cases were served from the execution cache",
    )
