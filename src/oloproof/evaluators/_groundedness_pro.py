"""``groundedness_pro``: strict groundedness from a content-safety service.

It calls the service's groundedness detection REST API (``text:detectGroundedness``)
with the query, the answer and the passages of the assembled context, and passes
when no ungrounded content is detected. It needs the service's endpoint and the
name of the environment variable holding its key; without both it is refused
when the project loads. The service has no SDK of its own for this preview API,
so one HTTP request is made with ``httpx``; a failed request is a recorded judge
error (not retried: the run's next re-run judges it again).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from oloproof.evaluators._base import (
    MISSING,
    UNMAPPED,
    CaseView,
    Evaluator,
    EvaluatorOptions,
    JudgeCall,
    JudgeContext,
    OptionError,
    Verdict,
    evaluator,
)
from oloproof.evaluators._fields import query_text, text_field
from oloproof.evaluators._passages import context_sources, input_text

__all__ = ["GroundednessPro"]

API_PATH = "/contentsafety/text:detectGroundedness"


class GroundednessProOptions(EvaluatorOptions):
    """Options of ``groundedness_pro``."""

    endpoint: str | None = None
    """The content-safety resource's endpoint, e.g. ``https://<name>.cognitiveservices.azure.com``."""

    api_key_env: str | None = None
    """The name of the environment variable holding the resource's key."""

    api_version: str = "2024-09-15-preview"
    """The groundedness detection API version."""

    timeout_s: float = Field(default=30.0, strict=True, gt=0, allow_inf_nan=False)
    """Seconds one request may take."""

    query_field: str | None = "question"
    """Dotted path of the query in the case input (``null``: the input itself)."""

    response_field: str | None = "answer"
    """Dotted path of the answer in the output (``null``: the output itself)."""


@evaluator("groundedness_pro")
class GroundednessPro(Evaluator):
    """Passes when the content-safety service finds nothing ungrounded in the answer."""

    options_model = GroundednessProOptions
    options: GroundednessProOptions
    needs_retrieval = True
    is_llm_judge = True
    inputs = ("query", "response", "context")
    required_inputs = ("response", "context")

    def configure(self, *, providers: Mapping[str, Any], directory: Path | None) -> None:
        if not self.options.endpoint or not self.options.api_key_env:
            raise OptionError(
                "groundedness_pro calls a content-safety service: set its endpoint and "
                "api_key_env (the name of the variable holding its key)",
                "endpoint" if not self.options.endpoint else "api_key_env",
            )
        if not os.environ.get(self.options.api_key_env, "").strip():
            raise OptionError(
                f"the environment variable {self.options.api_key_env} (the content-safety key) is not set",
                "api_key_env",
            )

    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        context = self.mapped(case, "context")
        if context is UNMAPPED:
            if case.context is None:
                return Verdict.excluded("no_context")
            context = [str(p.get("text") or "") for p in case.context]
        if context is MISSING or context is None:
            return Verdict.excluded("missing_field:context")
        if not context:
            return Verdict.excluded("not_applicable:empty_context")
        try:
            sources = context_sources(context)
        except ValueError as error:
            return Verdict.excluded(f"invalid_field:context: {error}")
        answer = self.mapped(case, "response")
        if answer is UNMAPPED:
            answer = text_field(case.output, self.options.response_field)
        if answer is MISSING or answer is None:
            return Verdict.excluded("missing_field:response")
        query = self.mapped(case, "query")
        if query is UNMAPPED:
            query = query_text(case.input, self.options.query_field)
        query = None if query is MISSING or query is None else input_text(query)
        return {"query": query, "response": input_text(answer), "sources": sources}

    async def judge(self, fields: dict[str, Any], ctx: JudgeContext) -> Verdict:
        import httpx

        key = os.environ.get(self.options.api_key_env or "", "")
        body: dict[str, Any] = {
            "domain": "Generic",
            "task": "QnA" if fields["query"] else "Summarization",
            "text": fields["response"],
            "groundingSources": fields["sources"],
            "reasoning": False,
        }
        if fields["query"]:
            body["qna"] = {"query": fields["query"]}
        url = f"{(self.options.endpoint or '').rstrip('/')}{API_PATH}"
        started = time.perf_counter()
        call: JudgeCall = {
            "provider": "content_safety", "provider_type": "content_safety", "model": self.options.api_version,
        }  # fmt: skip
        try:
            async with httpx.AsyncClient(timeout=self.options.timeout_s) as client:
                reply = await client.post(url, params={"api-version": self.options.api_version}, json=body,
                                          headers={"Ocp-Apim-Subscription-Key": key})  # fmt: skip
        except httpx.HTTPError as exc:
            return Verdict.error(f"{type(exc).__name__}: content-safety request failed", call=call)
        call["latency_ms"] = (time.perf_counter() - started) * 1000
        text = reply.text.replace(key, "[redacted]") if key else reply.text
        if reply.status_code != 200:
            return Verdict.error(f"content-safety service answered {reply.status_code}",
                                 call={**call, "raw_reply": text[:2000]})  # fmt: skip
        try:
            data = reply.json()
            ungrounded = data["ungroundedDetected"]
        except (ValueError, KeyError, TypeError):
            return Verdict.error("content-safety reply has no ungroundedDetected",
                                 call={**call, "raw_reply": text[:2000]})  # fmt: skip
        if not isinstance(ungrounded, bool):
            return Verdict.error("content-safety reply has no ungroundedDetected",
                                 call={**call, "raw_reply": text[:2000]})  # fmt: skip
        reason = ("The service found ungrounded content in the response." if ungrounded
                  else "The service found the response consistent with the context.")  # fmt: skip
        return Verdict(score=0.0 if ungrounded else 1.0, passed=not ungrounded, reason=reason, call=call,
                       detail={"ungrounded_percentage": data.get("ungroundedPercentage")})
