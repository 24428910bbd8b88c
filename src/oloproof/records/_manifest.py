"""The manifest of a run, ``runs/<id>/run.json``: written last, it marks the run complete."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import Field, JsonValue, field_serializer, model_validator

from oloproof.records._base import Record

__all__ = [
    "CacheCount",
    "EvaluatorEntry",
    "JudgeUsage",
    "RunCache",
    "RunKind",
    "RunManifest",
    "RunParent",
    "RunSweep",
    "RunVariant",
    "stored_run_kind",
]

RunKind = Literal["run", "diagnosis_child", "sweep_child"]
"""What a run was made for: ``run`` for a user's own run, ``diagnosis_child`` for one
re-execution of a diagnosis (its control, gold-context run or replay), ``sweep_child``
for one setting of a sweep."""


def stored_run_kind(manifest: Mapping[str, Any]) -> object:
    """The kind a stored manifest records, as it records it.

    Manifests written before runs recorded their kind have none: they read as
    ``diagnosis_child`` when they name a parent run, else as ``run``.

    Args:
        manifest: A run manifest as stored (``run.json``), of any age.

    Returns:
        The manifest's ``kind`` when it has one (kept as written), else the kind
        its ``parent`` implies.
    """
    kind = manifest.get("kind")
    if kind is not None:
        return kind
    return "diagnosis_child" if manifest.get("parent") is not None else "run"


class CacheCount(Record):
    """Hits and misses of one cache over a run."""

    hit: int
    """Lookups answered by the cache."""

    miss: int
    """Lookups that had to compute."""


class RunCache(Record):
    """Cache hits and misses per cache: per case, and per case × criterion for judgments."""

    execution: CacheCount
    """The whole-execution cache."""

    judgment: CacheCount
    """The judgment cache."""

    retrieve: CacheCount
    """The retrieval stage cache, over cases whose retrieval ran."""

    generate: CacheCount
    """The generation stage cache, over cases whose generation ran (an agent's runs)."""

    tools: CacheCount | None = Field(default=None, exclude_if=lambda value: value is None)
    """An agent's tool cache, over the tool calls its runs in this run made; written
    only for agents."""


class JudgeUsage(Record):
    """What one provider and model cost a run: judgments, requests, cache hits, tokens, retries, errors."""

    provider: str
    """The provider's configured name."""

    provider_type: str | None = None
    """``openai``, ``azure_openai`` or ``anthropic``."""

    model: str
    """The judge model."""

    calls: int
    """Judgments this run asked the provider for (errors included); the same as
    ``judgments``, under the name earlier versions wrote."""

    judgments: int | None = Field(default=None, exclude_if=lambda value: value is None)
    """Judgments this run made with the provider (errors included); ``None`` in a
    manifest written before it was counted apart from ``requests``."""

    requests: int | None = Field(default=None, exclude_if=lambda value: value is None)
    """Requests this run sent to the provider for its judgments: each judgment's
    first, its retries and re-asks; ``None`` in a manifest written before they were counted."""

    cached: int
    """Judgments served from the judgment cache: no call."""

    retries: int
    """Retries over those calls."""

    errors: int
    """Calls that ended in an error: their cases are missing for the criterion."""

    input_tokens: int
    """Prompt tokens of this run's calls."""

    output_tokens: int
    """Reply tokens of this run's calls."""

    cost_usd: float | None = None
    """Cost of this run's calls from the configured prices; ``None`` without prices."""

    error_kinds: dict[str, int] = Field(default_factory=dict, exclude_if=lambda value: not value)
    """The errors by kind (``connection refused``, ``provider unreachable``, ``HTTP 429
    rate_limit_exceeded``, ``invalid reply``...), summing to ``errors``; written only
    when there are some (manifests of runs without errors, and older ones, have none)."""

    error_samples: dict[str, str] = Field(default_factory=dict, exclude_if=lambda value: not value)
    """One error message of each kind in ``error_kinds``, as its judgment row keeps it."""


class EvaluatorEntry(Record):
    """One criterion the run judged: an evaluator's output (one entry per output)."""

    criterion: str
    """The criterion (metric name) it reports."""

    metric: str | None = None
    """For an evaluator with several outputs, this output's metric (``ndcg@3``);
    ``None`` when the evaluator has one output."""

    kind: Literal["proportion", "mean", "count"]
    """``proportion`` for pass/fail criteria, ``mean`` for scores in [0, 1], ``count`` for counts."""

    llm_judge: bool
    """Whether it is an LLM judge (whose rules need a passing validation)."""

    spec: dict[str, JsonValue]
    """Its full spec: type, version and every option."""

    spec_hash: str
    """Hash of the spec, as in the ``judgments`` table."""

    judge_id: str | None = None
    """For LLM judges, the hash of `judge`: the key of the judge's validation record
    (``validations/<judge_id>.json``)."""

    judge: dict[str, JsonValue] | None = None
    """For LLM judges, the judge's identity: type, version, model, provider type,
    prompt hashes, threshold and the options that change a verdict."""


class RunVariant(Record):
    """How the run departed from a plain run of the system (diagnosis and replay)."""

    context_source: Literal["assembled", "gold"]
    """``assembled`` from the retrieval, or ``gold`` from ``expected.gold_context``."""

    replay_from: str | None = None
    """The run whose recorded retrievals were replayed."""

    reranker: str | None = None
    """``module:function`` applied to replayed candidates."""

    bypass_generation_cache: bool = False
    """Whether generation was re-executed even when cached."""

    case_ids: list[str] | None = None
    """The only cases run; ``None`` for the whole dataset."""

    stages: Literal["all", "retrieve"] = Field(default="all", exclude_if=lambda value: value == "all")
    """``retrieve`` for a retrieval-only run (no generator, no judge); written only then."""


class RunParent(Record):
    """What a child run was run for: one re-execution of a diagnosis."""

    run_id: str
    """The diagnosed (parent) run."""

    diagnosis_request: str
    """The diagnosis request the child run answers."""

    role: str
    """Which re-execution it is, e.g. ``control`` or ``gold context``."""


class RunSweep(Record):
    """Which sweep a run answered, and with which setting."""

    sweep_id: str
    """The sweep's id."""

    setting: str
    """The setting's label, e.g. ``top_k=4 token_budget=120``."""

    settings: dict[str, JsonValue]
    """The setting's ``dotted.key: value`` overrides (empty: the project's own settings)."""


class RunManifest(Record):
    """What a complete run was: the system, the dataset, the evaluators and the settings.

    Timestamps keep Python's ISO-8601 text (``+00:00``), as readers of
    ``run.json`` have always seen them.
    """

    run_id: str
    """The run's id, ``run_<ULID>``."""

    kind: RunKind
    """What the run was made for: ``oloproof runs`` and the ``runs`` view list only
    ``run``; ``runs --all`` and the ``all_runs`` view list every kind."""

    status: Literal["complete"]
    """Always ``complete``: a run without a manifest never finished."""

    config_hash: str | None = None
    """A short hash of every setting the run used, overrides included: its flow run's
    name and ``config:`` tag in the Prefect UI carry it. ``None`` in older manifests."""

    created_at: datetime
    """When the run started (UTC)."""

    finished_at: datetime
    """When its tables were written (UTC)."""

    project: str
    """The project folder the run was configured from."""

    system: dict[str, JsonValue]
    """The system's identity: kind, object, name, version and retrieval settings."""

    system_name: str
    """The system's name."""

    system_version: str
    """The system's version."""

    index_version: str | None = None
    """The version of the index the retriever read, when the project names one."""

    dataset: str
    """The dataset's URL."""

    dataset_sha256: str
    """SHA-256 of the dataset file's bytes when the run read it."""

    case_count: int
    """How many cases the run evaluated."""

    rows_named_by_line: int = 0
    """Recorded rows without an ``id``, named ``line-<n>`` by their line."""

    evaluators: list[EvaluatorEntry]
    """The evaluators, in report order."""

    slices: list[str]
    """The slices the metrics are broken down by."""

    min_slice_support: int
    """Slice values observed on fewer cases are listed, not scored."""

    confidence: float
    """The intervals' confidence level."""

    cache: RunCache
    """Cache hits and misses."""

    judges: list[JudgeUsage] = Field(default_factory=list)
    """LLM judge calls per provider and model; empty without LLM judges."""

    variant: RunVariant
    """How the run departed from a plain run."""

    parent: RunParent | None = None
    """What a child run was run for; ``None`` for a top-level run."""

    sweep: RunSweep | None = Field(default=None, exclude_if=lambda value: value is None)
    """The sweep and setting a ``sweep_child`` run answered; written only for those."""

    repeats: int = Field(default=1, ge=1, exclude_if=lambda value: value == 1)
    """Generations of each case (samples of a stochastic system); written when more than one."""

    judge_repeats: int = Field(default=1, ge=1, exclude_if=lambda value: value == 1)
    """Calls of each LLM judge per output; written when more than one."""

    retrieve_repeats: bool = Field(default=False, exclude_if=lambda value: value is False)
    """Whether each repeat retrieved afresh; written only then."""

    @model_validator(mode="before")
    @classmethod
    def _kind_of_older_manifests(cls, data: Any) -> Any:
        # Manifests written before runs recorded their kind still read.
        if isinstance(data, Mapping) and "kind" not in data:
            return {**data, "kind": stored_run_kind(data)}
        return data

    @field_serializer("created_at", "finished_at")
    def _iso(self, value: datetime) -> str:
        return value.isoformat()
