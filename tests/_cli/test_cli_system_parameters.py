"""A system's own parameters through ``oloproof run``: each invalidates exactly its stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from projects import copy_project
from readme_blocks import read_blocks

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).with_name("params_rag")
README = Path(__file__).resolve().parents[2] / "README.md"


def _cache_lines(out: str) -> tuple[str, str]:
    lines = out.splitlines()
    cache = next(line for line in lines if line.startswith("Cache: "))
    stages = next(line for line in lines if line.startswith("Stages: "))
    return cache, stages


def _runs(project: Path) -> list[Path]:
    return sorted((project / ".oloproof" / "results" / "runs").rglob("run.json"))


def _run_systems(project: Path) -> list[dict]:
    manifests = [json.loads(path.read_text(encoding="utf-8")) for path in _runs(project)]
    return [manifest["system"] for manifest in manifests]


def test_each_declared_parameter_invalidates_exactly_its_stage(run_cli, tmp_path):
    project = copy_project(PROJECT, tmp_path / "params_rag")
    code, out, err = run_cli("run", str(project))
    assert code == 0, err
    assert _cache_lines(out)[1] == "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss"
    (first,) = _run_systems(project)
    assert (first["retriever"], first["generator"]) == (
        {"mode": "keyword", "chunk_size": 400}, {"temperature": 0.0, "prompt_version": "p1"}
    )

    shown = []
    # A retriever parameter is retrieval identity: every case retrieves again; the
    # mode ranks alike, so the same contexts come back and no generation is redone.
    code, out, err = run_cli("run", str(project), "--set", "system.rag.retriever.mode=hybrid")
    assert code == 0, err
    assert _cache_lines(out) == (
        "Cache: execution 0 hit/13 miss; judgment 26 hit/0 miss",
        "Stages: retrieve 0 hit/13 miss; generate 13 hit/0 miss",
    )
    shown += ["$ oloproof run tests/_cli/params_rag --set system.rag.retriever.mode=hybrid", _cache_lines(out)[1]]

    # A generator parameter is generation identity only: every retrieval is reused.
    code, out, err = run_cli("run", str(project), "--set", "system.rag.generator.temperature=0.7")
    assert code == 0, err
    assert _cache_lines(out) == (
        "Cache: execution 0 hit/13 miss; judgment 26 hit/0 miss",
        "Stages: retrieve 13 hit/0 miss; generate 0 hit/13 miss",
    )
    shown += ["$ oloproof run tests/_cli/params_rag --set system.rag.generator.temperature=0.7", _cache_lines(out)[1]]
    # The README shows these very lines.
    (block,) = [b for b in read_blocks(README) if b.marker == "output of tests/_cli/test_cli_system_parameters.py"]
    assert block.text.splitlines() == shown
    assert [system["generator"]["temperature"] for system in _run_systems(project)] == [0.0, 0.0, 0.7]

    # Nothing changed since the first run: the execution cache serves every case.
    code, out, err = run_cli("run", str(project))
    assert code == 0, err
    assert _cache_lines(out)[1] == "Stages: none ran: all 13 cases were served from the execution cache"


def test_a_bad_parameter_is_one_line_naming_it_and_nothing_is_written(run_cli, tmp_path):
    project = copy_project(PROJECT, tmp_path / "params_rag")
    code, out, err = run_cli("run", str(project), "--set", "system.rag.retriever.mode=semantic")
    assert (code, out) == (2, "")
    assert err == (
        "oloproof: error: --set: field 'system.rag.retriever.mode': "
        "Input should be 'vector', 'keyword' or 'hybrid' (got 'semantic')\n"
    )
    config = project / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("chunk_size: 400", "chunk_size: big"),
                      encoding="utf-8")  # fmt: skip
    code, out, err = run_cli("run", str(project))
    line = next(n for n, text in enumerate(config.read_text().splitlines(), start=1) if "chunk_size:" in text)
    assert (code, out) == (2, "")
    assert err == (
        f"oloproof: error: {config}:{line}: field 'system.rag.retriever.chunk_size': "
        "Input should be a valid integer (got 'big')\n"
    )
    assert _runs(project) == []
