"""Rows of the ``judgments`` table: one per case and criterion."""

from __future__ import annotations

import sys
from typing import Literal, NamedTuple

from oloproof.records._base import JsonObject, Record

__all__ = ["JudgmentBrief", "JudgmentRow"]


class JudgmentRow(Record):
    """One evaluator's judgment of one case on one criterion.

    ``status`` is how metrics count the case; ``outcome`` is what the evaluator
    did. Scores, skips and errors are three different outcomes: a judge error
    makes the case *missing* for the criterion, never a score.
    """

    run_id: str
    """The run the judgment belongs to."""

    case_id: str
    """The judged case."""

    criterion: str
    """The criterion (metric name) the evaluator reports."""

    evaluator: str
    """The evaluator's registered type name."""

    spec_hash: str
    """Hash of the evaluator's spec: its type, version and options."""

    status: Literal["observed", "missing", "excluded"]
    """``observed`` when judged, ``missing`` when the case or the judge failed,
    ``excluded`` when the criterion does not apply to the case."""

    outcome: Literal["completed", "skipped", "error"]
    """``completed`` (a score), ``skipped`` (nothing to judge: the criterion does not
    apply, or the case failed before judging) or ``error`` (the judge failed)."""

    reason: str | None = None
    """Why the case was missing or excluded, or the evaluator's own reason."""

    score: float | None = None
    """The raw score on the criterion's scale (a judge's 1-5; 1.0 or 0.0 for pass/fail)."""

    value: float | None = None
    """What metrics average: 1.0 or 0.0 for pass/fail criteria, else the score in [0, 1]."""

    passed: bool | None = None
    """Whether the case passed, for pass/fail criteria (derived from ``threshold``)."""

    label: str | None = None
    """``pass`` or ``fail`` for pass/fail criteria."""

    threshold: float | None = None
    """The threshold the verdict was derived with, if the criterion has one."""

    detail: JsonObject
    """What the evaluator reported besides the score."""

    judgment_key: str | None = None
    """Identity of the judgment; ``None`` when nothing was judged."""

    hit: bool
    """Whether the judgment was computed by an earlier run."""

    provider: str | None = None
    """The provider's configured name (LLM judges)."""

    provider_type: str | None = None
    """``openai``, ``azure_openai`` or ``anthropic`` (LLM judges)."""

    model: str | None = None
    """The judge model (LLM judges)."""

    prompt_hash: str | None = None
    """Hash of the prompt file the judge used (LLM judges)."""

    input_tokens: int | None = None
    """Prompt tokens the judge call used, re-asks and retries included."""

    output_tokens: int | None = None
    """Reply tokens the judge call used."""

    latency_ms: float | None = None
    """Wall time of the judge call, retries and waits included."""

    retries: int | None = None
    """How many times the call was retried."""

    finish_reason: str | None = None
    """The provider's finish reason of the last reply (``stop``, ``length``, ...)."""

    cost_usd: float | None = None
    """The call's cost from the provider's configured prices."""

    raw_reply: str | None = None
    """The judge's raw reply, kept when it could not be used (an error)."""

    requests: int | None = None
    """Requests this run sent to the provider for the judgment: the first, retries,
    a re-ask and a step down the structured-output ladder each count one; ``0``
    when it shared an equal judgment's call, ``None`` when it was not called now
    (a cache hit) or its evaluator does not count them."""

    repeat: int = 0
    """Which sample of the case's generation was judged (``repeats``), from 0."""

    judge_repeat: int = 0
    """Which of the judge's calls on that sample this is (``judge_repeats``), from 0."""


class JudgmentBrief(NamedTuple):
    """What a run's summary reads of one judgment row: metrics, cache and judge counts.

    A run holds one per case and criterion until it is summarized; a tuple of these
    fields takes about a tenth of the memory of the full row.
    """

    case_id: str
    """The case."""
    criterion: str
    """The criterion."""
    status: str
    """How metrics count the case: observed, missing or excluded."""
    outcome: str
    """What the evaluator did: completed, skipped or error."""
    value: float | None
    """The per-case metric value."""
    hit: bool
    """The judgment came from the judgment cache."""
    keyed: bool
    """The row has a judgment key (it was, or could have been, cached)."""
    provider: str | None
    """The judge's provider name, for LLM judges."""
    provider_type: str | None
    """The provider's wire protocol."""
    model: str | None
    """The judge's model."""
    retries: int | None
    """Retries the call needed."""
    input_tokens: int | None
    """Prompt tokens of the call."""
    output_tokens: int | None
    """Completion tokens of the call."""
    cost_usd: float | None
    """The call's cost, where known."""
    error: str | None = None
    """The judge's error message (``detail.error``) for an ``error`` outcome; ``None`` otherwise."""
    requests: int | None = None
    """Requests sent for the judgment by this run (see `JudgmentRow.requests`)."""
    repeat: int = 0
    """Which sample of the case's generation was judged."""
    judge_repeat: int = 0
    """Which of the judge's calls on that sample."""

    @classmethod
    def of(cls, row: JudgmentRow) -> JudgmentBrief:
        """The brief of a row (repeated labels are interned, so rows share them)."""
        error = row.detail.get("error") if row.outcome == "error" else None
        return cls(
            row.case_id, sys.intern(row.criterion), sys.intern(row.status), sys.intern(row.outcome), row.value,
            row.hit, row.judgment_key is not None, _shared(row.provider), _shared(row.provider_type),
            _shared(row.model), row.retries, row.input_tokens, row.output_tokens, row.cost_usd,
            sys.intern(error) if isinstance(error, str) else None, row.requests, row.repeat, row.judge_repeat,
        )  # positional, in field order: a run makes one per judgment row


def _shared(text: str | None) -> str | None:
    return None if text is None else sys.intern(text)
