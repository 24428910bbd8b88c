"""The evaluator contract and its registry.

An evaluator reads a few fields of an executed case and returns a `Verdict`.
It declares those fields by extracting them (`Evaluator.read`) before judging
(`Evaluator.judge`), so the judgment identity covers exactly what was read and
an unchanged output is never judged twice.

It also declares what it produces (`Evaluator.outputs`): each criterion's kind,
range, direction and threshold. A verdict carries the raw score; pass/fail is
derived from the output's threshold when rows are made, so a changed threshold
re-derives every verdict from the cached scores without a single new call.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, JsonValue
from typing_extensions import TypedDict

from oloproof._exceptions import TranscriptError
from oloproof._json import content_hash
from oloproof.evaluators._agent import NO_CONTEXT_TOOL_RESULTS, extract_agent_response, is_messages
from oloproof.evaluators._fields import MISSING, get_field
from oloproof.evaluators._mapping import Template, parse_template, sample_of
from oloproof.transcripts import ContextTool, Extraction

if TYPE_CHECKING:
    from oloproof.providers import ProviderPool

__all__ = [
    "MISSING",
    "UNMAPPED",
    "CaseView",
    "Evaluator",
    "EvaluatorOptions",
    "EvaluatorSpec",
    "JudgeCall",
    "JudgeContext",
    "OptionError",
    "Output",
    "Verdict",
    "evaluator",
    "registered_evaluators",
    "spec_options",
]

E = TypeVar("E", bound="type[Evaluator]")
F = TypeVar("F")
"""What an evaluator reads of a case (`Evaluator.read`) and judges (`Evaluator.judge`)."""

EvaluatorSpec = dict[str, JsonValue]
"""An evaluator's spec or identity: the JSON document that is hashed and stored."""

UNMAPPED = object()
"""`Evaluator.mapped`'s answer for an input no ``data_mapping`` names."""

_REGISTRY: dict[str, type[Evaluator]] = {}

OutputKind = Literal["pass_fail", "score", "count"]
MetricKind = Literal["proportion", "mean", "count"]


class OptionError(Exception):
    """An option fails a check that needs the project (raised by `Evaluator.configure`).

    Args:
        message: What is wrong.
        option: The option's name; the error is reported at its line.
    """

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.message = message
        self.option = option


class EvaluatorOptions(BaseModel):
    """Options shared by every evaluator entry in ``oloproof.yaml``."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    type: str
    """The registered evaluator type, e.g. ``contains``."""

    criterion: str | None = None
    """The name the metric is reported under; each type has a default."""

    # As the YAML gives it: parse_template reports a value that is not a template.
    data_mapping: dict[str, object] | None = None
    """Where each input comes from, as templates: ``{"query": "{{item.query}}"}``
    (``item``: the dataset row; ``sample``: what the system produced). Inputs it does
    not name are read as the evaluator reads them by default."""


@dataclass(frozen=True)
class Output:
    """One criterion an evaluator produces, and how its scores become verdicts."""

    criterion: str
    """The metric name it is reported under."""
    kind: OutputKind
    """``pass_fail`` (a score of 1 or 0), ``score`` (a number in ``[low, high]``) or
    ``count`` (a non-negative number of things, e.g. unlabelled documents)."""
    low: float | None = None
    """The lowest score (``score`` outputs)."""
    high: float | None = None
    """The highest score (``score`` outputs)."""
    higher_is_better: bool = True
    """The direction: whether a higher score is a better one."""
    threshold: float | None = None
    """A score passes at or beyond it (``score`` outputs); ``None``: not pass/fail."""

    @property
    def metric_kind(self) -> MetricKind:
        """How the criterion is summarized: a share of passes, a mean in [0, 1], or a count."""
        if self.kind == "pass_fail" or self.threshold is not None:
            return "proportion"
        return "count" if self.kind == "count" else "mean"

    def verdict_of(self, score: float | None, passed: bool | None = None) -> tuple[float | None, bool | None, str | None]:
        """``(value, passed, label)`` of a raw score.

        ``value`` is what metrics average: 1.0/0.0 for pass/fail criteria, the score
        scaled to [0, 1] for other scores, the count itself for counts.
        """
        if score is None:
            return None, None, None
        if self.kind == "pass_fail":
            ok = bool(score >= 1.0) if passed is None else passed
            return (1.0 if ok else 0.0), ok, "pass" if ok else "fail"
        if self.threshold is not None:
            ok = score >= self.threshold if self.higher_is_better else score <= self.threshold
            return (1.0 if ok else 0.0), ok, "pass" if ok else "fail"
        if self.kind == "count":
            return float(score), None, None
        low, high = self.low if self.low is not None else 0.0, self.high if self.high is not None else 1.0
        value = (score - low) / (high - low) if high > low else 0.0
        return value, None, None


@dataclass(frozen=True)
class CaseView:
    """What an evaluator may read of one executed case.

    ``context`` is the assembled context the generator saw and ``candidates`` the
    retrieval in the retriever's order; both are ``None`` for plain systems.
    """

    case_id: str
    """The case's id in the dataset."""
    input: Any
    """The case's input, as the system received it."""
    expected: dict[str, JsonValue]
    """What the case expects (``expected`` of the dataset line, without empty keys)."""
    metadata: dict[str, JsonValue]
    """The case's free-form metadata."""
    output: Any
    """What the system produced."""
    context: list[dict[str, JsonValue]] | None = None
    """The passages kept in the context, in order (JSON objects with ``doc_id``,
    ``chunk_id``, ``text`` ...)."""
    candidates: list[dict[str, JsonValue]] | None = None
    """The retrieved candidates, in the retriever's order."""
    item: Any = None
    """The dataset row as written (``{{item.…}}``): a recorded row itself, or a
    case's ``id``, ``input``, ``expected`` and ``metadata``."""
    recorded: bool = False
    """Whether the row is recorded data: no system ran, so there is no ``sample``
    and every input defaults to the row's field of the same name."""
    output_items: list[JsonValue] | None = None
    """A live agent's transcript (``{{sample.output_items}}``), in the vendor's agent
    message format: the user's input, each tool call and its result, the final
    answer; ``None`` for systems that are not agents."""


class JudgeCall(TypedDict, total=False):
    """The accounting of a judge's call, as judgment rows record it.

    Attributes:
        provider: The provider's configured name.
        provider_type: ``openai``, ``azure_openai``, ``anthropic`` ...
        model: The judge model.
        prompt_hash: Hash of the prompt file the judge used.
        mode: How the structured reply was asked for.
        input_tokens: Prompt tokens, re-asks and retries included.
        output_tokens: Reply tokens.
        latency_ms: Wall time of the call, retries and waits included.
        retries: How many times the call was retried.
        finish_reason: The provider's finish reason of the last reply.
        cost_usd: The call's cost from the provider's configured prices.
        raw_reply: The raw reply, kept when it could not be used.
        requests: Requests the call sent, retries and re-asks included: this run's
            accounting, taken out of the record before it is cached.
    """

    provider: str | None
    provider_type: str | None
    model: str | None
    prompt_hash: str | None
    mode: str | None
    input_tokens: int | None
    output_tokens: int | None
    latency_ms: float | None
    retries: int | None
    finish_reason: str | None
    cost_usd: float | None
    raw_reply: str | None
    requests: int


@dataclass(frozen=True)
class Verdict:
    """The result of judging one case: a raw score, a skip, or an error.

    Errors are never cached: the case is *missing* for the criterion in this run
    and judged again by the next.
    """

    status: Literal["observed", "excluded", "error"] = "observed"
    """``observed`` (scored), ``excluded`` (nothing to judge) or ``error`` (the judge failed)."""
    score: float | None = None
    """The raw score on the output's scale (1.0/0.0 for pass/fail outputs)."""
    passed: bool | None = None
    """Set only by evaluators that decide pass/fail themselves; derived otherwise."""
    reason: str | None = None
    """The evaluator's reason, or why the case was skipped or failed."""
    # Any JSON the evaluator chooses: stored as the judgment row's ``detail`` as it is.
    detail: dict[str, object] = field(default_factory=dict)
    """What the evaluator reports besides the score."""
    call: JudgeCall | None = None
    """The judge call's accounting (provider, model, tokens, retries, raw reply on error)."""
    scores: dict[str, float] | None = None
    """One raw score per output criterion, for evaluators with several outputs."""

    @classmethod
    def of_pass(cls, passed: bool, reason: str | None = None, **detail: Any) -> Verdict:
        return cls(score=1.0 if passed else 0.0, passed=passed, reason=reason, detail=detail)

    @classmethod
    def excluded(cls, reason: str) -> Verdict:
        return cls(status="excluded", reason=reason)

    @classmethod
    def error(cls, reason: str, call: JudgeCall | None = None) -> Verdict:
        return cls(status="error", reason=reason, call=call)


@dataclass(frozen=True)
class JudgeContext:
    """What the engine opens once per run for evaluators that call out.

    The provider pool creates its clients and limiters lazily, on the loop the
    judge calls run on; the engine closes it when the run ends.
    """

    providers: ProviderPool | None = None
    """The run's providers (``None`` when no provider is configured)."""


class Evaluator(ABC, Generic[F]):
    """Base class of every evaluator; subclasses register with ``@evaluator``.

    ``F`` is what `read` extracts and `judge` takes: a JSON object (usually a
    ``TypedDict``), hashed into the judgment identity as it is.
    """

    type_name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    options_model: ClassVar[type[EvaluatorOptions]] = EvaluatorOptions
    output_kind: ClassVar[OutputKind] = "pass_fail"
    """The kind of the single output of evaluators that do not override `outputs`."""
    is_llm_judge: ClassVar[bool] = False
    inputs: ClassVar[tuple[str, ...]] = ()
    """The inputs a ``data_mapping`` may name (the catalogue's names: ``query``,
    ``context``, ``response`` …)."""
    required_inputs: ClassVar[tuple[str, ...]] = ()
    """The inputs without which a row is excluded (``missing_field:<name>``)."""
    verdict_options: ClassVar[tuple[str, ...]] = ()
    """Options that only turn scores into verdicts (a threshold): left out of the
    judgment identity, so changing them never calls the judge again."""
    reads_output: ClassVar[bool] = True
    """Whether it reads what the system generated; a retrieval-only run (``--stages
    retrieve``) keeps only the evaluators that do not."""
    context_tools: tuple[ContextTool, ...] = ()
    """The tools besides ``file_search`` whose results are an agent's context (the
    project's ``context_tools`` and a live agent's declared ones); set when built."""

    @property
    def needs_retrieval(self) -> bool:
        """True when the evaluator reads the retrieval or context (RAG systems only).

        A subclass sets it as a class attribute, or overrides the property when
        its options decide.
        """
        return False

    def __init__(self, options: EvaluatorOptions) -> None:
        self.options = options
        self.mapping: dict[str, Template] = {}
        for key, value in (options.data_mapping or {}).items():
            if key not in self.inputs:
                takes = ", ".join(self.inputs) or "no mapped inputs"
                raise OptionError(f"{self.type_name} has no input {key!r} (takes: {takes})", f"data_mapping.{key}")
            try:
                self.mapping[key] = parse_template(value)
            except ValueError as error:
                raise OptionError(str(error), f"data_mapping.{key}") from None

    def mapped(self, case: CaseView, name: str) -> Any:
        """Input ``name`` as ``data_mapping`` (or, for recorded data, the row) gives it.

        Returns:
            The value; ``MISSING`` when the row (or sample) lacks a referenced
            field; ``UNMAPPED`` when no mapping names the input and the evaluator
            reads it its own way.
        """
        template = self.mapping.get(name)
        if template is None:
            return get_field(case.item, name) if case.recorded else UNMAPPED
        sample = None if case.recorded else sample_of(
            case.output, getattr(self.options, "response_field", None), case.context, case.candidates,
            case.output_items,
        )
        return template.render(case.item, sample)

    def agent_response(self, case: CaseView) -> Extraction | Verdict | None:
        """The case's ``response`` input read as an agent's transcript (agent-response mode).

        Returns:
            The judged response and the context tools' results when the input is a
            message list (a mapped ``{{sample.output_items}}`` or ``{{item.response}}``,
            or a recorded row's ``response``); ``None`` when it is not one, or when no
            mapping names it (a live agent's context is then its run's); an excluded
            verdict when the messages are malformed.
        """
        if "response" not in self.inputs:
            return None
        value = self.mapped(case, "response")
        if value is UNMAPPED or not is_messages(value):
            return None
        try:
            return extract_agent_response(value, self.context_tools)
        except TranscriptError as error:
            return Verdict.excluded(f"invalid_field:response: {error}")

    def extracted(self, case: CaseView, value: Any) -> Extraction | Verdict | None:
        """An input's value (as mapped) taken from the agent's transcript instead.

        When ``value`` is not given (no mapping, or a recorded row without the field)
        and the response is a transcript: its extraction, or the verdict excluding a
        transcript without context tool results; ``None`` otherwise.
        """
        if not (value is UNMAPPED or (case.recorded and value is MISSING)):
            return None
        agent = self.agent_response(case)
        if isinstance(agent, Extraction) and agent.not_applicable is not None:
            return Verdict.excluded(NO_CONTEXT_TOOL_RESULTS)
        return agent

    @property
    def criterion(self) -> str:
        """The evaluator's name: the reported metric of a single-output evaluator."""
        return self.options.criterion or self.default_criterion()

    def default_criterion(self) -> str:
        return self.type_name

    def outputs(self) -> tuple[Output, ...]:
        """The criteria this evaluator produces (one, unless overridden)."""
        if self.output_kind == "score":
            return (Output(self.criterion, "score", low=0.0, high=1.0),)
        return (Output(self.criterion, self.output_kind),)

    @property
    def output(self) -> Output:
        """The first (for most evaluators, the only) output."""
        return self.outputs()[0]

    @property
    def kind(self) -> MetricKind:
        """How the (first) output is summarized."""
        return self.output.metric_kind

    def spec(self) -> EvaluatorSpec:
        """The full spec: type, version and every option."""
        options: dict[str, JsonValue] = self.options.model_dump(mode="json")
        if options.get("data_mapping") is None:  # absent: specs (and identities) as before mappings existed
            options.pop("data_mapping", None)
        return {"type": self.type_name, "version": self.version, "options": options}

    @functools.cached_property
    def spec_hash(self) -> str:
        """Hash of `spec`, as judgment rows and the run manifest carry it (options are
        frozen, so it is computed once, not once per case)."""
        return content_hash(self.spec())

    def identity(self) -> EvaluatorSpec:
        """What determines a judgment: the spec less `verdict_options`."""
        spec = self.spec()
        options = {k: v for k, v in spec_options(spec).items() if k not in self.verdict_options}
        return {**spec, "options": options}

    def providers(self) -> tuple[str, ...]:
        """Names of the providers this evaluator calls (LLM judges)."""
        return ()

    def judge_identity(self) -> EvaluatorSpec | None:
        """What a validation against human labels is keyed by; ``None`` for evaluators
        that are not LLM judges.

        The judgment identity less the criterion's name, so renaming a criterion keeps
        its validation; judges add what else decides a verdict (the prompt's text, the
        threshold). Called after `configure`.
        """
        if not self.is_llm_judge:
            return None
        identity = self.identity()
        return {**identity, "options": {k: v for k, v in spec_options(identity).items() if k != "criterion"}}

    def configure(self, *, providers: Mapping[str, Any], directory: Path | None) -> None:
        """Check and bind what the options name in the project: providers, prompt files.

        Raises:
            OptionError: An option names something the project does not have.
        """

    def check_case(self, case: CaseView) -> None:
        """Check a row's own inputs before anything runs or is written.

        Called for every case of a run with ``output`` unset; an evaluator checks
        what it reads from the row itself (for recorded data, every input).

        Raises:
            DatasetError: An input is invalid; ``field`` names it (the engine adds
                the file and line).
        """

    @abstractmethod
    def read(self, case: CaseView) -> F | Verdict:
        """Extract exactly the fields this evaluator judges, or an exclusion."""

    @abstractmethod
    def judge(self, fields: F, ctx: JudgeContext) -> Verdict | Awaitable[Verdict]:
        """Judge the extracted fields (may be ``async``)."""

    def judge_many(self, fields: list[F], ctx: JudgeContext) -> list[Verdict] | None:
        """Judge many cases' fields in one call (batch kernels), or ``None`` when the
        evaluator judges case by case. Each verdict must equal `judge`'s."""
        return None

    @property
    def judges_many(self) -> bool:
        """Whether `judge_many` is overridden (the engine then batches the cache misses)."""
        return type(self).judge_many is not Evaluator.judge_many

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.judge)


def spec_options(spec: EvaluatorSpec) -> dict[str, JsonValue]:
    """The ``options`` object of a spec or identity."""
    options = spec.get("options")
    return options if isinstance(options, dict) else {}


def evaluator(name: str) -> Callable[[E], E]:
    """Register an `Evaluator` subclass under ``name`` (the ``type:`` in YAML)."""

    def register(cls: E) -> E:
        cls.type_name = name
        _REGISTRY[name] = cls
        return cls

    return register


def registered_evaluators() -> dict[str, type[Evaluator]]:
    """Return the registered evaluator types by name."""
    return dict(sorted(_REGISTRY.items()))
