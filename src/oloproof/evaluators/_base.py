"""The evaluator contract and its registry.

An evaluator reads a few fields of an executed case and returns a `Verdict`.
It declares those fields by extracting them (`Evaluator.read`) before judging
(`Evaluator.judge`), so the judgment identity covers exactly what was read and
an unchanged output is never judged twice.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

__all__ = [
    "CaseView",
    "Evaluator",
    "EvaluatorOptions",
    "Verdict",
    "evaluator",
    "registered_evaluators",
]

E = TypeVar("E", bound="type[Evaluator]")

_REGISTRY: dict[str, type[Evaluator]] = {}


class EvaluatorOptions(BaseModel):
    """Options shared by every evaluator entry in ``oloproof.yaml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    """The registered evaluator type, e.g. ``contains``."""

    criterion: str | None = None
    """The name the metric is reported under; each type has a default."""


@dataclass(frozen=True)
class CaseView:
    """What an evaluator may read of one executed case.

    ``context`` is the assembled context the generator saw and ``candidates`` the
    retrieval in the retriever's order; both are ``None`` for plain systems.
    """

    case_id: str
    input: Any
    expected: dict[str, Any]
    metadata: dict[str, Any]
    output: Any
    context: list[dict[str, Any]] | None = None
    candidates: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class Verdict:
    """The result of judging one case on one criterion."""

    status: Literal["observed", "excluded"] = "observed"
    value: float | None = None
    """The score in [0, 1] (1.0/0.0 for pass/fail criteria)."""
    passed: bool | None = None
    reason: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of_pass(cls, passed: bool, reason: str | None = None, **detail: Any) -> Verdict:
        return cls(value=1.0 if passed else 0.0, passed=passed, reason=reason, detail=detail)

    @classmethod
    def excluded(cls, reason: str) -> Verdict:
        return cls(status="excluded", reason=reason)


class Evaluator(ABC):
    """Base class of every evaluator; subclasses register with ``@evaluator``."""

    type_name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    options_model: ClassVar[type[EvaluatorOptions]] = EvaluatorOptions
    kind: ClassVar[Literal["proportion", "mean"]] = "proportion"
    """``proportion`` for pass/fail criteria, ``mean`` for scores in [0, 1]."""
    needs_retrieval: ClassVar[bool] = False
    """True when the evaluator reads the retrieval or context (RAG systems only)."""
    is_llm_judge: ClassVar[bool] = False

    def __init__(self, options: EvaluatorOptions) -> None:
        self.options = options

    @property
    def criterion(self) -> str:
        """The reported metric name."""
        return self.options.criterion or self.default_criterion()

    def default_criterion(self) -> str:
        return self.type_name

    def spec(self) -> dict[str, Any]:
        """The full spec: type, version and every option (judgment identity)."""
        return {
            "type": self.type_name,
            "version": self.version,
            "options": self.options.model_dump(mode="json"),
        }

    @abstractmethod
    def read(self, case: CaseView) -> dict[str, Any] | Verdict:
        """Extract exactly the fields this evaluator judges, or an exclusion."""

    @abstractmethod
    def judge(self, fields: dict[str, Any]) -> Verdict | Any:
        """Judge the extracted fields (may be ``async``)."""

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.judge)


def evaluator(name: str) -> Callable[[E], E]:
    """Register an `Evaluator` subclass under ``name`` (the ``type:`` in YAML)."""

    def register(cls: E) -> E:
        cls.type_name = name
        _REGISTRY[name] = cls
        return cls

    return register


def registered_evaluators() -> dict[str, type[Evaluator]]:
    """Return the registered evaluator types by name."""
    return dict(sorted(_REGISTRY.items()))
