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
from oloproof.records import JudgmentRow
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
) -> tuple[list[WorkItem], dict[str, JudgmentRow]]:
    items: list[WorkItem] = []
    fixed: dict[str, JudgmentRow] = {}
    for case_id, result in results.items():
        view = case_view(env, result) if result.ok else None
        for evaluator in env.evaluators:
            slot = f"{case_id}{_SEP}{evaluator.criterion}"
            if view is None:
                fixed[slot] = _row(env, evaluator, case_id, status="missing", reason=f"{result.error_stage}_error")
                continue
            fields = evaluator.read(view)
            if isinstance(fields, Verdict):
                fixed[slot] = _row(env, evaluator, case_id, status="excluded", reason=fields.reason)
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


def _row(env: RunEnvironment, evaluator: Evaluator, case_id: str, **values: Any) -> JudgmentRow:
    # The row names the run that made it: one replayed from Prefect's batch cache
    # names an earlier run, which is how `settle_judgments` knows it for a hit.
    row: dict[str, Any] = {
        "run_id": env.run_id,
        "case_id": case_id,
        "criterion": evaluator.criterion,
        "evaluator": evaluator.type_name,
        "spec_hash": content_hash(evaluator.spec()),
        "status": "observed",
        "detail": {},
        "hit": False,
    }
    row.update(values)
    return JudgmentRow(**row)


def _identities(inputs: dict[str, Any]) -> list[tuple[str, str]]:
    items, _ = _plan(inputs["env"], inputs["results"])
    return [(item.case_id, item.key) for item in items]


@task(**stage_task_options("judge", _identities))
def judge_cases(
    env: RunEnvironment, batch: Batch, results: dict[str, CaseResult]
) -> dict[str, list[JudgmentRow]]:
    """Judge every case of the batch with every evaluator; one row per criterion."""
    items, rows = _plan(env, results)
    for slot, done in run_cached(env, "judge", items).items():
        evaluator = next(e for e in env.evaluators if slot.endswith(_SEP + e.criterion))
        case_id = slot.split(_SEP, 1)[0]
        if not done.ok:
            rows[slot] = _row(env, evaluator, case_id, status="missing", reason="judge_error",
                              detail={"error": done.error})
            continue
        verdict = done.record
        rows[slot] = _row(
            env,
            evaluator,
            case_id,
            status=verdict["status"],
            reason=verdict["reason"],
            value=verdict["value"],
            passed=verdict["passed"],
            detail=verdict["detail"],
            judgment_key=done.key,
            hit=done.hit,
        )
    judged: dict[str, list[JudgmentRow]] = {case_id: [] for case_id in batch.case_ids}
    for row in rows.values():
        judged[row.case_id].append(row)
    return judged


def settle_judgments(rows: list[JudgmentRow], run_id: str) -> list[JudgmentRow]:
    """The run's judgment rows: one replayed from Prefect's batch cache (made by an
    earlier run) is this run's row, and a hit when anything was judged."""
    return [
        row if row.run_id == run_id
        else row.model_copy(update={"run_id": run_id, "hit": row.hit or row.judgment_key is not None})
        for row in rows
    ]
