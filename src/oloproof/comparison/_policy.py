"""``compare.yaml``: the release policy, a list of named rules over metrics.

Numbers are strict (``margin: '5'`` is refused, not read as 5); rule names and
metrics hold at most `MAX_NAME` (256) characters.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from oloproof._exceptions import ConfigError
from oloproof._limits import MAX_NAME, dotted, printable, shown
from oloproof.config._describe import describe
from oloproof.config._yaml import load_yaml_with_lines, locate, read_config_text
from oloproof.judging import JudgeRequirements

__all__ = ["Policy", "Rule", "load_policy"]


class Rule(BaseModel):
    """One named rule: a test of the paired difference of one metric."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=MAX_NAME)
    """The rule's name, printed in the decisions (at most 256 characters)."""

    metric: str = Field(min_length=1, max_length=MAX_NAME)
    """The criterion compared, e.g. ``answer_correct`` (at most 256 characters)."""

    kind: Literal["non-inferiority", "superiority", "equivalence"]
    """``non-inferiority`` (not worse by more than the margin), ``superiority`` (better by
    more than the margin) or ``equivalence`` (within the margin either way)."""

    margin: float = Field(default=0.0, ge=0.0, strict=True)
    """The margin in percentage points (score metrics: points of the [0, 1] scale × 100)."""

    min_pairs: int = Field(strict=True, default=10, ge=1)
    """Fewer paired cases than this end ``INSUFFICIENT_EVIDENCE too_few_pairs``."""

    plan_difference: float | None = Field(default=None, strict=True)
    """The true difference (points) ``oloproof plan`` assumes; 0 for non-inferiority and
    equivalence, margin + 5 points for superiority when absent."""

    @field_validator("margin")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("margin must be a finite number of points")
        return value


class _StrictJudgeRequirements(JudgeRequirements):
    """``judges:`` as a policy file gives it: its numbers are strict, like every other."""

    model_config = ConfigDict(strict=True)


class Policy(BaseModel):
    """A comparison policy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    confidence: float = Field(default=0.95, gt=0.5, lt=1.0, strict=True)
    """Confidence level of the two-sided paired intervals every rule decides on."""

    rules: list[Rule] = Field(min_length=1)
    """The rules; the gate passes only when every rule passes."""

    judges: JudgeRequirements = JudgeRequirements()
    """What an LLM judge's validation against human labels must show before a rule
    over its metric may decide (otherwise ``INSUFFICIENT_EVIDENCE judge_not_validated``)."""

    @field_validator("rules")
    @classmethod
    def _unique_names(cls, rules: list[Rule]) -> list[Rule]:
        names = [rule.name for rule in rules]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"rule names must be unique: {', '.join(map(printable, duplicates))}")
        return rules

    @field_validator("judges", mode="before")
    @classmethod
    def _strict_judges(cls, value: object) -> object:
        if isinstance(value, dict):
            _StrictJudgeRequirements.model_validate(value)  # refuses `min_kappa_low: '0.6'`, names the field
        return value


def load_policy(path: str | Path) -> Policy:
    """Read and validate a policy file; errors name the file, line and field."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError("policy file not found", path=str(path))
    data, lines = load_yaml_with_lines(read_config_text(path, "policy file"), path=str(path))
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        location = tuple(error["loc"])
        kind = error["type"]
        if kind == "literal_error":
            message = f"unknown rule kind {shown(error.get('input'))} (expected non-inferiority, superiority or equivalence)"
        else:
            message = describe(error)
        raise ConfigError(message, path=str(path), line=locate(lines, location), field=dotted(location)) from None
