"""``oloproof sweep --dry-run``: the calls the plan counts are the calls the sweep then makes.

The example's system is copied with a counter (each retriever and generator call appends a
line to a log beside it), and an LLM judge answers from a scripted local server that counts
its requests: the plan is compared with real calls, not with cache reports.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from projects import copy_project, count_calls, counted_calls
from providers_wire import GOOD, Script, chat_json, serve

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"
GRID = ("--grid", "system.rag.top_k=1,3", "--grid", "system.rag.token_budget=40,120")
MORE = ("--grid", "system.rag.top_k=1,3,6", "--grid", "system.rag.token_budget=40,120")  # one new value

def _counted(tmp_path: Path) -> Path:
    project = copy_project(EXAMPLE, tmp_path / "support_rag")
    app = project / "app.py"
    count_calls(app, "SupportRag")
    return project


def _ok(result: tuple[int, str, str]) -> str:
    code, out, err = result
    assert code == 0, err[-3000:]
    return out


def _plan(run_cli, project: Path, *argv: str) -> dict:
    return json.loads(_ok(run_cli("sweep", str(project), *argv, "--dry-run", "--json")))


def _swept(run_cli, project: Path, *argv: str) -> dict[str, int]:
    """Sweep; returns the retriever and generator calls the sweep made."""
    before = counted_calls(project)
    _ok(run_cli("sweep", str(project), *argv))
    return {name: count - before[name] for name, count in counted_calls(project).items()}


def test_after_a_run_the_plan_counts_exactly_the_generations_a_sweep_makes(run_cli, tmp_path):
    project = _counted(tmp_path)
    _ok(run_cli("run", str(project)))  # every retrieval is cached; every context is known
    plan = _plan(run_cli, project, *GRID, "--objective", "answer_correct")
    made = _swept(run_cli, project, *GRID, "--objective", "answer_correct")
    assert (plan["runs"], plan["complete"]) == (5, 0)
    assert (plan["generate_unknown"], plan["judge_unknown"], plan["judge"]) == (0, 0, 0)  # no LLM judge
    assert {"retrieve": plan["retrieve"], "generate": plan["generate"]} == made == {"retrieve": 0, "generate": 10}
    # 5 settings of 13 cases: 65 retrievals and 65 generations, all but 10 no call.
    assert plan["reused_by_stage"] == {"retrieve": 65, "generate": 55, "judge": 0}
    assert plan["reused"] == 120
    printed = _ok(run_cli("sweep", str(project), *GRID, "--objective", "answer_correct", "--dry-run"))
    assert printed.splitlines()[0].endswith(": 4 settings and the baseline; 0 to run, 5 complete")
    assert printed.splitlines()[-1] == "Calls: retrieve 0, generate 0, judge 0; 0 reused"

    # The same grid with one new value: another sweep, whose old settings are all cached.
    plan = _plan(run_cli, project, *MORE, "--objective", "answer_correct")
    made = _swept(run_cli, project, *MORE, "--objective", "answer_correct")
    assert (plan["runs"], plan["generate_unknown"]) == (7, 0)
    assert {"retrieve": plan["retrieve"], "generate": plan["generate"]} == made
    assert made["generate"] > 0
    assert plan["reused"] == 2 * 7 * 13 - made["generate"]


JUDGED = """system:
  name: judged
  version: '1'
  rag: {{object: app:SupportRag, depth: 6, top_k: 2, token_budget: 40, index_version: kb}}
dataset: cases.jsonl
providers:
  local: {{type: openai, base_url: '{url}', max_concurrency: 4}}
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
  - {{type: relevance, provider: local, model: judge-model}}
  - {{type: groundedness_judge, provider: local, model: judge-model}}
"""

QUESTIONS = ["How long do refunds take?", "Can I change my plan?", "How do I reset my password?"]


def _judged(folder: Path, url: str) -> Path:
    """The example's system on three questions, judged by two LLM judges on ``url``."""
    folder.mkdir(parents=True)
    for name in ("app.py", "knowledge_base.jsonl"):
        shutil.copy(EXAMPLE / name, folder / name)
    cases = [{"id": f"q{n}", "input": {"question": q}, "expected": {"answer": "days"}} for n, q in enumerate(QUESTIONS)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    (folder / "oloproof.yaml").write_text(JUDGED.format(url=url), encoding="utf-8")
    return folder


def test_the_plan_counts_llm_judge_calls_exactly_where_the_outputs_are_known(run_cli, server, tmp_path):
    script = serve(server, "/v1/chat/completions", Script(chat_json(GOOD)))
    project = _judged(tmp_path / "judged", server.url_for("/v1"))
    store = project / ".oloproof" / "results"
    grid = ("--grid", "system.rag.top_k=1,2", "--objective", "answer_correct")
    fresh = _plan(run_cli, project, *grid)
    # Nothing is known: 2 contexts a case (top_k=2 is the baseline's), each judged by 2 judges at most.
    assert (fresh["retrieve"], fresh["generate"], fresh["generate_unknown"]) == (3, 0, 6)
    assert (fresh["judge"], fresh["judge_unknown"]) == (0, 12)
    _ok(run_cli("sweep", str(project), *grid))
    first = len(script.seen)
    assert 0 < first <= fresh["judge_unknown"]

    # The outputs are cached, the judgments forgotten: judged again under a new sweep (seed),
    # first from the execution cache, then from the stage caches alone.
    for seed, forget in (("1", ("cache/judge", "prefect")), ("2", ("cache/judge", "cache/execute", "prefect"))):
        for folder in forget:
            shutil.rmtree(store / folder)
        before = len(script.seen)
        plan = _plan(run_cli, project, *grid, "--seed", seed)
        assert (plan["retrieve"], plan["generate"], plan["generate_unknown"], plan["judge_unknown"]) == (0, 0, 0, 0)
        _ok(run_cli("sweep", str(project), *grid, "--seed", seed))
        assert plan["judge"] == len(script.seen) - before == first
        assert plan["reused_by_stage"]["judge"] == 3 * 3 * 2 - first


def test_a_retrieval_only_plan_counts_no_generation(run_cli, tmp_path):
    project = _counted(tmp_path)
    plan = _plan(run_cli, project, "--grid", "system.rag.depth=3,6", "--objective", "hit_rate_at_2",
                 "--stages", "retrieve")  # fmt: skip
    # depth 6 is the baseline's: two retrieval identities a case.
    assert (plan["retrieve"], plan["generate"], plan["generate_unknown"], plan["judge"]) == (26, 0, 0, 0)
    assert plan["reused"] == 3 * 13 - 26
