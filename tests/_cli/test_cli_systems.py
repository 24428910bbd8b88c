"""Sync and async systems, staged and plain, through real runs; and ``run --json``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

RAG_MODULE = '''
import asyncio

from oloproof import Passage, Retrieval, rag_system

DOCS = {"d1": "alpha", "d2": "beta", "d3": "gamma"}


def _retrieve(input, depth):
    passages = [Passage(doc_id, 1.0 / rank, DOCS[doc_id]) for rank, doc_id in enumerate(input["rank"], 1)]
    return Retrieval(query=input["q"], depth=depth, candidates=passages[:depth])


def _generate(input, context):
    if not context:
        return {"answer": "", "citations": []}
    return {"answer": context[0].text, "citations": [context[0].doc_id]}


@rag_system(name="twin-sync", version="1", depth=2, top_k=2, index_version="i1")
class SyncRag:
    def retrieve(self, input, depth):
        return _retrieve(input, depth)

    def generate(self, input, context):
        return _generate(input, context)


@rag_system(name="twin-async", version="1", depth=2, top_k=2, index_version="i1")
class AsyncRag:
    async def retrieve(self, input, depth):
        await asyncio.sleep(0)
        return _retrieve(input, depth)

    async def generate(self, input, context):
        await asyncio.sleep(0)
        return _generate(input, context)
'''

RAG_CASES = [
    {"id": "c1", "input": {"q": "a", "rank": ["d1", "d2"]}, "expected": {"answer": "alpha", "relevant": [{"doc_id": "d1"}]}},
    {"id": "c2", "input": {"q": "b", "rank": ["d2", "d1"]}, "expected": {"answer": "alpha", "relevant": [{"doc_id": "d1"}]}},
    {"id": "c3", "input": {"q": "c", "rank": ["d3"]}, "expected": {"answer": "gamma", "relevant": [{"doc_id": "d1"}]}},
    {"id": "c4", "input": {"q": "d", "rank": ["d2", "d3"]}, "expected": {"answer": "beta", "relevant": [{"doc_id": "d3"}]}},
]

PLAIN_MODULE = '''
import asyncio

from oloproof import system

ANSWERS = {"capital of France": "Paris", "2 + 2": "It is 4", "largest planet": "Saturn"}


@system(name="plain-sync", version="1")
def answer(input):
    return {"answer": ANSWERS[input]}


@system(name="plain-async", version="1")
async def answer_async(input):
    await asyncio.sleep(0)
    return {"answer": ANSWERS[input]}
'''

PLAIN_CASES = [
    {"id": "p1", "input": "capital of France", "expected": {"answer": "paris"}},
    {"id": "p2", "input": "2 + 2", "expected": {"answer": ["4", "four"]}},
    {"id": "p3", "input": "largest planet", "expected": {"answer": "Jupiter"}},
]


def write_project(directory: Path, module: str, source: str, system_yaml: str, cases: list, evaluators: str) -> Path:
    directory.mkdir()
    (directory / f"{module}.py").write_text(source, encoding="utf-8")
    (directory / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (directory / "oloproof.yaml").write_text(
        f"system:\n{textwrap.indent(system_yaml, '  ')}dataset: cases.jsonl\nevaluators:\n{evaluators}batch_size: 8\n",
        encoding="utf-8",
    )
    return directory


def overall(report: dict) -> dict[str, tuple]:
    return {
        row["criterion"]: (
            row["kind"], row["estimate"], row["successes"], row["observed"],
            row["missing"], row["excluded"], row["low"], row["high"],
        )
        for row in report["metrics"]
        if row["slice"] is None
    }


def run_json(run_cli, project: Path, *extra: str) -> dict:
    code, out, err = run_cli("run", str(project), "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_async_rag_system_matches_its_sync_twin(run_cli, tmp_path):
    project = write_project(
        tmp_path / "twins",
        "twins_rag",
        RAG_MODULE,
        "rag:\n  object: twins_rag:SyncRag\n",
        RAG_CASES,
        "  - {type: contains, criterion: answer_ok}\n"
        "  - {type: mrr, k: 2}\n"
        "  - {type: hit_rate, k: 1}\n"
        "  - {type: citation_validity, require_citations: true}\n",
    )
    sync = run_json(run_cli, project)
    asynchronous = run_json(run_cli, project, "--set", "system.rag.object=twins_rag:AsyncRag")
    assert asynchronous["system"]["name"] == "twin-async"
    # Another system name: every stage really ran the async methods.
    assert asynchronous["cache"]["retrieve"] == {"hit": 0, "miss": 4}
    assert asynchronous["cache"]["generate"] == {"hit": 0, "miss": 4}
    assert overall(asynchronous) == overall(sync)
    metrics = overall(sync)
    assert metrics["answer_ok"][:6] == ("proportion", 0.75, 3, 4, 0, 0)
    assert metrics["mrr_at_2"][:6] == ("mean", 0.5, None, 4, 0, 0)
    assert metrics["hit_rate_at_1"][:6] == ("proportion", 0.25, 1, 4, 0, 0)
    assert metrics["citations_valid"][:6] == ("proportion", 1.0, 4, 4, 0, 0)


def test_plain_systems_sync_and_async(run_cli, tmp_path):
    project = write_project(
        tmp_path / "plain",
        "plain_systems",
        PLAIN_MODULE,
        "object: plain_systems:answer\n",
        PLAIN_CASES,
        "  - {type: contains}\n  - {type: exact_match}\n",
    )
    code, out, err = run_cli("run", str(project))
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("│ ")]
    assert rows[1:] == [
        "│ contains    │ 66.7%    │ [9.4%, 99.2%] │ 2 / 3 observed · 0 missing · 0 excluded │",
        "│ exact_match │ 33.3%    │ [0.8%, 90.6%] │ 1 / 3 observed · 0 missing · 0 excluded │",
    ]
    # A plain system has no retrieve stage.
    assert "Stages: retrieve 0 hit/0 miss; generate 0 hit/3 miss" in out

    asynchronous = run_json(run_cli, project, "--set", "system.object=plain_systems:answer_async")
    assert asynchronous["system"]["kind"] == "plain"
    assert asynchronous["system"]["name"] == "plain-async"
    assert asynchronous["cache"]["generate"] == {"hit": 0, "miss": 3}
    assert {c: m[:6] for c, m in overall(asynchronous).items()} == {
        "contains": ("proportion", 2 / 3, 2, 3, 0, 0),
        "exact_match": ("proportion", 1 / 3, 1, 3, 0, 0),
    }


def test_run_json_holds_the_run_id_metrics_and_cache(run_cli, tmp_path):
    project = write_project(
        tmp_path / "json",
        "json_systems",
        PLAIN_MODULE,
        "object: json_systems:answer\n",
        PLAIN_CASES,
        "  - {type: exact_match, criterion: exact}\n",
    )
    code, out, err = run_cli("run", str(project), "--json")
    assert code == 0, err
    report = json.loads(out)  # the whole of stdout is one JSON document
    assert report["run_id"].startswith("run_") and len(report["run_id"]) == 30
    assert report["cache"] == {
        "execution": {"hit": 0, "miss": 3},
        "judgment": {"hit": 0, "miss": 3},
        "retrieve": {"hit": 0, "miss": 0},
        "generate": {"hit": 0, "miss": 3},
    }
    (row,) = [row for row in report["metrics"] if row["slice"] is None]
    assert (row["criterion"], row["successes"], row["observed"], row["estimate"]) == ("exact", 1, 3, 1 / 3)
    assert report["case_count"] == 3
    manifest = project / ".oloproof" / "results" / "runs" / report["run_id"] / "run.json"
    assert json.loads(manifest.read_text())["run_id"] == report["run_id"]
