"""The judge stage: every evaluator over every executed case.

A judgment's identity is the evaluator's spec and version plus exactly the
fields it read, so an unchanged output is never judged twice.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from prefect import task

from oloproof._exceptions import SystemContractError
from oloproof.evaluators import CaseView, Evaluator, Verdict
from oloproof.tasks._batch import Batch
from oloproof.tasks._cached import WorkItem, run_cached
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._identity import content_hash, judgment_key
from oloproof.tasks._results import CaseResult
from oloproof.tasks._policy import stage_task_options

__all__ = ["case_view", "judge_cases", "settle_judgments"]

_SEP = "\x1f"


def case_view(env: RunEnvironment, result: CaseResult) -> CaseView:
    """What evaluators may read of one executed case."""
    case = env.cases[result.case_id]
    return CaseView(
        case_id=case.id,
        input=case.input,
        expected=case.expected.model_dump(mode="json", exclude_none=True),
        metadata=case.metadata,
        output=result.output,
        context=result.context,
        candidates=result.candidates,
    )


def _plan(
    env: RunEnvironment, results: dict[str, CaseResult]
) -> tuple[list[WorkItem], dict[str, dict[str, Any]]]:
    items: list[WorkItem] = []
    fixed: dict[str, dict[str, Any]] = {}
    for case_id, result in results.items():
        view = case_view(env, result) if result.ok else None
        for evaluator in env.evaluators:
            slot = f"{case_id}{_SEP}{evaluator.criterion}"
            if view is None:
                fixed[slot] = _row(evaluator, status="missing", reason=f"{result.error_stage}_error")
                continue
            fields = evaluator.read(view)
            if isinstance(fields, Verdict):
                fixed[slot] = _row(evaluator, status="excluded", reason=fields.reason)
                continue
            items.append(
                WorkItem(
                    case_id=slot,
                    key=judgment_key(evaluator.spec(), fields),
                    call=evaluator.judge,
                    args=(fields,),
                    finish=lambda value, evaluator=evaluator: _verdict_record(evaluator, value),
                    inline=not evaluator.is_async and not evaluator.is_llm_judge,
                )
            )
    return items, fixed


def _verdict_record(evaluator: Evaluator, value: Any) -> dict[str, Any]:
    if not isinstance(value, Verdict):
        raise SystemContractError(
            f"evaluator {evaluator.type_name} returned {type(value).__name__}; expected Verdict",
            field="judge",
        )
    return asdict(value)


def _row(evaluator: Evaluator, **values: Any) -> dict[str, Any]:
    row = {
        "criterion": evaluator.criterion,
        "evaluator": evaluator.type_name,
        "spec_hash": content_hash(evaluator.spec()),
        "status": "observed",
        "reason": None,
        "value": None,
        "passed": None,
        "detail": {},
        "judgment_key": None,
        "hit": False,
        "computed_by": None,
    }
    row.update(values)
    return row


def _identities(inputs: dict[str, Any]) -> list[tuple[str, str]]:
    items, _ = _plan(inputs["env"], inputs["results"])
    return [(item.case_id, item.key) for item in items]


@task(**stage_task_options("judge", _identities))
def judge_cases(
    env: RunEnvironment, batch: Batch, results: dict[str, CaseResult]
) -> dict[str, list[dict[str, Any]]]:
    """Judge every case of the batch with every evaluator; one row per criterion."""
    items, rows = _plan(env, results)
    for slot, done in run_cached(env, "judge", items).items():
        evaluator = next(e for e in env.evaluators if slot.endswith(_SEP + e.criterion))
        if not done.ok:
            rows[slot] = _row(evaluator, status="missing", reason="judge_error", detail={"error": done.error})
            continue
        verdict = done.record
        rows[slot] = _row(
            evaluator,
            status=verdict["status"],
            reason=verdict["reason"],
            value=verdict["value"],
            passed=verdict["passed"],
            detail=verdict["detail"],
            judgment_key=done.key,
            hit=done.hit,
            computed_by=done.computed_by,
        )
    judged: dict[str, list[dict[str, Any]]] = {case_id: [] for case_id in batch.case_ids}
    for slot, row in rows.items():
        case_id = slot.split(_SEP, 1)[0]
        judged[case_id].append({"case_id": case_id, **row})
    return judged


def settle_judgments(rows: list[dict[str, Any]], run_id: str) -> list[dict[str, Any]]:
    """Final judgment rows: a row computed by another run (replayed from Prefect's
    batch cache) is a hit; ``computed_by`` is dropped."""
    for row in rows:  # in place: a large run holds one copy of its judgments
        computed_by = row.pop("computed_by", None)
        if row["judgment_key"] is not None and computed_by != run_id:
            row["hit"] = True
    return rows
