"""Per-case caching inside a batch task.

A batch task hands its cases' work items here: records found under their
identity key are hits; the rest are computed (user calls go through the run's
shared executor), recorded under their key, and are misses. A case whose user
call raised is an error outcome — recorded for the run, never cached — and
the batch as a whole is then kept out of Prefect's cache, so a re-run retries it.
"""

from __future__ import annotations

import concurrent.futures
import sysconfig
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from oloproof._exceptions import SystemContractError
from oloproof.tasks._environment import RunEnvironment
from oloproof.tasks._executor import CallResult

__all__ = [
    "Outcome",
    "WorkItem",
    "is_hit",
    "outcome",
    "passthrough",
    "run_cached",
    "skip_batch_cache",
]


@dataclass(frozen=True)
class WorkItem:
    """One case's unit of work in a stage."""

    case_id: str
    key: str
    call: Callable[..., Any]
    args: tuple[Any, ...]
    finish: Callable[[Any], dict[str, Any]]
    """Turns the call's value into the stage record (and checks the contract)."""
    inline: bool = False
    """Run in the batch's own thread: cheap, synchronous work (assembly, deterministic
    judges) that would only queue behind slow calls in the shared limiter."""


def outcome(
    *,
    key: str | None = None,
    record: dict[str, Any] | None = None,
    hit: bool = False,
    error: str | None = None,
    error_stage: str | None = None,
    ms: float = 0.0,
    computed_by: str | None = None,
) -> dict[str, Any]:
    """A JSON-native per-case outcome of one stage.

    ``computed_by`` names the run that computed it; an outcome replayed from
    Prefect's batch cache carries another run's id, and so counts as a hit.
    """
    return {
        "ok": error is None,
        "hit": hit,
        "computed_by": computed_by,
        "key": key,
        "record": record,
        "error": error,
        "error_stage": error_stage if error is not None else None,
        "ms": ms,
    }


Outcome = dict[str, Any]


def skip_batch_cache() -> None:
    """Keep the current task's result out of Prefect's cache (some case failed)."""
    try:
        from prefect.transactions import get_transaction
    except ImportError:  # pragma: no cover - Prefect is a dependency
        return
    transaction = get_transaction()
    if transaction is not None:
        transaction.write_on_commit = False


def run_cached(
    env: RunEnvironment, stage: str, items: list[WorkItem], *, use_cache: bool = True
) -> dict[str, Outcome]:
    """Resolve each item from the stage cache or by calling it.

    With ``use_cache=False`` nothing is read from or written to the stage cache
    (diagnosis controls and replays re-execute on purpose).

    Returns:
        One outcome per case id.

    Raises:
        SystemContractError: A call returned something the contract forbids.
    """
    results: dict[str, Outcome] = {}
    cached = env.store.get_records(stage, sorted({i.key for i in items})) if use_cache else {}
    pending: dict[concurrent.futures.Future[Any], WorkItem] = {}
    inline: list[WorkItem] = []
    for item in items:
        if item.key in cached:
            results[item.case_id] = outcome(key=item.key, record=cached[item.key], hit=True)
        elif item.inline:
            inline.append(item)
        else:
            pending[env.executor.submit(item.call, *item.args)] = item
    if len(results):
        env.progress(stage, len(results))
    failed = False
    for item, called in _completed(pending, inline):
        if isinstance(called.error, SystemContractError):
            raise called.error  # a broken contract stops the run; it is not a failing case
        if _is_invalid_retrieval(called.error):
            raise SystemContractError(
                f"{env.system.config.object}.retrieve built an invalid Retrieval for case "
                f"{item.case_id!r}: {_describe(called.error)}",
                field="retrieve",
            )
        if called.error is not None:
            failed = True
            results[item.case_id] = outcome(
                key=item.key,
                error=_describe(called.error),
                error_stage=stage,
                ms=called.ms,
                computed_by=env.context.run_id,
            )
        else:
            record = item.finish(called.value)
            if use_cache:
                env.store.put_record(stage, item.key, record)
            results[item.case_id] = outcome(
                key=item.key, record=record, ms=called.ms, computed_by=env.context.run_id
            )
        env.progress(stage)
    if failed:
        skip_batch_cache()
    return {item.case_id: results[item.case_id] for item in items}


def _completed(
    pending: dict[concurrent.futures.Future[Any], WorkItem], inline: list[WorkItem]
) -> Iterator[tuple[WorkItem, CallResult]]:
    """Inline items first (computed here, in order), then calls as they complete."""
    for item in inline:
        started = time.perf_counter()
        try:
            value = item.call(*item.args)
        except Exception as exc:  # a failing case is recorded, never fatal
            yield item, CallResult(error=exc, ms=(time.perf_counter() - started) * 1000)
            continue
        yield item, CallResult(value=value, ms=(time.perf_counter() - started) * 1000)
    for future in concurrent.futures.as_completed(pending):
        yield pending[future], future.result()


def _is_invalid_retrieval(error: BaseException | None) -> bool:
    # Retrieval(...) and Passage(...) reject bad candidates inside the user's own
    # code; that is the retriever breaking its contract, not a failing case.
    return isinstance(error, ValidationError) and error.title in ("Retrieval", "Passage")


def _describe(error: BaseException) -> str:
    """One line: the error and the deepest frame of the user's own code."""
    frames = [
        frame for frame in traceback.extract_tb(error.__traceback__)
        if not _is_library(frame.filename)
    ]
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    message = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return f"{type(error).__name__}: {message}{where}"


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
    return outcome(error=upstream["error"], error_stage=upstream["error_stage"])


def is_hit(result: Outcome | None, run_id: str) -> bool:
    """Whether an outcome was served from a cache rather than computed by ``run_id``."""
    return bool(result and result["ok"] and (result["hit"] or result["computed_by"] != run_id))
