"""``citation_validity``: every id an answer cites is in the context it was given."""

from __future__ import annotations

from typing_extensions import TypedDict

from oloproof.evaluators._agent import absent_context
from oloproof.evaluators._base import CaseView, Evaluator, EvaluatorOptions, JudgeContext, Verdict, evaluator
from oloproof.evaluators._fields import cited_ids

__all__ = ["CitationValidity"]


class CitationOptions(EvaluatorOptions):
    """Options of ``citation_validity``."""

    field: str = "citations"
    """Dotted path of the list of cited ids in the output."""

    require_citations: bool = False
    """Fail an answer that cites nothing."""


class CitationFields(TypedDict):
    """What ``citation_validity`` reads.

    Attributes:
        cited: The ids the answer cites.
        context_ids: The ids of the context's passages, sorted.
    """

    cited: list[str]
    context_ids: list[str]


@evaluator("citation_validity")
class CitationValidity(Evaluator[CitationFields]):
    """Checks that every cited id names a passage of the assembled context.

    A cited id matches a passage by ``doc_id`` or by ``doc_id#chunk_id``.
    """

    options_model = CitationOptions
    options: CitationOptions
    needs_retrieval = True

    def default_criterion(self) -> str:
        return "citations_valid"

    def read(self, case: CaseView) -> CitationFields | Verdict:
        if case.context is None:
            return Verdict.excluded(absent_context(case.output_items, "no_context"))
        cited = cited_ids(case.output, self.options.field)
        allowed: set[str] = set()
        for passage in case.context:
            allowed.add(str(passage["doc_id"]))
            if passage.get("chunk_id") is not None:
                allowed.add(f"{passage['doc_id']}#{passage['chunk_id']}")
        return {
            "cited": cited,
            "context_ids": sorted(allowed),
        }

    def judge(self, fields: CitationFields, ctx: JudgeContext) -> Verdict:
        cited = fields["cited"]
        if not cited:
            if self.options.require_citations:
                return Verdict.of_pass(False, "no_citations")
            return Verdict.of_pass(True, "no_citations")
        allowed = set(fields["context_ids"])
        invalid = [item for item in cited if item not in allowed]
        if invalid:
            return Verdict.of_pass(False, "cited_outside_context", invalid=invalid)
        return Verdict.of_pass(True)
