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

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from oloproof.evaluators._base import (
    CaseView,
    Evaluator,
    EvaluatorOptions,
    JudgeContext,
    OptionError,
    Output,
    Verdict,
    evaluator,
)
from oloproof.evaluators._fields import get_field, query_text, text_field
from oloproof.evaluators._passages import render_passages
from oloproof.evaluators._prompts import Prompt, load_prompt, packaged_prompt

__all__ = [
    "Groundedness",
    "GroundednessJudge",
    "JudgeOptions",
    "LLMJudge",
    "Relevance",
    "ResponseCompleteness",
    "Retrieval",
    "call_record",
]

SCORE_LOW, SCORE_HIGH = 1, 5

SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": SCORE_LOW, "maximum": SCORE_HIGH},
        "reason": {"type": "string"},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}


class JudgeOptions(EvaluatorOptions):
    """Options of every LLM judge."""

    provider: str
    """The name of an entry of ``providers:``."""

    model: str
    """The judge model (for Azure OpenAI, the deployment)."""

    threshold: float | None = Field(default=3.0, allow_inf_nan=False)
    """A score at or above it passes (1-5 judges; ``null`` reports the mean score)."""

    temperature: float = Field(default=0.0, ge=0.0, le=2.0, allow_inf_nan=False)
    """Sampling temperature of the judge model."""

    max_tokens: int = Field(default=800, ge=16, le=32_000)
    """The most tokens the judge may reply with; a longer reply is an error, never guessed."""

    prompt: str | None = None
    """A prompt file of the project's own, replacing the packaged one."""

    query_field: str | None = "question"
    """Dotted path of the query in the case input (``null``: the input itself)."""

    response_field: str | None = "answer"
    """Dotted path of the answer in the output (``null``: the output itself)."""


def call_record(call: Any, prompt_hash: str) -> dict[str, Any]:
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
    }


class LLMJudge(Evaluator):
    """Base of the judges that score 1-5 with a provider."""

    options_model: ClassVar[type[EvaluatorOptions]] = JudgeOptions
    options: JudgeOptions
    is_llm_judge = True
    output_kind = "score"
    verdict_options = ("threshold",)
    prompt_name: ClassVar[str] = ""
    reads: ClassVar[tuple[str, ...]] = ()
    """The fields its prompt may use."""
    schema: ClassVar[dict[str, Any]] = SCORE_SCHEMA
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

    def identity(self) -> dict[str, Any]:
        identity = super().identity()
        options = {k: v for k, v in identity["options"].items() if k not in ("provider", "criterion", "prompt")}
        return {**identity, "options": options, "provider_type": self.provider_type}

    # -- reading --------------------------------------------------------------------

    def query_of(self, case: CaseView) -> str | None:
        return query_text(case.input, self.options.query_field)

    def response_of(self, case: CaseView) -> str | None:
        return text_field(case.output, self.options.response_field)

    def prompt_for(self, fields: dict[str, Any]) -> Prompt:
        return self.prompts["default"]

    def with_prompt(self, fields: dict[str, Any]) -> dict[str, Any]:
        # The prompt's hash is part of what was judged.
        return {"prompt": self.prompt_for(fields).sha256, **fields}

    # -- judging --------------------------------------------------------------------

    async def judge(self, fields: dict[str, Any], ctx: JudgeContext) -> Verdict:
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

    def verdict_of(self, data: dict[str, Any], record: dict[str, Any], fields: dict[str, Any]) -> Verdict:
        return Verdict(score=float(data["score"]), reason=str(data.get("reason") or ""), call=record)


@evaluator("groundedness")
class Groundedness(LLMJudge):
    """Is the answer supported by the context it was given (precision)? 1-5.

    Judged with the query when the case has one, without it otherwise.
    """

    needs_retrieval = True
    prompt_name = "groundedness_v1"
    reads = ("query", "context", "response")

    def load_prompts(self, directory: Path | None) -> dict[str, Prompt]:
        prompts = super().load_prompts(directory)
        if self.options.prompt is None:
            prompts["no_query"] = packaged_prompt("groundedness_noquery_v1", allowed=self.reads)
        return prompts

    def prompt_for(self, fields: dict[str, Any]) -> Prompt:
        if fields.get("query") is None and "no_query" in self.prompts:
            return self.prompts["no_query"]
        return self.prompts["default"]

    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        context = case.context
        if context is None:
            return Verdict.excluded("no_context")
        if not context:
            return Verdict.excluded("not_applicable:empty_context")
        response = self.response_of(case)
        if response is None:
            return Verdict.excluded("missing_field:response")
        return self.with_prompt(
            {"query": self.query_of(case), "context": render_passages(context), "response": response}
        )


@evaluator("groundedness_judge")
class GroundednessJudge(Groundedness):
    """Groundedness of the answer in the assembled context the generator saw."""


@evaluator("relevance")
class Relevance(LLMJudge):
    """Does the answer address the query? 1-5, without ground truth."""

    prompt_name = "relevance_v1"
    reads = ("query", "response")

    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        query, response = self.query_of(case), self.response_of(case)
        if query is None:
            return Verdict.excluded("missing_field:query")
        if response is None:
            return Verdict.excluded("missing_field:response")
        return self.with_prompt({"query": query, "response": response})


class RetrievalJudgeOptions(JudgeOptions):
    """Options of the ``retrieval`` judge."""

    k: int | None = Field(default=None, ge=1)
    """Judge the first ``k`` retrieved candidates (``null``: all of them)."""


@evaluator("retrieval")
class Retrieval(LLMJudge):
    """Are the retrieved chunks relevant to the query? 1-5, without labels."""

    options_model = RetrievalJudgeOptions
    options: RetrievalJudgeOptions
    needs_retrieval = True
    prompt_name = "retrieval_v1"
    reads = ("query", "context")

    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        if case.candidates is None:
            return Verdict.excluded("no_retrieval")
        candidates = case.candidates[: self.options.k] if self.options.k else case.candidates
        if not candidates:
            return Verdict.excluded("not_applicable:empty_retrieval")
        query = self.query_of(case)
        if query is None:
            return Verdict.excluded("missing_field:query")
        return self.with_prompt({"query": query, "context": render_passages(candidates)})


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
    reads = ("ground_truth", "response")

    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        found = get_field(case.expected, self.options.ground_truth_field)
        if isinstance(found, list):  # several references: all of them
            truth: str | None = "\n".join(str(item) for item in found)
        else:
            truth = text_field(case.expected, self.options.ground_truth_field)
        if truth is None:
            return Verdict.excluded("missing_field:ground_truth")
        response = self.response_of(case)
        if response is None:
            return Verdict.excluded("missing_field:response")
        return self.with_prompt({"ground_truth": truth, "response": response})
