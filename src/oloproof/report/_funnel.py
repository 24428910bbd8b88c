"""The failure funnel: where a run's cases lost their relevant evidence, step by step.

Of a run's cases, how many had relevant evidence retrieved within ``depth``, ranked
within ``top_k``, kept in the context by assembly, and then passed a pass/fail
criterion. Each step's losses are named: by a diagnosis's labels where one is given
(``RETRIEVAL_MISS``, ``RANKED_OUT``, …), else ``not diagnosed``; a case whose stages
failed is ``missing`` and one without relevance labels ``unlabelled``, both lost at
the first step. The funnel counts what the recorded run shows; it claims no cause.

With repeats, a case's retrieval is its first repeat's, and it passes when it passed
in more than half its repeats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from oloproof.diagnosis import case_passes
from oloproof.records import StoredCase, StoredJudgment
from oloproof.report._facts import first_repeats, relevant_ids

__all__ = ["Funnel", "FunnelStep", "failure_funnel", "render_funnel"]

NOT_DIAGNOSED = "not diagnosed"
"""What a lost case is called when no diagnosis labels it."""


@dataclass(frozen=True)
class FunnelStep:
    """One step of the funnel: the cases still in, and the ones it lost."""

    name: str
    """``cases``, ``retrieved``, ``within_top_k``, ``in_context`` or ``answered``."""
    title: str
    """What the step says of its cases, e.g. ``relevant evidence retrieved within depth 6``."""
    count: int
    """Cases still in after this step."""
    lost: tuple[str, ...] = ()
    """The cases this step lost, in id order."""
    labels: Mapping[str, int] = field(default_factory=dict)
    """How many of the lost cases have each label (a diagnosis's, ``missing``,
    ``unlabelled`` or ``not diagnosed``)."""


@dataclass(frozen=True)
class Funnel:
    """A run's failure funnel for one pass/fail criterion."""

    criterion: str
    """The criterion of the last step."""
    steps: tuple[FunnelStep, ...]
    """The steps, from all cases to those that passed."""
    passed_elsewhere: int = 0
    """Cases that passed although the funnel lost them earlier (their answer did not
    need the labelled evidence, or found it elsewhere)."""

    @property
    def counts(self) -> tuple[int, ...]:
        """Each step's count, e.g. ``(13, 12, 12, 10, 9)``."""
        return tuple(step.count for step in self.steps)


def _in_context(case: StoredCase, relevant: set[str]) -> bool:
    return any(entry.get("doc_id") in relevant for entry in case.get("context") or [])


def failure_funnel(cases: Sequence[StoredCase], judgments: Sequence[StoredJudgment], criterion: str, *,
                   depth: int | None, top_k: int | None, threshold: float | None = None,
                   labels: Mapping[str, str] | None = None) -> Funnel:  # fmt: skip
    """The funnel of a run's cases for ``criterion``.

    Args:
        cases: The run's ``cases`` rows (with repeats, each case's first is read).
        judgments: Its ``judgments`` rows.
        criterion: A pass/fail criterion (or a score, with ``threshold``).
        depth: The retrieval depth; ``None`` for a system without a retrieval stage
            (then the funnel is cases, then answered).
        top_k: The context's cut-off; ``None`` when there is none.
        threshold: A score below it fails.
        labels: A diagnosis's label of each case it diagnosed.
    """
    first = first_repeats(cases)
    ids = sorted(first)
    passes = case_passes(judgments, criterion, threshold)
    passed = {case_id for case_id, count in passes.items() if 2 * count.passed > count.repeats}
    labels = labels or {}
    steps = [FunnelStep("cases", "cases", len(ids))]
    remaining = ids
    if depth is not None:
        stages = [
            ("retrieved", f"relevant evidence retrieved within depth {depth}",
             lambda c: first[c].get("best_relevant_position") is not None),
            *([("within_top_k", f"ranked within top_k {top_k}",
                lambda c: (first[c].get("best_relevant_position") or 0) <= top_k)] if top_k is not None else []),
            ("in_context", "kept in the context",
             lambda c: _in_context(first[c], relevant_ids(first[c]))),
        ]  # fmt: skip
        for name, title, keep in stages:
            kept = [c for c in remaining if keep(c)]
            steps.append(_step(name, title, remaining, kept, first, labels))
            remaining = kept
    kept = [c for c in remaining if c in passed]
    steps.append(_step("answered", f"passed {criterion}", remaining, kept, first, labels))
    return Funnel(criterion=criterion, steps=tuple(steps), passed_elsewhere=len(passed - set(kept)))


def _step(name: str, title: str, before: list[str], kept: list[str], first: Mapping[str, StoredCase],
          labels: Mapping[str, str]) -> FunnelStep:  # fmt: skip
    still = set(kept)
    lost = tuple(c for c in before if c not in still)
    return FunnelStep(name, title, len(kept), lost, dict(Counter(_loss_label(first[c], labels) for c in lost)))


def _loss_label(case: StoredCase, labels: Mapping[str, str]) -> str:
    if case["case_id"] in labels:
        return labels[case["case_id"]]
    if case.get("status") == "missing":
        return "missing"
    if not relevant_ids(case):
        return "unlabelled"
    return NOT_DIAGNOSED


def render_funnel(funnel: Funnel) -> list[str]:
    """The funnel as lines: ``13 cases → 12 relevant evidence retrieved … (lost 1: RETRIEVAL_MISS 1)``."""
    lines = [f"Funnel ({funnel.criterion}): " + " → ".join(str(count) for count in funnel.counts)]
    for step in funnel.steps[1:]:
        line = f"  {step.count:>5}  {step.title}"
        if step.lost:
            named = ", ".join(f"{label} {count}" for label, count in sorted(step.labels.items()))
            line += f"  (lost {len(step.lost)}: {named})"
        lines.append(line)
    if funnel.passed_elsewhere:
        lines.append(f"  and {funnel.passed_elsewhere} passed although an earlier step lost them")
    return lines
