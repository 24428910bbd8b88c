"""Small judged projects for the judge stage's tests: the example's system, a relevance
judge on a scripted local server, and cases built from questions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oloproof.tasks import RunRequest
from oloproof.tasks._environment import RunEnvironment, prepare_environment
from oloproof.tasks._flights import Flights
from oloproof.tasks._results import CaseResult

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"


def judged_project(
    folder: Path, url: str, questions: list[str], *, provider: str = "", judge_timeout: float = 60.0
) -> Path:
    """A project judging ``questions`` (one case each, ids ``q000``…) with ``contains`` and
    ``relevance`` on the OpenAI-compatible server at ``url``; ``provider`` adds options."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.py").write_text((EXAMPLE / "app.py").read_text())
    (folder / "knowledge_base.jsonl").write_text((EXAMPLE / "knowledge_base.jsonl").read_text())
    with (folder / "cases.jsonl").open("w") as cases:
        for n, question in enumerate(questions):
            case = {"id": f"q{n:03d}", "input": {"question": question}, "expected": {"answer": "days"}}
            cases.write(json.dumps(case) + "\n")
    (folder / "oloproof.yaml").write_text(
        "system:\n  name: judged\n  version: '1'\n"
        "  rag: {object: app:SupportRag, depth: 6, top_k: 2, token_budget: 40, index_version: kb}\n"
        "dataset: cases.jsonl\n"
        f"providers:\n  local: {{type: openai, base_url: '{url}', max_concurrency: 4{provider}}}\n"
        "evaluators:\n"
        "  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}\n"
        "  - {type: relevance, provider: local, model: judge-model}\n"
        f"timeouts: {{judge: {judge_timeout}}}\n"
    )
    return folder


def environment(project: Path, run: str = "run_01JUDGE", *, flights: Flights | None = None) -> RunEnvironment:
    """The run environment of ``project``."""
    return prepare_environment(RunRequest(run_id=run, project=str(project)), flights=flights)


def answered(env: RunEnvironment, case_ids: list[str] | None = None) -> dict[str, CaseResult]:
    """Executed results of the cases: each answers its question's first word."""
    results = {}
    for case_id in case_ids or list(env.cases):
        question = env.cases[case_id].input["question"]
        results[case_id] = CaseResult(
            case_id=case_id, status="ok", execution_key=f"x-{case_id}", query=question,
            output={"answer": f"It takes days: {question.split()[0]}", "citations": []}, context=[],
        )  # fmt: skip
    return results


def relevance_rows(judged: dict[str, list[Any]]) -> list[Any]:
    """The relevance rows of a batch's judgments, by case id."""
    return [row for rows in judged.values() for row in rows if row.criterion == "relevance"]
