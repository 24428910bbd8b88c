"""Per-case caching inside a batch task.

A batch task hands its cases' work items here: records found under their
identity key are hits; the rest are computed (user calls go through the run's
shared executor), recorded under their key, and are misses. A case whose user
call raised is an error outcome — recorded for the run and named in its logs,
never cached — and the batch as a whole is then kept out of Prefect's cache, so a
re-run retries it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import logging
import sysconfig
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeGuard, TypeVar

from pydantic import BaseModel, PlainValidator, ValidationError

from oloproof._exceptions import RunStoppedError, SystemContractError
from oloproof.records import StageRecord, stage_record, validate_staged
from oloproof.store import PackWriter
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._executor import CallResult, CallTimeoutError
from oloproof.tasks._flights import Claim, follow, publish

R = TypeVar("R", bound=StageRecord)

__all__ = ["CaseFailure", "Outcome", "WorkItem", "fresh", "is_hit", "log_failures", "outcome", "passthrough", "run_cached", "run_logger", "skip_batch_cache"]

T = TypeVar("T")


def fresh(value: T) -> T:
    """A private copy of what a user's call is handed: it may change its arguments (an
    input, its parameters), never the case as recorded nor what the next call gets."""
    return value.model_copy(deep=True) if isinstance(value, BaseModel) else copy.deepcopy(value)



@dataclass(frozen=True)
class WorkItem:
    """One case's unit of work in a stage."""

    case_id: str
    key: str
    call: Callable[..., Any]
    args: tuple[Any, ...]
    finish: Callable[[Any], StageRecord]
    """Turns the call's value into the stage record (and checks the contract)."""
    inline: bool = False
    """Run in the batch's own thread: cheap, synchronous work (assembly, deterministic
    judges) that would only queue behind slow calls in the shared limiter."""
    limited: bool = True
    """Count against the system's ``max_concurrency`` (LLM judges have their
    provider's own limits instead)."""
    label: str = ""
    """How the run's logs name this work when it fails; the case id when empty."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """One case's outcome of one stage: its record, or the error that made it missing.

    Batch tasks return these by case id; Prefect persists them as JSON and
    validates them back into this type when the next stage reads them.
    """

    key: str | None = None
    """The stage identity key (``None`` when the stage could not run)."""
    record: Annotated[StageRecord | None, PlainValidator(validate_staged)] = None
    """The stage record when the stage succeeded; with an error, what the failed
    call left to keep (a judge's raw reply), never cached."""
    hit: bool = False
    """Served from the stage cache, or shared with an equal-identity case of the run."""
    error: str | None = None
    """One line: why the case is missing at this stage."""
    error_stage: str | None = None
    """The stage that failed (``retrieve``, ``generate``, ...), where the error came from."""
    ms: float = 0.0
    """How long the user call took."""
    computed_by: str | None = None
    """The run that computed it; another run's id means a replay from Prefect's cache (a hit)."""

    @property
    def ok(self) -> bool:
        """Whether the stage produced a record."""
        return self.error is None

    def record_of(self, kind: type[R]) -> R | None:
        """The record, as the stage's own record type; ``None`` without a record.

        Raises:
            TypeError: The record is another stage's (a wiring error, never input).
        """
        if self.record is None:
            return None
        if not isinstance(self.record, kind):
            raise TypeError(f"expected a {kind.__name__}, got a {type(self.record).__name__}")
        return self.record


def outcome(
    *,
    key: str | None = None,
    record: StageRecord | None = None,
    hit: bool = False,
    error: str | None = None,
    error_stage: str | None = None,
    ms: float = 0.0,
    computed_by: str | None = None,
) -> Outcome:
    """An `Outcome`; ``error_stage`` is kept only with an error."""
    return Outcome(
        key=key, record=record, hit=hit, error=error,
        error_stage=error_stage if error is not None else None, ms=ms, computed_by=computed_by,
    )


def skip_batch_cache() -> None:
    """Keep the current task's result out of Prefect's cache (some case failed)."""
    try:
        from prefect.transactions import get_transaction
    except ImportError:  # pragma: no cover - Prefect is a dependency
        return
    transaction = get_transaction()
    if transaction is not None:
        transaction.write_on_commit = False


class CaseFailure(Exception):
    """A call's value breaks the contract for this case alone (e.g. an output that is
    not JSON), or reports an error of its own (a judge's unparseable reply): the case
    is *missing* with this error, and the run goes on.

    Args:
        message: The one-line error.
        record: What to keep of the failed call for the run (never cached).
    """

    def __init__(self, message: str, record: StageRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


def run_cached(
    env: RunEnvironment, stage: str, items: list[WorkItem], *, use_cache: bool = True, fly: bool = True
) -> dict[str, Outcome]:
    """Resolve each item from the stage cache or by calling it.

    Items of the batch with equal keys share one call, and so do items of batches in
    flight at once, in this run or another sharing its `Flights` (``fly``; a judge
    claims its own): the keys are claimed before the cache is read, and a key another
    batch leads waits for that call. Each case keeps its own outcome. With
    ``use_cache=False`` nothing is read from, written to or shared through the stage
    cache (diagnosis controls and replays re-execute on purpose).

    Returns:
        One outcome per case id.

    Raises:
        SystemContractError: A call returned something the contract forbids.
        RunStoppedError: The run was stopped while calls were pending.
    """
    flying = use_cache and fly
    claims = env.flights.claim(sorted({f"{stage}:{i.key}" for i in items if not i.inline})) if flying else {}
    try:
        return _resolve(env, stage, items, use_cache, claims)
    finally:
        env.flights.release(claims)  # the records are written: later batches find them cached


def _resolve(
    env: RunEnvironment, stage: str, items: list[WorkItem], use_cache: bool, claims: dict[str, Claim]
) -> dict[str, Outcome]:
    # The batch's new records go out together, as packs; on the way out (a stop, a
    # contract error) what was computed is still written.
    writer = PackWriter(env.store.records, stage)
    try:
        results = _resolve_into(env, stage, items, use_cache, claims, writer)
    except BaseException:
        with contextlib.suppress(Exception):
            writer.flush()
        raise
    writer.flush()
    return results


def _resolve_into(
    env: RunEnvironment, stage: str, items: list[WorkItem], use_cache: bool, claims: dict[str, Claim],
    writer: PackWriter,
) -> dict[str, Outcome]:
    results: dict[str, Outcome] = {}
    cached = _cached_records(env, stage, items) if use_cache else {}
    pending: dict[concurrent.futures.Future[Any], list[WorkItem]] = {}
    leaders: dict[str, concurrent.futures.Future[Any]] = {}
    inline: list[WorkItem] = []
    for item in items:
        if item.key in cached:
            results[item.case_id] = outcome(key=item.key, record=cached[item.key], hit=True)
        elif item.inline:
            inline.append(item)
        elif item.key in leaders:
            pending[leaders[item.key]].append(item)
        else:
            leaders[item.key] = future = _call(env, stage, item, claims.get(f"{stage}:{item.key}"))
            pending[future] = [item]
    if len(results):
        env.progress(stage, len(results))
    failures: list[tuple[str, str]] = []
    for item, called, shared in _completed(pending, inline):
        _check_contract(env, item, called.error)
        record, error = None, called.error
        if error is None:
            try:
                record = finished = item.finish(called.value)
            except CaseFailure as failure:
                error, record = failure, failure.record
            else:
                if use_cache and not shared:
                    writer.add(item.key, finished.stored())
        if error is not None:
            failures.append((item.label or item.case_id, _describe(error)))
            results[item.case_id] = outcome(
                key=item.key, record=record, error=failures[-1][1], error_stage=stage, ms=called.ms,
                computed_by=env.run_id,
            )
        else:
            results[item.case_id] = outcome(
                key=item.key, record=record, hit=shared, ms=0.0 if shared else called.ms,
                computed_by=env.run_id,
            )
        env.progress(stage)
    if failures:
        skip_batch_cache()
        log_failures(env, stage, failures)
    return {item.case_id: results[item.case_id] for item in items}


def _call(env: RunEnvironment, stage: str, item: WorkItem, claim: Claim | None) -> concurrent.futures.Future[Any]:
    """The item's call: made here (a future of its `CallResult`), or, where another batch
    leads its key, that batch's call (a future of ``(CallResult, shared)``, `follow`)."""

    def submit() -> concurrent.futures.Future[CallResult]:
        return env.executor.submit(item.call, *item.args, stage=stage, limited=item.limited)

    if claim is not None and not claim.leads:
        return follow(claim, submit)
    made = submit()
    if claim is not None:
        publish(claim, made)
    return made


def _cached_records(env: RunEnvironment, stage: str, items: list[WorkItem]) -> dict[str, StageRecord]:
    model = stage_record(stage)
    found = env.store.get_records(stage, sorted({item.key for item in items}))
    return {key: model.model_validate(stored) for key, stored in found.items()}


MAX_LOGGED_FAILURES = 20
"""Failing cases a batch names in the run's logs; the rest are counted in one line."""


def log_failures(env: RunEnvironment, stage: str, failures: list[tuple[str, str]]) -> None:
    """One warning per failing case in the run's logs: its stage, its name and its error.

    Args:
        env: The run.
        stage: The stage the cases failed at.
        failures: ``(name, one-line error)`` per failing case of the batch.
    """
    logger = run_logger()
    for name, error in failures[:MAX_LOGGED_FAILURES]:
        logger.warning("%s %s: missing: %s", stage, name, error)
    more = len(failures) - MAX_LOGGED_FAILURES
    if more > 0:
        logger.warning("%s: %d more failing case%s in this batch; oloproof inspect %s%s lists them all",
                       stage, more, "s" if more != 1 else "", env.run_id, env.store_arguments)  # fmt: skip


def run_logger() -> logging.Logger | logging.LoggerAdapter[logging.Logger]:
    """The current Prefect run's logger (its lines reach the run's logs in the API), else Oloproof's."""
    from prefect.exceptions import MissingContextError
    from prefect.logging import get_run_logger

    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger("oloproof")


def _check_contract(env: RunEnvironment, item: WorkItem, error: BaseException | None) -> None:
    # A broken contract stops the run; it is not a failing case.
    if isinstance(error, SystemContractError):
        raise error
    if _is_invalid_retrieval(error):
        raise SystemContractError(
            f"{env.system.config.object}.retrieve built an invalid Retrieval for case "
            f"{item.case_id!r}: {_describe(error)}",
            field="retrieve",
        )


def _completed(
    pending: dict[concurrent.futures.Future[Any], list[WorkItem]], inline: list[WorkItem]
) -> Iterator[tuple[WorkItem, CallResult, bool]]:
    """Inline items first (computed here, in order), then calls as they complete.

    Yields ``(item, result, shared)``: ``shared`` when the item reused the call of
    an earlier item with the same key, or of another batch leading its key.
    """
    for item in inline:
        started = time.perf_counter()
        try:
            value = item.call(*item.args)
        except BaseException as exc:  # noqa: BLE001 - a failing case is recorded, never fatal
            yield item, CallResult(error=exc, ms=(time.perf_counter() - started) * 1000), False
            continue
        yield item, CallResult(value=value, ms=(time.perf_counter() - started) * 1000), False
    for future in concurrent.futures.as_completed(pending):
        if future.cancelled():
            raise RunStoppedError("the run was stopped")
        done = future.result()
        called, shared = done if isinstance(done, tuple) else (done, False)  # a follower's: `follow`
        for index, item in enumerate(pending[future]):
            yield item, called, shared or index > 0


def _is_invalid_retrieval(error: BaseException | None) -> TypeGuard[ValidationError]:
    # Retrieval(...) and Passage(...) reject bad candidates inside the user's own
    # code; that is the retriever breaking its contract, not a failing case.
    return isinstance(error, ValidationError) and error.title in ("Retrieval", "Passage")


def _describe(error: BaseException) -> str:
    """One line: the error and the deepest frame of the user's own code."""
    if isinstance(error, (CallTimeoutError, CaseFailure)):
        return str(error)
    frames = [
        frame for frame in traceback.extract_tb(error.__traceback__)
        if not _is_library(frame.filename)
    ]
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    message = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    name = type(error).__name__
    return f"{name}: {message}{where}" if message else f"{name}{where}"


def _is_library(filename: str) -> bool:
    # Frames of installed packages, the standard library and Oloproof itself
    # say nothing about where the user's system failed.
    path = Path(filename).resolve()
    return (
        "site-packages" in path.parts
        or "dist-packages" in path.parts
        or path.is_relative_to(_STDLIB)
        or path.is_relative_to(_OLOPROOF)
    )


_STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()
_OLOPROOF = Path(__file__).resolve().parents[1]


def passthrough(upstream: Outcome | None) -> Outcome:
    """The outcome of a stage that could not run because an earlier stage failed."""
    if upstream is None:
        return outcome(error="not run", error_stage="unknown")
    return outcome(error=upstream.error, error_stage=upstream.error_stage)


def is_hit(result: Outcome | None, run_id: str) -> bool:
    """Whether an outcome was served from a cache rather than computed by ``run_id``."""
    return bool(result and result.ok and (result.hit or result.computed_by != run_id))
