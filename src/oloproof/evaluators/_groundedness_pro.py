"""``groundedness_pro``: strict groundedness from a content-safety service.

It calls the service's groundedness detection REST API (``text:detectGroundedness``)
with the query, the answer and the passages of the assembled context, and passes
when no ungrounded content is detected. The service is a provider like the
judges' models: ``provider`` names a ``type: content_safety`` entry of
``providers:`` (its endpoint, key variable, limits, timeout and retries). The
older inline form, ``endpoint`` and ``api_key_env`` on the evaluator itself, is
still read: it makes a provider of those, with the provider defaults but for its
``timeout_s``. Either way the call goes through a `ProviderPool`, so it is
limited, retried and accounted as every judge call is, and the key is read from
the environment by the pool alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, JsonValue, ValidationError
from typing_extensions import TypedDict

from oloproof._exceptions import TranscriptError
from oloproof.evaluators._agent import absent_context, conversation_text, is_messages
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
    Verdict,
    evaluator,
    spec_options,
)
from oloproof.evaluators._fields import query_text, text_field
from oloproof.evaluators._judges import call_record
from oloproof.evaluators._passages import context_sources, input_text

if TYPE_CHECKING:
    from oloproof.providers import ProviderPool

__all__ = ["GroundednessPro"]

INLINE_PROVIDER = "content_safety"
"""The provider name the calls of the inline form are accounted under."""

_INLINE = ("endpoint", "api_key_env", "timeout_s")


class GroundednessFields(TypedDict):
    """What ``groundedness_pro`` reads and sends.

    Attributes:
        query: The query; ``None`` when the case has none (then the service summarises).
        response: The answer.
        sources: The context's passages.
    """

    query: str | None
    response: str
    sources: list[str]


class GroundednessProOptions(EvaluatorOptions):
    """Options of ``groundedness_pro``."""

    provider: str | None = None
    """The name of a ``type: content_safety`` entry of ``providers:``."""

    endpoint: str | None = None
    """Inline form, without ``provider``: the content-safety resource's endpoint,
    e.g. ``https://<name>.cognitiveservices.azure.com``."""

    api_key_env: str | None = None
    """Inline form, without ``provider``: the name of the environment variable holding
    the resource's key."""

    api_version: str = "2024-09-15-preview"
    """The groundedness detection API version."""

    timeout_s: float = Field(default=30.0, strict=True, gt=0, allow_inf_nan=False)
    """Inline form only: seconds one request may take (a provider has its own)."""

    query_field: str | None = "question"
    """Dotted path of the query in the case input (``null``: the input itself)."""

    response_field: str | None = "answer"
    """Dotted path of the answer in the output (``null``: the output itself)."""


@evaluator("groundedness_pro")
class GroundednessPro(Evaluator[GroundednessFields]):
    """Passes when the content-safety service finds nothing ungrounded in the answer."""

    options_model = GroundednessProOptions
    options: GroundednessProOptions
    needs_retrieval = True
    is_llm_judge = True
    inputs = ("query", "response", "context")
    required_inputs = ("response", "context")

    def __init__(self, options: EvaluatorOptions) -> None:
        super().__init__(options)
        self._inline: ProviderPool | None = None

    def configure(self, *, providers: Mapping[str, Any], directory: Path | None) -> None:
        name = self.options.provider
        if name is not None:
            given = [option for option in _INLINE if option in self.options.model_fields_set]
            if given:
                raise OptionError(f"{given[0]} belongs to the provider {name!r}, not to groundedness_pro", given[0])
            if name not in providers:
                configured = ", ".join(sorted(providers)) or "none"
                raise OptionError(f"no provider named {name!r} (configured: {configured})", "provider")
            if providers[name].type != "content_safety":
                raise OptionError(f"provider {name!r} is {providers[name].type}; groundedness_pro needs a "
                                  "content_safety provider", "provider")  # fmt: skip
            return
        self._inline = self._inline_pool()

    def _inline_pool(self) -> ProviderPool:
        """The pool of the inline form's one provider, checked as a run checks its providers."""
        from oloproof._exceptions import ProviderConfigError
        from oloproof.providers import ProviderConfig, ProviderPool

        if not self.options.endpoint or not self.options.api_key_env:
            raise OptionError(
                "groundedness_pro calls a content-safety service: name a content_safety provider, or set its "
                "endpoint and api_key_env (the name of the variable holding its key)",
                "endpoint" if not self.options.endpoint else "api_key_env",
            )
        try:
            config = ProviderConfig(type="content_safety", endpoint=self.options.endpoint,
                                    api_key_env=self.options.api_key_env, timeout_s=self.options.timeout_s)  # fmt: skip
        except ValidationError as error:  # the value stays out of the message
            first = error.errors()[0]
            option = str(first["loc"][0]) if first["loc"] else "endpoint"
            raise OptionError(str(first["msg"]).removeprefix("Value error, "), option) from None
        pool = ProviderPool({INLINE_PROVIDER: config}, os.environ)
        try:
            pool.check([INLINE_PROVIDER])
        except ProviderConfigError:
            raise OptionError(
                f"the environment variable {self.options.api_key_env} (the content-safety key) is not set",
                "api_key_env",
            ) from None
        return pool

    def spec(self) -> EvaluatorSpec:
        spec = super().spec()
        options = spec_options(spec)
        if options.get("provider") is None:  # absent: specs (and identities) as before providers
            options.pop("provider", None)
        return spec

    def identity(self) -> EvaluatorSpec:
        identity = super().identity()
        if self.options.provider is None:
            return identity
        # As for the other judges: the provider's type, not its local name, decides a judgment.
        options = {k: v for k, v in spec_options(identity).items() if k not in ("provider", *_INLINE)}
        return {**identity, "options": options, "provider_type": "content_safety"}

    def providers(self) -> tuple[str, ...]:
        return () if self.options.provider is None else (self.options.provider,)

    def read(self, case: CaseView) -> GroundednessFields | Verdict:
        context = self.mapped(case, "context")
        agent = self.extracted(case, context)
        if isinstance(agent, Verdict):
            return agent
        if agent is not None:
            context = [p.text for p in agent.passages]
        elif context is UNMAPPED:
            if case.context is None:
                return Verdict.excluded(absent_context(case.output_items, "no_context"))
            context = [str(p.get("text") or "") for p in case.context]
        if context is MISSING or context is None:
            return Verdict.excluded("missing_field:context")
        if not context:
            return Verdict.excluded("not_applicable:empty_context")
        try:
            sources = context_sources(context)
        except ValueError as error:
            return Verdict.excluded(f"invalid_field:context: {error}")
        response = self.agent_response(case)
        if isinstance(response, Verdict):
            return response
        answer = response.response if response is not None else self.mapped(case, "response")
        if answer is UNMAPPED:
            answer = text_field(case.output, self.options.response_field)
        if answer is MISSING or answer is None:
            return Verdict.excluded("missing_field:response")
        query = self.mapped(case, "query")
        if query is UNMAPPED:
            query = query_text(case.input, self.options.query_field)
        if is_messages(query):
            try:
                query = conversation_text(query)
            except TranscriptError as error:
                return Verdict.excluded(f"invalid_field:query: {error}")
        query = None if query is MISSING or query is None else input_text(query)
        return {"query": query, "response": input_text(answer), "sources": sources}

    async def judge(self, fields: GroundednessFields, ctx: JudgeContext) -> Verdict:
        from oloproof.providers._content_safety import groundedness_request

        body: dict[str, JsonValue] = {  # the service's request body
            "domain": "Generic",
            "task": "QnA" if fields["query"] else "Summarization",
            "text": fields["response"],
            "groundingSources": list(fields["sources"]),
            "reasoning": False,
        }
        if fields["query"]:
            body["qna"] = {"query": fields["query"]}
        pool, name = (self._inline, INLINE_PROVIDER) if self.options.provider is None else (
            ctx.providers, self.options.provider)  # fmt: skip
        if pool is None:  # configure() made or checked it: only a misuse gets here
            raise RuntimeError("no provider pool for groundedness_pro")
        call = await pool.judge(name, groundedness_request(body, self.options.api_version))
        record: JudgeCall = {**call_record(call, ""), "prompt_hash": None}  # no prompt: the body is the fields
        raw = record.get("raw_reply")
        if raw:
            record["raw_reply"] = raw[:2000]
        if not call.ok or call.data is None:
            return Verdict.error(call.error or "content-safety call failed", call=record)
        ungrounded = call.data["ungroundedDetected"]
        reason = ("The service found ungrounded content in the response." if ungrounded
                  else "The service found the response consistent with the context.")  # fmt: skip
        return Verdict(score=0.0 if ungrounded else 1.0, passed=not ungrounded, reason=reason, call=record,
                       detail={"ungrounded_percentage": call.data.get("ungroundedPercentage")})
