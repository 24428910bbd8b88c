"""A complete run as the store reads it back: its manifest and table rows as JSON.

These are the JSON forms of `RunManifest`, `CaseRow`, `JudgmentRow` and
`RetrievalRow`: what ``run.json`` and the Parquet tables give, read without
building a model per row (a run may hold 100,000 cases). Every key is optional,
since manifests of older runs lack some.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue
from typing_extensions import TypedDict

from oloproof.records._cases import ContextEntry, DroppedEntry

__all__ = ["StoredCase", "StoredEvaluator", "StoredJudgment", "StoredManifest", "StoredRetrieval", "StoredRun"]


class StoredEvaluator(TypedDict, total=False):
    """An entry of ``evaluators`` in ``run.json`` (the JSON form of `EvaluatorEntry`).

    Attributes:
        criterion: The criterion it reports.
        metric: This output's metric, for an evaluator with several outputs.
        kind: ``proportion``, ``mean`` or ``count``.
        llm_judge: Whether it is an LLM judge.
        spec: Its full spec.
        spec_hash: Hash of the spec.
        judge_id: For LLM judges, the key of its validation record.
        judge: For LLM judges, the judge's identity.
    """

    criterion: str
    metric: str | None
    kind: str
    llm_judge: bool
    spec: dict[str, JsonValue]
    spec_hash: str
    judge_id: str | None
    judge: dict[str, JsonValue] | None


class StoredManifest(TypedDict, total=False):
    """``run.json`` as read (the JSON form of `RunManifest`).

    Attributes:
        run_id: The run's id.
        kind: ``run`` or ``diagnosis_child``.
        created_at: When the run started (ISO 8601).
        project: The project folder.
        system: The system's identity.
        system_name: The system's name.
        dataset: The dataset's URL.
        dataset_sha256: SHA-256 of the dataset file.
        case_count: How many cases the run evaluated.
        rows_named_by_line: Recorded rows named by their line.
        evaluators: The evaluators, in report order.
        slices: The slices the metrics are broken down by.
        min_slice_support: Slice values observed on fewer cases are not scored.
        confidence: The intervals' confidence level.
        cache: Cache hits and misses.
        judges: LLM judge calls per provider and model.
        variant: How the run departed from a plain run.
        parent: What a child run was run for.
        repeats: Generations of each case (absent: 1).
        judge_repeats: Calls of each LLM judge per output (absent: 1).
        retrieve_repeats: Whether each repeat retrieved afresh (absent: no).
    """

    run_id: str
    kind: str
    created_at: str
    project: str
    # Its keys are the system kind's settings (and the parameters a system declares).
    system: dict[str, Any]
    system_name: str
    dataset: str
    dataset_sha256: str
    case_count: int
    rows_named_by_line: int
    evaluators: list[StoredEvaluator]
    slices: list[str]
    min_slice_support: int
    confidence: float
    cache: dict[str, dict[str, int]]
    judges: list[dict[str, JsonValue]]
    variant: dict[str, JsonValue]
    parent: dict[str, JsonValue] | None
    repeats: int
    judge_repeats: int
    retrieve_repeats: bool


class StoredCase(TypedDict, total=False):
    """A row of the ``cases`` table as read (the JSON form of `CaseRow`).

    Attributes:
        case_id: The case's id.
        repeat: Which sample of its generation (absent in runs made before repeats: 0).
        status: ``ok`` or ``missing``.
        error_stage: The stage that failed.
        error: What it raised.
        query: The query the retriever ran.
        input: The case's input.
        expected: What the case expects.
        metadata: The case's metadata.
        output: What the system generated.
        context: The passages kept in the context.
        dropped: The candidates left out.
        best_relevant_position: Position of the first relevant candidate.
        relevant_position: That position as a slice label.
        context_truncated: Whether the token budget dropped a passage.
        output_items: An agent's transcript (its tool calls and their results).
    """

    case_id: str
    repeat: int
    status: str
    error_stage: str | None
    error: str | None
    query: str | None
    input: JsonValue
    expected: dict[str, JsonValue]
    metadata: dict[str, JsonValue]
    output: JsonValue
    context: list[ContextEntry] | None
    dropped: list[DroppedEntry] | None
    best_relevant_position: int | None
    relevant_position: str | None
    context_truncated: bool | None
    output_items: JsonValue


class StoredJudgment(TypedDict, total=False):
    """A row of the ``judgments`` table as read (the JSON form of `JudgmentRow`).

    Attributes:
        run_id: The run.
        case_id: The judged case.
        repeat: Which sample of its generation (absent in runs made before repeats: 0).
        judge_repeat: Which of the judge's calls on it (likewise).
        criterion: The criterion.
        evaluator: The evaluator's type name.
        spec_hash: Hash of the evaluator's spec.
        status: ``observed``, ``missing`` or ``excluded``.
        outcome: ``completed``, ``skipped`` or ``error``.
        reason: Why, or the evaluator's own reason.
        score: The raw score.
        value: What metrics average.
        passed: Whether the case passed.
        label: ``pass`` or ``fail``.
        threshold: The threshold of the verdict.
        detail: What the evaluator reported besides the score.
    """

    run_id: str
    case_id: str
    repeat: int
    judge_repeat: int
    criterion: str
    evaluator: str
    spec_hash: str
    status: str
    outcome: str
    reason: str | None
    score: float | None
    value: float | None
    passed: bool | None
    label: str | None
    threshold: float | None
    detail: dict[str, JsonValue]


class StoredRetrieval(TypedDict, total=False):
    """A row of the ``retrievals`` table as read (the JSON form of `RetrievalRow`).

    Attributes:
        case_id: The case.
        position: 1-based position in the retriever's order.
        doc_id: The candidate's document.
        chunk_id: Its chunk.
        text: The passage text.
        in_context: Whether it was kept in the context.
        repeat: Which repeat retrieved it (absent in runs made before repeats: 0).
    """

    case_id: str
    repeat: int
    position: int
    doc_id: str
    chunk_id: str | None
    text: str | None
    in_context: bool


class StoredRun(TypedDict, total=False):
    """A complete run's records, as `oloproof.store.read_run_records` gives them.

    Attributes:
        manifest: ``run.json``.
        cases: The ``cases`` table.
        judgments: The ``judgments`` table.
        retrievals: The ``retrievals`` table, where a reader loaded it.
    """

    manifest: StoredManifest
    cases: list[StoredCase]
    judgments: list[StoredJudgment]
    retrievals: list[StoredRetrieval]
