"""Deterministic answer evaluators: ``contains``, ``exact_match`` and ``regex``."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from pydantic import JsonValue, field_validator
from typing_extensions import TypedDict

from oloproof.evaluators._base import CaseView, Evaluator, EvaluatorOptions, JudgeContext, Verdict, evaluator
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


class PairFields(TypedDict):
    """What ``contains`` and ``exact_match`` read.

    Attributes:
        actual: The output field; ``None`` when the output lacks it.
        references: The expected texts, any of which may match.
    """

    actual: JsonValue
    references: list[str]


class ActualFields(TypedDict):
    """What ``regex`` reads.

    Attributes:
        actual: The output field; ``None`` when the output lacks it.
    """

    actual: JsonValue


def _normalize(text: str, case_sensitive: bool) -> str:
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    return text if case_sensitive else text.casefold()


def _read_pair(options: AnswerOptions, case: CaseView) -> PairFields | Verdict:
    expected = get_field(case.expected, options.expected_field)
    if expected is MISSING or expected is None:
        return Verdict.excluded(f"no_expected_{options.expected_field.replace('.', '_')}")
    actual = get_field(case.output, options.field)
    references = expected if isinstance(expected, list) else [expected]
    return {
        "actual": None if actual is MISSING else actual,
        "references": [str(item) for item in references],
    }


def _judge_pair(
    fields: PairFields, case_sensitive: bool, matches: Callable[[str, str], bool]
) -> Verdict:
    actual = fields["actual"]
    if actual is None:
        return Verdict.of_pass(False, "output_field_missing")
    text = _normalize(str(actual), case_sensitive)
    return Verdict.of_pass(any(matches(_normalize(ref, case_sensitive), text) for ref in fields["references"]))


@evaluator("contains")
class Contains(Evaluator[PairFields]):
    """Passes when the output field contains the expected text (whitespace-normalized)."""

    options_model = AnswerOptions
    options: AnswerOptions

    def read(self, case: CaseView) -> PairFields | Verdict:
        return _read_pair(self.options, case)

    def judge(self, fields: PairFields, ctx: JudgeContext) -> Verdict:
        return _judge_pair(fields, self.options.case_sensitive, lambda ref, text: ref in text)


@evaluator("exact_match")
class ExactMatch(Evaluator[PairFields]):
    """Passes when the output field equals the expected text (whitespace-normalized)."""

    options_model = AnswerOptions
    options: AnswerOptions

    def read(self, case: CaseView) -> PairFields | Verdict:
        return _read_pair(self.options, case)

    def judge(self, fields: PairFields, ctx: JudgeContext) -> Verdict:
        return _judge_pair(fields, self.options.case_sensitive, lambda ref, text: ref == text)


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
class Regex(Evaluator[ActualFields]):
    """Passes when the pattern is found in the output field."""

    options_model = RegexOptions
    options: RegexOptions

    def read(self, case: CaseView) -> ActualFields | Verdict:
        actual = get_field(case.output, self.options.field)
        return {"actual": None if actual is MISSING else actual}

    def judge(self, fields: ActualFields, ctx: JudgeContext) -> Verdict:
        actual = fields["actual"]
        if actual is None:
            return Verdict.of_pass(False, "output_field_missing")
        flags = re.IGNORECASE if self.options.ignore_case else 0
        return Verdict.of_pass(re.search(self.options.pattern, str(actual), flags) is not None)
