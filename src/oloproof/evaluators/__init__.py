"""The evaluator catalogue.

Evaluators register by decorator (``@evaluator("name")``); ``oloproof.yaml``
names them by ``type``.
"""

from oloproof.evaluators._base import (
    CaseView,
    Evaluator,
    EvaluatorOptions,
    Verdict,
    evaluator,
    registered_evaluators,
)
from oloproof.evaluators._build import build_evaluators
from oloproof.evaluators._citation import CitationValidity
from oloproof.evaluators._retrieval import HitRate, Mrr, Ndcg, Recall, RetrievalOptions
from oloproof.evaluators._text import Contains, ExactMatch, Regex

__all__ = [
    "CaseView",
    "CitationValidity",
    "Contains",
    "Evaluator",
    "EvaluatorOptions",
    "ExactMatch",
    "HitRate",
    "Mrr",
    "Ndcg",
    "Recall",
    "Regex",
    "RetrievalOptions",
    "Verdict",
    "build_evaluators",
    "evaluator",
    "registered_evaluators",
]
