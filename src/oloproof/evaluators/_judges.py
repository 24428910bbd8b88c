"""LLM judges: a 1-5 score and a reason from a provider, per case.

Each judge reads a few texts of the case (the query, the answer, the assembled
context the generator saw, the expected answer), renders its versioned prompt
with them and asks its provider for a structured reply. The score is stored as
it is; pass/fail is derived from ``threshold`` when rows are made, so a new
threshold re-derives every verdict without a call. The judgment identity is the
prompt's hash, the provider type, the model, the sampling settings and the
texts read: never the provider's local name, the threshold or the criterion.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, JsonValue
from typing_extensions import TypedDict

from oloproof._exceptions import DatasetError, TranscriptError
from oloproof.evaluators._agent import (
    absent_context,
    check_messages,
    conversation_text,
    extract_agent_response,
    is_messages,
    passages_of,
)
from oloproof.evaluators._base import (
    MISSING,
    UNMAPPED,
    CaseView,
    Evaluator,
    EvaluatorOptions,
    EvaluatorSpec,
    JudgeCall,
    JudgeContext,
    OptionError,
    Output,
    Verdict,
    evaluator,
    spec_options,
)
from oloproof.evaluators._fields import get_field, query_text, text_field
from oloproof.evaluators._passages import context_text, input_text
from oloproof.evaluators._prompts import Prompt, load_prompt, packaged_prompt

if TYPE_CHECKING:
    from oloproof.providers import JudgeCall as ProviderCall

__all__ = [
    "Groundedness",
    "GroundednessJudge",
    "JudgeFields",
    "JudgeOptions",
    "LLMJudge",
    "Relevance",
    "ResponseCompleteness",
    "Retrieval",
    "call_record",
]

SCORE_LOW, SCORE_HIGH = 1, 5

SCORE_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": SCORE_LOW, "maximum": SCORE_HIGH},
        "reason": {"type": "string"},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}


class JudgeFields(TypedDict, total=False):
    """What an LLM judge reads: the texts its prompt shows, and the prompt's hash.

    Attributes:
        prompt: Hash of the prompt the texts are judged with.
        query: The query; ``None`` when the case has none.
        context: The context as the prompt shows it.
        response: The answer.
        ground_truth: The reference answer.
        cited: The ids the answer cites (``citation_support_judge``).
        passages: The cited passages of the context, by id (``citation_support_judge``).
        citations: The cited passages as the prompt shows them (set when judging).
    """

    prompt: str
    query: str | None
    context: str
    response: str | None
    ground_truth: str | None
    cited: list[str]
    passages: dict[str, str]
    citations: str


class JudgeOptions(EvaluatorOptions):
    """Options of every LLM judge."""

    provider: str
    """The name of an entry of ``providers:``."""

    model: str
    """The judge model (for Azure OpenAI, the deployment)."""

    threshold: float | None = Field(default=3.0, strict=True, allow_inf_nan=False)
    """A score at or above it passes (1-5 judges; ``null`` reports the mean score)."""

    temperature: float = Field(default=0.0, strict=True, ge=0.0, le=2.0, allow_inf_nan=False)
    """Sampling temperature of the judge model."""

    max_tokens: int = Field(strict=True, default=800, ge=16, le=32_000)
    """The most tokens the judge may reply with; a longer reply is an error, never guessed."""

    prompt: str | None = None
    """A prompt file of the project's own, replacing the packaged one."""

    query_field: str | None = "question"
    """Dotted path of the query in the case input (``null``: the input itself)."""

    response_field: str | None = "answer"
    """Dotted path of the answer in the output (``null``: the output itself)."""


def call_record(call: ProviderCall, prompt_hash: str) -> JudgeCall:
    """The accounting of a provider call, as judgments record it."""
    return {
        "provider": call.provider,
        "provider_type": call.provider_type,
        "model": call.model,
        "prompt_hash": prompt_hash,
        "mode": call.mode,
        "input_tokens": call.input_tokens,
        "output_tokens": call.output_tokens,
        "latency_ms": call.latency_ms,
        "retries": call.retries,
        "finish_reason": call.finish_reason,
        "cost_usd": call.cost_usd,
        "raw_reply": None if call.ok else call.raw,
        "requests": call.requests,  # the run's accounting: taken out before the record is cached
    }


class LLMJudge(Evaluator[JudgeFields]):
    """Base of the judges that score 1-5 with a provider."""

    options_model: ClassVar[type[EvaluatorOptions]] = JudgeOptions
    options: JudgeOptions
    is_llm_judge = True
    output_kind = "score"
    verdict_options = ("threshold",)
    prompt_name: ClassVar[str] = ""
    reads: ClassVar[tuple[str, ...]] = ()
    """The fields its prompt may use."""
    schema: ClassVar[dict[str, JsonValue]] = SCORE_SCHEMA
    provider_type: str = ""

    def __init__(self, options: EvaluatorOptions) -> None:
        super().__init__(options)
        self.prompts: dict[str, Prompt] = {}

    def configure(self, *, providers: Any, directory: Path | None) -> None:
        name = self.options.provider
        if name not in providers:
            configured = ", ".join(sorted(providers)) or "none"
            raise OptionError(f"no provider named {name!r} (configured: {configured})", "provider")
        self.provider_type = providers[name].type
        threshold = self.options.threshold
        low, high = self.output.low, self.output.high
        if threshold is not None and low is not None and high is not None and not low <= threshold <= high:
            raise OptionError(f"threshold {threshold:g} is outside the score range {low:g}-{high:g}", "threshold")
        self.prompts = self.load_prompts(directory)

    def load_prompts(self, directory: Path | None) -> dict[str, Prompt]:
        if self.options.prompt is not None:
            return {"default": load_prompt(self.options.prompt, directory, allowed=self.reads)}
        return {"default": packaged_prompt(self.prompt_name, allowed=self.reads)}

    def outputs(self) -> tuple[Output, ...]:
        return (Output(self.criterion, "score", low=SCORE_LOW, high=SCORE_HIGH, threshold=self.options.threshold),)

    def providers(self) -> tuple[str, ...]:
        return (self.options.provider,)

    def identity(self) -> EvaluatorSpec:
        identity = super().identity()
        options = {k: v for k, v in spec_options(identity).items() if k not in ("provider", "criterion", "prompt")}
        return {**identity, "options": options, "provider_type": self.provider_type}

    def judge_identity(self) -> EvaluatorSpec | None:
        # The prompts' hashes, not their file names: editing the prompt invalidates a
        # validation, moving the file does not. The threshold turns scores into the
        # verdicts that were validated.
        return {**self.identity(), "prompts": {name: p.sha256 for name, p in sorted(self.prompts.items())},
                "threshold": self.options.threshold}

    # -- reading --------------------------------------------------------------------

    def query_of(self, case: CaseView) -> str | None:
        return query_text(case.input, self.options.query_field)

    def response_of(self, case: CaseView) -> str | None:
        return text_field(case.output, self.options.response_field)

    def staged(self, case: CaseView, name: str) -> Any:
        """Input ``name`` of a system's case, read the judge's own way (``MISSING`` if absent)."""
        found = {"query": self.query_of, "response": self.response_of}[name](case)
        return MISSING if found is None else found

    def text_of(self, case: CaseView, name: str) -> str | None | Verdict:
        """Input ``name`` as text; ``None`` when absent (a verdict when it is required).

        A ``query`` or ``response`` given as a message list is read in agent-response
        mode: the query's conversation, the response's final assistant text.
        """
        value = self.mapped(case, name)
        if value is UNMAPPED:
            value = self.staged(case, name)
        if value is MISSING or value is None:
            return Verdict.excluded(f"missing_field:{name}") if name in self.required_inputs else None
        if is_messages(value) and name not in ("query", "response"):
            return Verdict.excluded(f"invalid_field:{name}: expected text, got a list of messages")
        if is_messages(value):
            try:
                if name == "query":
                    return conversation_text(value)
                return extract_agent_response(value, self.context_tools).response
            except TranscriptError as error:
                return Verdict.excluded(f"invalid_field:{name}: {error}")
        return input_text(value)

    def context_of(self, case: CaseView, staged: Any, first: int | None = None) -> str | Verdict:
        """The context as the prompt shows it: mapped text or chunks, else an agent
        response's context tool results, else ``staged`` (the passages a system's case
        holds, ``None`` when it has none); ``first`` keeps that many passages."""
        value = self.mapped(case, "context")
        agent = self.extracted(case, value)
        if isinstance(agent, Verdict):
            return agent
        if agent is not None:
            value = passages_of(agent)[:first]
        elif value is UNMAPPED:
            if staged is None:
                # A live agent that called no context tool retrieved nothing to judge against.
                return Verdict.excluded(absent_context(case.output_items, "no_context"))
            value = staged
        if value is MISSING or value is None:
            return Verdict.excluded("missing_field:context")
        if not value or (isinstance(value, str) and not value.strip()):
            return Verdict.excluded("not_applicable:empty_context")
        try:
            return context_text(value)
        except ValueError as error:
            return Verdict.excluded(f"invalid_field:context: {error}")

    def check_case(self, case: CaseView) -> None:
        for name in self.inputs:
            if name in ("query", "response"):
                check_messages(self.mapped(case, name), self._field(name), self.context_tools, query=name == "query")
            elif name != "context" and is_messages(self.mapped(case, name)):
                raise DatasetError("expected text, got a list of messages (only query and response are read as "
                                   "an agent's messages)", field=self._field(name))  # fmt: skip
        if "context" not in self.inputs:
            return
        value = self.mapped(case, "context")
        if value is UNMAPPED or value is MISSING or value is None:
            return
        try:
            context_text(value)
        except ValueError as error:
            raise DatasetError(str(error), field=self._field("context")) from None

    def _field(self, name: str) -> str:
        template = self.mapping.get(name)
        if template is not None and len(template.references) == 1:
            return template.references[0].path or name
        return name

    def prompt_for(self, fields: JudgeFields) -> Prompt:
        return self.prompts["default"]

    def with_prompt(self, fields: JudgeFields) -> JudgeFields:
        # The prompt's hash is part of what was judged (and first in the fields).
        return {"prompt": self.prompt_for(fields).sha256, **fields}

    # -- judging --------------------------------------------------------------------

    async def judge(self, fields: JudgeFields, ctx: JudgeContext) -> Verdict:
        from oloproof.providers import JudgeRequest

        prompt = self.prompt_for(fields)
        system, user = prompt.render(fields)
        request = JudgeRequest(
            system=system, user=user, schema=self.schema, schema_name=f"{self.type_name}_verdict",
            model=self.options.model, max_tokens=self.options.max_tokens,
            temperature=self.options.temperature,
        )  # fmt: skip
        if ctx.providers is None:  # configure() checked the name: only a misuse gets here
            raise RuntimeError("no provider pool in the judge context")
        call = await ctx.providers.judge(self.options.provider, request)
        record = call_record(call, prompt.sha256)
        if not call.ok:
            return Verdict.error(call.error or "judge error", call=record)
        return self.verdict_of(call.data or {}, record, fields)

    def verdict_of(self, data: Mapping[str, Any], record: JudgeCall, fields: JudgeFields) -> Verdict:
        """The verdict of a reply: ``data`` is the provider's parsed JSON, which the
        schema shapes."""
        return Verdict(score=float(data["score"]), reason=str(data.get("reason") or ""), call=record)


@evaluator("groundedness")
class Groundedness(LLMJudge):
    """Is the answer supported by the context it was given (precision)? 1-5.

    Judged with the query when the case has one, without it otherwise.
    """

    needs_retrieval = True
    prompt_name = "groundedness_v1"
    reads = inputs = ("query", "context", "response")
    required_inputs = ("context", "response")

    def load_prompts(self, directory: Path | None) -> dict[str, Prompt]:
        prompts = super().load_prompts(directory)
        if self.options.prompt is None:
            prompts["no_query"] = packaged_prompt("groundedness_noquery_v1", allowed=self.reads)
        return prompts

    def prompt_for(self, fields: JudgeFields) -> Prompt:
        if fields.get("query") is None and "no_query" in self.prompts:
            return self.prompts["no_query"]
        return self.prompts["default"]

    def read(self, case: CaseView) -> JudgeFields | Verdict:
        context = self.context_of(case, case.context)
        if isinstance(context, Verdict):
            return context
        response = self.text_of(case, "response")
        if isinstance(response, Verdict):
            return response
        query = self.text_of(case, "query")
        if isinstance(query, Verdict):
            return query
        return self.with_prompt({"query": query, "context": context, "response": response})


@evaluator("groundedness_judge")
class GroundednessJudge(Groundedness):
    """Groundedness of the answer in the assembled context the generator saw."""


@evaluator("relevance")
class Relevance(LLMJudge):
    """Does the answer address the query? 1-5, without ground truth."""

    prompt_name = "relevance_v1"
    reads = inputs = required_inputs = ("query", "response")

    def read(self, case: CaseView) -> JudgeFields | Verdict:
        query = self.text_of(case, "query")
        if isinstance(query, Verdict):
            return query
        response = self.text_of(case, "response")
        if isinstance(response, Verdict):
            return response
        return self.with_prompt({"query": query, "response": response})


class RetrievalJudgeOptions(JudgeOptions):
    """Options of the ``retrieval`` judge."""

    k: int | None = Field(strict=True, default=None, ge=1)
    """Judge the first ``k`` retrieved candidates (``null``: all of them)."""


@evaluator("retrieval")
class Retrieval(LLMJudge):
    """Are the retrieved chunks relevant to the query? 1-5, without labels."""

    options_model = RetrievalJudgeOptions
    options: RetrievalJudgeOptions
    needs_retrieval = True
    prompt_name = "retrieval_v1"
    reads = required_inputs = ("query", "context")
    inputs = ("query", "context", "response")
    """``response``: an agent's transcript, whose context tools' results are judged."""

    def read(self, case: CaseView) -> JudgeFields | Verdict:
        agent = self.agent_response(case) if "context" not in self.mapping else None
        if isinstance(agent, Verdict):
            return agent
        if agent is None and "context" not in self.mapping and not case.recorded:
            if case.candidates is None:
                return Verdict.excluded(absent_context(case.output_items, "no_retrieval"))
            if not case.candidates:
                return Verdict.excluded("not_applicable:empty_retrieval")
        candidates = case.candidates
        if candidates is not None and self.options.k:
            candidates = candidates[: self.options.k]
        context = self.context_of(case, candidates, self.options.k)
        if isinstance(context, Verdict):
            return context
        query = self.text_of(case, "query")
        if isinstance(query, Verdict):
            return query
        return self.with_prompt({"query": query, "context": context})


class CompletenessOptions(JudgeOptions):
    """Options of the ``response_completeness`` judge."""

    ground_truth_field: str = "answer"
    """Dotted path of the reference answer in ``expected``."""


@evaluator("response_completeness")
class ResponseCompleteness(LLMJudge):
    """Does the answer cover the reference answer's facts (recall)? 1-5."""

    options_model = CompletenessOptions
    options: CompletenessOptions
    prompt_name = "response_completeness_v1"
    reads = inputs = required_inputs = ("ground_truth", "response")

    def staged(self, case: CaseView, name: str) -> Any:
        if name != "ground_truth":
            return super().staged(case, name)
        return get_field(case.expected, self.options.ground_truth_field)

    def read(self, case: CaseView) -> JudgeFields | Verdict:
        truth = self.text_of(case, "ground_truth")
        if isinstance(truth, Verdict):
            return truth
        response = self.text_of(case, "response")
        if isinstance(response, Verdict):
            return response
        return self.with_prompt({"ground_truth": truth, "response": response})
