"""The judge stage: every evaluator over every executed case.

A judgment's identity is the evaluator's identity (its spec less the options that
only turn scores into verdicts) plus exactly the fields it read, so an unchanged
output is never judged twice and a changed threshold re-derives verdicts from the
cached scores. A judge's error is recorded for the run and never cached.

An evaluator overriding ``judge_many(fields_list, ctx)`` (the rank metrics)
judges the cases of a batch that miss the cache in one call of its batch kernels
instead of one call each; the cache, the identities and each case's outcome are
those of judging case by case.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from functools import partial
from typing import Any, cast

from prefect import task
from pydantic import JsonValue
from typing_extensions import TypedDict

from oloproof._exceptions import SystemContractError
from oloproof.evaluators import CaseView, Evaluator, Verdict
from oloproof.records import JudgeRecord, JudgmentRow
from oloproof.stages._batch import Batch
from oloproof.stages._identity import judgment_key
from oloproof.tasks._cached import CaseFailure, WorkItem, run_cached
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._flights import Shared, flown
from oloproof.tasks._policy import stage_task_options
from oloproof.tasks._results import CaseResult

__all__ = ["CALL_FIELDS", "case_view", "judge_cases", "settle_judgments"]

_SEP = "\x1f"

_FLAT = frozenset({str, int, float, bool, type(None)})
"""The types of a detail's values that need no copy of their own."""

_FLOATS = ("score", "value", "threshold", "latency_ms", "cost_usd")
"""The row's float columns."""

CALL_FIELDS = (
    "provider", "provider_type", "model", "prompt_hash", "input_tokens", "output_tokens",
    "latency_ms", "retries", "finish_reason", "cost_usd", "raw_reply",
)  # fmt: skip
"""The accounting of a judge call, as judgment rows carry it."""


def case_view(env: RunEnvironment, result: CaseResult, *, with_item: bool = True) -> CaseView:
    """What evaluators may read of one executed case (``with_item``: with its row, for data_mapping)."""
    case = env.cases[result.case_id]
    return CaseView(
        case_id=case.id,
        input=case.input,
        expected=case.expected.model_dump(mode="json", exclude_none=True),
        metadata=case.metadata,
        output=result.output,
        # Evaluators read passages as the JSON objects they are.
        context=cast("list[dict[str, JsonValue]] | None", result.context),
        candidates=cast("list[dict[str, JsonValue]] | None", result.candidates),
        item=env.dataset.item(case) if with_item else None,
        recorded=env.dataset.recorded,
        output_items=result.output_items,
    )


_Plan = tuple[list[WorkItem], dict[str, list[JudgmentRow]], dict[str, Evaluator], "_Tally"]
"""A batch's judge calls, the rows of its cases judged without a call, the evaluator of
each slot, and the tally its calls' requests are counted in."""


def _plan(env: RunEnvironment, results: dict[str, CaseResult]) -> _Plan:
    tally = _Tally()
    items: list[WorkItem] = []
    fixed: dict[str, list[JudgmentRow]] = {}
    by_slot: dict[str, Evaluator] = {}
    batched = {id(e): _Batched(e, env.judges) for e in env.evaluators if _judges_many(e)}
    # Dumping each case's row is only worth it when a data_mapping reads it.
    with_item = env.dataset.recorded or any(e.mapping for e in env.evaluators)
    for case_id, result in results.items():
        view = case_view(env, result, with_item=with_item) if result.ok else None
        for evaluator in env.evaluators:
            slot = f"{case_id}{_SEP}{evaluator.criterion}"
            by_slot[slot] = evaluator
            if view is None:
                fixed[slot] = _rows(env, evaluator, case_id, status="missing", outcome="skipped",
                                    reason=f"{result.error_stage}_error")  # fmt: skip
                continue
            fields = evaluator.read(view)
            if isinstance(fields, Verdict):
                fixed[slot] = _rows(env, evaluator, case_id, status="excluded", outcome="skipped",
                                    reason=fields.reason)  # fmt: skip
                continue
            group = batched.get(id(evaluator))
            call, args = (group.judge, (group.add(fields),)) if group else (evaluator.judge, (fields, env.judges))
            # An LLM judge is a sample too: each of its repeats is a call (and a cache entry) of its own.
            for judged in range(env.project.config.judge_repeats if evaluator.is_llm_judge else 1):
                key = judgment_key(evaluator.identity(), fields, judged)
                at = slot if judged == 0 else f"{slot}{_SEP}{judged}"
                by_slot[at] = evaluator
                items.append(
                    WorkItem(
                        case_id=at,
                        key=key,
                        call=call,
                        args=args,
                        finish=partial(_verdict_record, evaluator, tally, key),
                        inline=not evaluator.is_async and not evaluator.is_llm_judge,
                        limited=not evaluator.is_llm_judge,
                        label=f"{case_id} {evaluator.criterion}" + (f" (judge repeat {judged + 1})" if judged else ""),
                    )
                )
    return items, fixed, by_slot, tally


def _planned(env: RunEnvironment, batch: Batch | None, results: dict[str, CaseResult], *, body: bool) -> _Plan:
    """The batch's plan: made for the cache key and kept, then taken by the body."""
    if batch is None:
        return _plan(env, results)
    return env.plans.of_batch("judge", batch, (env, batch, results), lambda: _plan(env, results), body=body)


def _flies(evaluator: Evaluator, item: WorkItem) -> bool:
    # Single-flight is for the async LLM judges: their calls take no slot of the
    # system's max_concurrency, so a follower waiting never holds the slot its
    # leader needs; and a blocking judge waiting would hold a worker thread.
    return not item.inline and not item.limited and evaluator.is_async


def _judges_many(evaluator: Evaluator) -> bool:
    # Only synchronous, deterministic judges run inline, one after another in the
    # batch's thread, which is what lets one call serve the cases after it.
    return evaluator.judges_many and not (evaluator.is_async or evaluator.is_llm_judge)


class _Batched:
    """The cases one evaluator judges in a batch, judged together when first asked.

    The engine calls `judge` only for the cases that miss the cache, in plan order,
    so the first call judges that case and every later one at once (the cached
    ones among them add a little to that one call, never a call of their own). A
    case asked out of order is judged then, with the cases after it.
    """

    def __init__(self, evaluator: Evaluator, ctx: Any) -> None:
        self.evaluator = evaluator
        self.ctx = ctx
        self.fields: list[object] = []  # what the evaluator read, of its own type
        self.done: dict[int, Verdict | BaseException] = {}
        self.judged: set[int] = set()

    def add(self, fields: object) -> int:
        """Register one case's fields; returns the index `judge` takes."""
        self.fields.append(fields)
        return len(self.fields) - 1

    def judge(self, index: int) -> Any:
        """The verdict of case ``index``, as ``evaluator.judge`` gives it (or raises)."""
        if index not in self.done:
            self._judge_from(index)
        value = self.done.pop(index)
        if isinstance(value, BaseException):
            raise value
        return value

    def _judge_from(self, start: int) -> None:
        indices = [start, *(i for i in range(start + 1, len(self.fields)) if i not in self.judged)]
        self.judged.update(indices)
        try:
            verdicts = self.evaluator.judge_many([self.fields[i] for i in indices], self.ctx) or []
            if len(verdicts) != len(indices):
                raise SystemContractError(
                    f"evaluator {self.evaluator.type_name}.judge_many returned {len(verdicts)} "
                    f"verdicts for {len(indices)} cases",
                    field="judge",
                )
        except SystemContractError:
            raise
        except Exception:  # noqa: BLE001 - an evaluator may raise anything
            # A failure of the whole batch is some case's own: judging case by case
            # gives each its verdict or its error, as without batching.
            for i in indices:
                try:
                    self.done[i] = self.evaluator.judge(self.fields[i], self.ctx)  # type: ignore[assignment]
                except Exception as error:  # noqa: BLE001 - recorded as the case's error
                    self.done[i] = error
            return
        self.done.update(zip(indices, verdicts, strict=True))


class _Tally:
    """What a batch's judge calls sent, by judgment key.

    The requests a call sent are the judgment's accounting for this run, not part
    of its cached record (whose bytes stay those of earlier versions): they are
    taken out of the record here, and handed to the first row of the key only.
    """

    def __init__(self) -> None:
        self.requests: dict[str, int] = {}
        self.shared: set[str] = set()
        """Keys whose verdict came from another batch's call (single-flight)."""

    def take(self, key: str) -> int | None:
        """The requests of ``key``'s call for its first row; ``0`` for every later one
        and for a shared call, ``None`` when the call did not count them."""
        if key in self.shared:
            return 0
        sent = self.requests.get(key)
        if sent is not None:
            self.requests[key] = 0
        return sent


def _verdict_record(evaluator: Evaluator, tally: _Tally, key: str, value: Any) -> JudgeRecord:
    if isinstance(value, Shared):
        tally.shared.add(key)
        value = value.value
    if not isinstance(value, Verdict):
        raise SystemContractError(
            f"evaluator {evaluator.type_name} returned {type(value).__name__}; expected Verdict",
            field="judge",
        )
    if value.status == "observed" and value.score is None:
        raise SystemContractError(
            f"evaluator {evaluator.type_name} returned an observed Verdict without a score", field="judge"
        )
    # The verdict's fields as asdict copies them (the call's accounting loses its request
    # count below), without asdict's walk where the detail is flat, as most are.
    detail = value.detail
    flat = isinstance(detail, dict) and all(type(item) in _FLAT for item in detail.values())
    detail = dict(detail) if flat else asdict(value)["detail"]
    call = dict(value.call) if value.call is not None else None
    if call is not None and "requests" in call:
        sent = call.pop("requests")
        if isinstance(sent, int):
            tally.requests.setdefault(key, sent)
    record = JudgeRecord.model_validate({
        "status": value.status, "score": value.score, "passed": value.passed, "reason": value.reason,
        "detail": detail, "call": call, "scores": value.scores,
    })  # fmt: skip
    if value.status == "error":  # recorded for this run, judged again by the next
        raise CaseFailure(value.reason or "judge error", record=record)
    return record


def _rows(env: RunEnvironment, evaluator: Evaluator, case_id: str, **values: Any) -> list[JudgmentRow]:
    """One row per output of ``evaluator``, all with ``values``."""
    return [_row(env, evaluator, case_id, output.criterion, **values) for output in evaluator.outputs()]


def _row(env: RunEnvironment, evaluator: Evaluator, case_id: str, criterion: str, **values: Any) -> JudgmentRow:
    # The row names the run that made it: one replayed from Prefect's batch cache
    # names an earlier run, which is how `settle_judgments` knows it for a hit.
    row: dict[str, object] = {
        "run_id": env.run_id,
        "case_id": case_id,
        "criterion": criterion,
        "evaluator": evaluator.type_name,
        "spec_hash": evaluator.spec_hash,
        "detail": {},
        "hit": False,
    }
    row.update(values)
    # Every value here was validated where it was made (the evaluator's spec, the
    # judge record, the output's verdict); a run makes one row per case and output,
    # and validating each again was the largest share of judging recorded rows.
    # Numbers are made plain: a kernel's score may be a numpy scalar.
    for name in _FLOATS:
        number = row.get(name)
        if number is not None and type(number) is not float:
            row[name] = float(cast("float", number))
    passed = row.get("passed")
    if passed is not None and type(passed) is not bool:
        row["passed"] = bool(passed)
    return JudgmentRow.trusted(row)


def _call_fields(verdict: JudgeRecord | None) -> dict[str, JsonValue]:
    return {name: verdict.call_value(name) for name in CALL_FIELDS} if verdict and verdict.call else {}


def _judge_of(env: RunEnvironment, evaluator: Evaluator) -> dict[str, str | None]:
    """The provider and model an LLM judge calls, for a row its call left nothing on
    (cut off by the stage timeout): its error is counted under them like any other."""
    provider = getattr(evaluator.options, "provider", None)
    model = getattr(evaluator.options, "model", None)
    if not evaluator.is_llm_judge or not isinstance(provider, str) or not isinstance(model, str):
        return {}
    pool = env.judges.providers
    kind = pool.config(provider).type if pool is not None and provider in pool.names else None
    return {"provider": provider, "provider_type": kind, "model": model}


def _judged_rows(
    env: RunEnvironment, evaluator: Evaluator, case_id: str, verdict: JudgeRecord, *, key: str, hit: bool,
    requests: int | None = None,
) -> list[JudgmentRow]:
    """The rows of a verdict: each output's verdict derived from its score now."""
    if verdict.status == "excluded":
        return _rows(env, evaluator, case_id, status="excluded", outcome="skipped", reason=verdict.reason)
    rows = []
    scores = verdict.scores or {}
    for output in evaluator.outputs():
        score = scores.get(output.criterion, verdict.score)
        value, passed, label = output.verdict_of(score, verdict.passed)
        rows.append(_row(
            env, evaluator, case_id, output.criterion, status="observed", outcome="completed",
            reason=verdict.reason, score=score, value=value, passed=passed, label=label,
            threshold=output.threshold, detail=verdict.detail, judgment_key=key, hit=hit,
            requests=None if hit else requests, **_call_fields(verdict),
        ))  # fmt: skip
    return rows


class _Inputs(TypedDict):
    env: RunEnvironment
    batch: Batch
    results: dict[str, CaseResult]


def _identities(inputs: _Inputs) -> list[tuple[str, str]]:
    # A batch's cached rows hold verdicts, so its key also names each evaluator's
    # full spec: a new threshold re-derives rows (from cached scores, no calls).
    items, fixed, by_slot, _ = _planned(inputs["env"], inputs.get("batch"), inputs["results"], body=False)
    pairs = [(item.case_id, f"{item.key}:{by_slot[item.case_id].spec_hash}") for item in items]
    # The batch's result also holds the rows of its missing and excluded cases: a batch
    # judging the same cases beside other missing ones is another batch.
    pairs += [(slot, f"{row.status}:{row.reason}:{by_slot[slot].spec_hash}")
              for slot, rows in fixed.items() for row in rows[:1]]  # fmt: skip
    # Its rows name their repeat: a later repeat's batch that reads the same is another batch.
    batch = inputs.get("batch")
    repeat = batch.repeat if batch is not None else 0
    return pairs if repeat == 0 else [(slot, f"{key}:repeat {repeat}") for slot, key in pairs]


@task(**stage_task_options("judge", _identities))
def judge_cases(
    env: RunEnvironment, batch: Batch, results: dict[str, CaseResult]
) -> dict[str, list[JudgmentRow]]:
    """Judge every case of the batch with every evaluator; one row per criterion.

    The keys of the batch's calls are claimed in the run's flights before the cache
    is read: a key another batch is judging now waits for that call and shares it.
    """
    items, rows, by_slot, tally = _planned(env, batch, results, body=True)
    claims = env.flights.claim(sorted({item.key for item in items if _flies(by_slot[item.case_id], item)}))
    items = [replace(item, call=flown(claims[item.key], item.call)) if item.key in claims else item
             for item in items]  # fmt: skip
    try:
        done_items = run_cached(env, "judge", items, fly=False)  # claimed above, by judgment key
    finally:
        env.flights.release(claims)  # the records are written: later batches find them cached
    for slot, done in done_items.items():
        evaluator, case_id = by_slot[slot], slot.split(_SEP, 1)[0]
        key = done.key or ""
        if done.ok:
            rows[slot] = _judged_rows(env, evaluator, case_id, done.record_of(JudgeRecord) or JudgeRecord(), key=key,
                                      hit=done.hit or key in tally.shared, requests=tally.take(key))  # fmt: skip
        else:
            failed = done.record_of(JudgeRecord)
            rows[slot] = _rows(
                env, evaluator, case_id, status="missing", outcome="error", reason="judge_error",
                detail={"error": done.error}, requests=tally.take(key),
                **(_call_fields(failed) if failed is not None and failed.call else _judge_of(env, evaluator)),
            )  # fmt: skip
    judged: dict[str, list[JudgmentRow]] = {case_id: [] for case_id in batch.case_ids}
    for slot, slot_rows in rows.items():
        repeat = {"repeat": batch.repeat, "judge_repeat": _judge_repeat(slot)}
        for row in slot_rows:
            judged[row.case_id].append(row.model_copy(update=repeat) if any(repeat.values()) else row)
    return judged


def _judge_repeat(slot: str) -> int:
    """Which of the judge's repeats a slot is: ``case<SEP>criterion[<SEP>repeat]``."""
    parts = slot.split(_SEP)
    return int(parts[2]) if len(parts) > 2 else 0


def settle_judgments(rows: list[JudgmentRow], run_id: str) -> list[JudgmentRow]:
    """The run's judgment rows: one replayed from Prefect's batch cache (made by an
    earlier run) is this run's row, and a hit when anything was judged, with no
    requests: this run sent none for it."""
    return [row if row.run_id == run_id else _replayed(row, run_id) for row in rows]


def _replayed(row: JudgmentRow, run_id: str) -> JudgmentRow:
    hit = row.hit or row.judgment_key is not None
    return row.model_copy(update={"run_id": run_id, "hit": hit, "requests": None if hit else row.requests})
