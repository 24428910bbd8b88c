"""Deterministic answer evaluators: ``contains``, ``exact_match`` and ``regex``."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from pydantic import field_validator

from oloproof.evaluators._base import CaseView, Evaluator, EvaluatorOptions, Verdict, evaluator
from oloproof.evaluators._fields import MISSING, get_field

__all__ = ["Contains", "ExactMatch", "Regex"]


class AnswerOptions(EvaluatorOptions):
    """Options of evaluators comparing an output field with an expected field."""

    field: str | None = "answer"
    """Dotted path into the output (``null``: the whole output, for string outputs)."""

    expected_field: str = "answer"
    """Dotted path into ``expected``; a list there means any of its items."""

    case_sensitive: bool = False
    """Compare case-sensitively."""


def _normalize(text: str, case_sensitive: bool) -> str:
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    return text if case_sensitive else text.casefold()


def _read_pair(options: AnswerOptions, case: CaseView) -> dict[str, Any] | Verdict:
    expected = get_field(case.expected, options.expected_field)
    if expected is MISSING or expected is None:
        return Verdict.excluded(f"no_expected_{options.expected_field.replace('.', '_')}")
    actual = get_field(case.output, options.field)
    references = expected if isinstance(expected, list) else [expected]
    return {
        "actual": None if actual is MISSING else actual,
        "references": [str(item) for item in references],
    }


@evaluator("contains")
class Contains(Evaluator):
    """Passes when the output field contains the expected text (whitespace-normalized)."""

    options_model = AnswerOptions
    options: AnswerOptions

    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        return _read_pair(self.options, case)

    def judge(self, fields: dict[str, Any]) -> Verdict:
        actual = fields["actual"]
        if actual is None:
            return Verdict.of_pass(False, "output_field_missing")
        haystack = _normalize(str(actual), self.options.case_sensitive)
        passed = any(
            _normalize(ref, self.options.case_sensitive) in haystack for ref in fields["references"]
        )
        return Verdict.of_pass(passed)


@evaluator("exact_match")
class ExactMatch(Evaluator):
    """Passes when the output field equals the expected text (whitespace-normalized)."""

    options_model = AnswerOptions
    options: AnswerOptions

    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        return _read_pair(self.options, case)

    def judge(self, fields: dict[str, Any]) -> Verdict:
        actual = fields["actual"]
        if actual is None:
            return Verdict.of_pass(False, "output_field_missing")
        normalized = _normalize(str(actual), self.options.case_sensitive)
        passed = any(
            _normalize(ref, self.options.case_sensitive) == normalized
            for ref in fields["references"]
        )
        return Verdict.of_pass(passed)


class RegexOptions(EvaluatorOptions):
    """Options of the ``regex`` evaluator."""

    pattern: str
    """A Python regular expression searched for in the output field."""

    field: str | None = "answer"
    """Dotted path into the output (``null``: the whole output)."""

    ignore_case: bool = False
    """Match case-insensitively."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value


@evaluator("regex")
class Regex(Evaluator):
    """Passes when the pattern is found in the output field."""

    options_model = RegexOptions
    options: RegexOptions

    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        actual = get_field(case.output, self.options.field)
        return {"actual": None if actual is MISSING else actual}

    def judge(self, fields: dict[str, Any]) -> Verdict:
        actual = fields["actual"]
        if actual is None:
            return Verdict.of_pass(False, "output_field_missing")
        flags = re.IGNORECASE if self.options.ignore_case else 0
        return Verdict.of_pass(re.search(self.options.pattern, str(actual), flags) is not None)
