"""The evaluator catalogue.

Evaluators register by decorator (``@evaluator("name")``); ``oloproof.yaml``
names them by ``type``.
"""

from oloproof.evaluators._base import (
    MISSING,
    UNMAPPED,
    CaseView,
    Evaluator,
    EvaluatorOptions,
    JudgeContext,
    OptionError,
    Output,
    Verdict,
    evaluator,
    registered_evaluators,
)
from oloproof.evaluators._build import build_evaluators
from oloproof.evaluators._citation import CitationValidity
from oloproof.evaluators._citation_support import CitationSupportJudge
from oloproof.evaluators._document_retrieval import DocumentRetrieval, DocumentRetrievalOptions
from oloproof.evaluators._groundedness_pro import GroundednessPro
from oloproof.evaluators._judges import (
    Groundedness,
    GroundednessJudge,
    JudgeOptions,
    LLMJudge,
    Relevance,
    ResponseCompleteness,
    Retrieval,
)
from oloproof.evaluators._prompts import Prompt
from oloproof.evaluators._retrieval import (
    BinaryRetrievalOptions,
    HitRate,
    Map,
    Mrr,
    Ndcg,
    NdcgOptions,
    Precision,
    Recall,
    RetrievalOptions,
    RPrecision,
    RPrecisionOptions,
)
from oloproof.evaluators._text import Contains, ExactMatch, Regex
from oloproof.evaluators._tool_calls import ToolCalls, ToolCallsOptions

__all__ = [
    "MISSING",
    "UNMAPPED",
    "BinaryRetrievalOptions",
    "CaseView",
    "CitationSupportJudge",
    "CitationValidity",
    "Contains",
    "DocumentRetrieval",
    "DocumentRetrievalOptions",
    "Evaluator",
    "EvaluatorOptions",
    "ExactMatch",
    "Groundedness",
    "GroundednessJudge",
    "GroundednessPro",
    "HitRate",
    "JudgeContext",
    "JudgeOptions",
    "LLMJudge",
    "Map",
    "Mrr",
    "Ndcg",
    "NdcgOptions",
    "OptionError",
    "Output",
    "Precision",
    "Prompt",
    "RPrecision",
    "RPrecisionOptions",
    "Recall",
    "Regex",
    "Relevance",
    "ResponseCompleteness",
    "Retrieval",
    "RetrievalOptions",
    "ToolCalls",
    "ToolCallsOptions",
    "Verdict",
    "build_evaluators",
    "evaluator",
    "registered_evaluators",
]
