"""A store written by an earlier release is read and reused unchanged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from projects import copy_project

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"
STORE = Path(__file__).with_name("store_f47a28e") / "cache"


def _cache_lines(out: str) -> tuple[str, str]:
    lines = out.splitlines()
    cache = next(line for line in lines if line.startswith("Cache: "))
    stages = next(line for line in lines if line.startswith("Stages: "))
    return cache, stages


def _contents(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*.json"))}


def test_the_example_over_a_store_written_by_f47a28e_is_a_full_cache_hit(run_cli, tmp_path):
    project = copy_project(EXAMPLE, tmp_path / "support_rag")
    cache = project / ".oloproof" / "results" / "cache"
    shutil.copytree(STORE, cache)
    written = _contents(cache)
    assert len([name for name in written if name.startswith("execute/")]) == 13

    code, out, err = run_cli("run", str(project))
    assert code == 0, err
    assert _cache_lines(out) == (
        "Cache: execution 13 hit/0 miss; judgment 65 hit/0 miss",
        "Stages: none ran: all 13 cases were served from the execution cache",
    )
    assert "│ answer_correct  │ 69.2%    │ [38.5%, 91.0%]  │" in out

    # Every stage's own records are reused too: a larger budget retrieves nothing
    # again and regenerates only the six cases whose context changed (the README's figures).
    code, out, err = run_cli("run", str(project), "--set", "system.rag.token_budget=120")
    assert code == 0, err
    assert _cache_lines(out) == (
        "Cache: execution 0 hit/13 miss; judgment 59 hit/6 miss",
        "Stages: retrieve 13 hit/0 miss; generate 7 hit/6 miss",
    )
    after = _contents(cache)
    assert {name: after[name] for name in written} == written  # read, never rewritten
