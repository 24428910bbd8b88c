"""``citation_support_judge``: does each cited passage support the answer citing it?

One call per case judges every citation of the answer against the passage it
names in the assembled context; the score is the share of supported citations.
A citation naming no passage of the context is unsupported without asking.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import Field, JsonValue

from oloproof.evaluators._agent import absent_context
from oloproof.evaluators._base import CaseView, JudgeCall, JudgeContext, Output, Verdict, evaluator
from oloproof.evaluators._fields import cited_ids
from oloproof.evaluators._judges import JudgeFields, JudgeOptions, LLMJudge
from oloproof.evaluators._passages import passage_id

__all__ = ["CitationSupportJudge"]

CITATION_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "citations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "supported": {"type": "boolean"},
                    "reason": {"type": "string"},
                },
                "required": ["id", "supported", "reason"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["citations"],
    "additionalProperties": False,
}


class CitationSupportOptions(JudgeOptions):
    """Options of ``citation_support_judge``."""

    threshold: float | None = Field(default=None, strict=True, ge=0.0, le=1.0, allow_inf_nan=False)
    """A share of supported citations at or above it passes (``null``: report the mean share)."""

    citations_field: str = "citations"
    """Dotted path of the list of cited ids in the output."""


@evaluator("citation_support_judge")
class CitationSupportJudge(LLMJudge):
    """The share of an answer's citations whose passage supports it."""

    options_model = CitationSupportOptions
    options: CitationSupportOptions
    needs_retrieval = True
    prompt_name = "citation_support_v1"
    reads = ("response", "citations")
    schema = CITATION_SCHEMA

    def outputs(self) -> tuple[Output, ...]:
        return (Output(self.criterion, "score", low=0.0, high=1.0, threshold=self.options.threshold),)

    def read(self, case: CaseView) -> JudgeFields | Verdict:
        if case.context is None:
            return Verdict.excluded(absent_context(case.output_items, "no_context"))
        cited = list(dict.fromkeys(cited_ids(case.output, self.options.citations_field)))
        if not cited:
            return Verdict.excluded("not_applicable:no_citations")
        response = self.response_of(case)
        if response is None:
            return Verdict.excluded("missing_field:response")
        passages: dict[str, str] = {}
        for passage in case.context:
            text = str(passage.get("text") or "")
            for name in {str(passage["doc_id"]), passage_id(passage)}:
                passages[name] = f"{passages[name]}\n{text}" if name in passages else text
        found = [item for item in cited if item in passages]
        return self.with_prompt({
            "response": response,
            "cited": cited,
            "passages": {item: passages[item] for item in found},
        })

    def render_citations(self, fields: JudgeFields) -> str:
        return "\n\n".join(
            f"[{item}]\n{text.strip()}" for item, text in fields.get("passages", {}).items()
        )

    async def judge(self, fields: JudgeFields, ctx: JudgeContext) -> Verdict:
        cited, passages = fields.get("cited", []), fields.get("passages", {})
        outside = [item for item in cited if item not in passages]
        if not passages:  # nothing to ask: every citation names a passage it was not given
            return Verdict(score=0.0, reason="no cited passage is in the context",
                           detail={"supported": [], "unsupported": outside, "outside_context": outside})
        return await super().judge({**fields, "citations": self.render_citations(fields)}, ctx)

    def verdict_of(self, data: Mapping[str, Any], record: JudgeCall, fields: JudgeFields) -> Verdict:
        cited, passages = fields.get("cited", []), fields.get("passages", {})
        replies = {
            str(entry["id"]): entry["supported"]
            for entry in data.get("citations", [])
            if isinstance(entry, dict) and "id" in entry and isinstance(entry.get("supported"), bool)
        }
        asked = list(passages)
        unanswered = [item for item in asked if item not in replies]
        if unanswered:  # a partial reply is an error, never a guess
            return Verdict.error(
                f"the reply does not judge citation {unanswered[0]!r}",
                call={**record, "raw_reply": json.dumps(data, ensure_ascii=False)},
            )
        supported = [item for item in asked if replies[item]]
        unsupported = [item for item in cited if item not in supported]
        outside = [item for item in cited if item not in passages]
        share = len(supported) / len(cited)
        reason = f"{len(supported)} of {len(cited)} citations supported"
        return Verdict(score=share, reason=reason, call=record,
                       detail={"supported": supported, "unsupported": unsupported, "outside_context": outside})
