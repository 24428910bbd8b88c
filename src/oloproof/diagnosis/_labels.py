"""Failure labels from controlled re-execution: factors, never causes.

A label says where the relevant evidence went in the recorded run, for a failure
that recovered when the intervention replaced what the model saw. It implicates a
factor; it does not establish why the case failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oloproof import stats
from oloproof.diagnosis._select import Passes
from oloproof.records import StoredCase

__all__ = [
    "AGENT_FACTORS",
    "FACTORS",
    "LABELS",
    "NOT_DIAGNOSED",
    "CaseLabel",
    "Label",
    "RepeatedOutcome",
    "implicated_factor",
    "label_case",
]


@dataclass(frozen=True)
class Label:
    """A label, its reason code and the sentence the report prints after the count."""

    name: str
    reason: str
    description: str
    factor: str | None


LABELS: dict[str, Label] = {
    label.name: label
    for label in (
        Label("RETRIEVAL_MISS", "relevant_not_retrieved",
              "recovered; no relevant evidence was retrieved", "retrieval"),
        Label("RANKED_OUT", "relevant_ranked_out",
              "recovered; relevant evidence was retrieved only below top-k", "top-k cut-off"),
        Label("CONTEXT_ASSEMBLY_LOSS", "relevant_dropped_from_context",
              "recovered; relevant evidence within top-k was left out of the context", "context budget"),
        Label("CONTEXT_DISTRACTION", "recovered_with_relevant_in_context",
              "recovered; relevant evidence was in the context beside other passages", "context composition"),
        Label("GENERATION_FAILURE", "fails_with_gold_context",
              "still failed with the gold context", "generation"),
        Label("UNSTABLE", "passes_on_plain_reexecution",
              "passed when re-executed without the intervention; not diagnosed", None),
        Label("PARTIAL_RECOVERY", "recovered_in_some_repeats",
              "recovered in some repeats only; not diagnosed", None),
        Label("TOOL_NOT_CALLED", "context_tool_not_called",
              "the agent called no context tool", "tool use"),
    )
}

FACTORS: dict[str, tuple[str, ...]] = {
    "context budget": ("a larger token budget", "smaller chunks"),
    "top-k cut-off": ("a larger top_k", "a reranker"),
    "retrieval": ("a larger depth", "query rewriting", "hybrid retrieval"),
    "context composition": ("a reranker", "a smaller top_k"),
    "generation": ("a different prompt", "a different model"),
    "tool use": ("an instruction to search before answering", "a required tool choice"),
}
"""Each factor and the candidate experiments that would test it."""

AGENT_FACTORS: dict[str, tuple[str, ...]] = {
    "top-k cut-off": ("more results per search", "a reranker inside the context tool"),
    "retrieval": ("query rewriting before each search", "hybrid retrieval in the context tool",
                  "more results per search"),
    "context composition": ("a reranker inside the context tool", "fewer results per search"),
}
"""The experiments an agent's failures suggest, where they differ from a staged system's:
an agent has no ``top_k``, ``depth`` or re-ranker of Oloproof's, only its tools."""

NOT_DIAGNOSED = frozenset({"UNSTABLE", "PARTIAL_RECOVERY"})
"""Labels that name no factor: the failure did not reproduce, or the intervention's
recovery did not either."""

_FACTOR_ORDER = ("context budget", "top-k cut-off", "retrieval", "context composition", "tool use")


@dataclass(frozen=True)
class CaseLabel:
    """One diagnosed case."""

    case_id: str
    label: str
    reason: str
    strength: str
    best_relevant_position: int | None
    control_passed: bool
    intervention_passed: bool
    repeats: int | None = None
    original_passes: int | None = None
    control_passes: int | None = None
    intervention_passes: int | None = None

    def as_record(self) -> dict[str, Any]:
        """The case as a diagnosis records it: the repeat counts only with repeats, so a
        diagnosis of a run without them keeps the content (and id) it always had."""
        return {name: value for name, value in vars(self).items()
                if value is not None or name == "best_relevant_position"}  # fmt: skip


@dataclass(frozen=True)
class RepeatedOutcome:
    """A case's passes over repeats: in the run, its control and under the intervention.

    The control is ``UNSTABLE`` when its pass rate differs from the run's by more than
    sampling noise (`oloproof.stats.rates_differ`: Fisher's exact test, two-sided, at
    5%); the intervention recovers the case only when it passes in every repeat, and in
    some repeats only is a partial recovery, never a diagnosis.
    """

    original: Passes
    control: Passes
    intervention: Passes

    @property
    def unstable(self) -> bool:
        """Whether the control's pass rate differs from the run's beyond sampling noise."""
        return stats.rates_differ(self.control.passed, self.control.repeats,
                                  self.original.passed, self.original.repeats)  # fmt: skip


def label_case(
    case_id: str,
    *,
    control_passed: bool,
    gold_passed: bool,
    recorded: StoredCase,
    relevant: set[str],
    top_k: int | None,
    called_context_tool: bool | None = None,
    repeated: RepeatedOutcome | None = None,
) -> CaseLabel:
    """Label one failed case from its control, its gold-context outcome and the recorded run.

    Args:
        case_id: The case.
        control_passed: Whether the plain re-execution passed (then ``UNSTABLE``).
        gold_passed: Whether generation from ``expected.gold_context`` passed.
        recorded: The parent run's ``cases`` row: ``best_relevant_position``,
            ``context`` and ``dropped``.
        relevant: The relevant document ids.
        top_k: The parent run's ``top_k``; ``None`` for an agent, which has no cut-off.
        called_context_tool: Whether an agent's recorded run called a context tool
            (``None`` for other systems). One that did not is ``TOOL_NOT_CALLED``
            whether or not the gold context, under a forced call, recovered it.
        repeated: With repeats, the passes of each re-execution; then ``control_passed``
            and ``gold_passed`` are read from it (see `RepeatedOutcome`).
    """
    position = recorded.get("best_relevant_position")
    counts: dict[str, int] = {}
    if repeated is not None:
        control_passed, gold_passed = repeated.unstable, repeated.intervention.all
        counts = {"repeats": repeated.intervention.repeats, "original_passes": repeated.original.passed,
                  "control_passes": repeated.control.passed, "intervention_passes": repeated.intervention.passed}
    if control_passed:
        name = "UNSTABLE"
    elif called_context_tool is False:
        name = "TOOL_NOT_CALLED"
    elif repeated is not None and repeated.intervention.some:
        name = "PARTIAL_RECOVERY"
    elif not gold_passed:
        name = "GENERATION_FAILURE"
    elif position is None:
        name = "RETRIEVAL_MISS"
    elif top_k is not None and position > top_k:
        name = "RANKED_OUT"
    elif any(p["doc_id"] in relevant for p in recorded.get("context") or []):
        name = "CONTEXT_DISTRACTION"
    else:
        name = "CONTEXT_ASSEMBLY_LOSS"
    strength = "intervention_recovery" if gold_passed else "intervention_non_recovery"
    if name == "UNSTABLE":
        strength = "control_recovery"
    elif name == "PARTIAL_RECOVERY":
        strength = "partial_recovery"
    return CaseLabel(
        case_id=case_id,
        label=name,
        reason=LABELS[name].reason,
        strength=strength,
        best_relevant_position=position,
        control_passed=control_passed,
        intervention_passed=gold_passed,
        **counts,
    )


def implicated_factor(labels: list[CaseLabel]) -> tuple[str, int, int] | None:
    """The factor behind the most recovered failures: ``(factor, count, recovered)``.

    When nothing recovered but some cases still failed with the gold context,
    generation is implicated among the diagnosed failures.
    """
    # A tool not called is a failure whether or not the forced call recovered it: count only recoveries.
    recovered = [c for c in labels if c.label not in NOT_DIAGNOSED | {"GENERATION_FAILURE"} and c.intervention_passed]
    if recovered:
        counts = {factor: 0 for factor in _FACTOR_ORDER}
        for case in recovered:
            counts[LABELS[case.label].factor or ""] += 1
        factor = max(_FACTOR_ORDER, key=lambda name: (counts[name], -_FACTOR_ORDER.index(name)))
        return factor, counts[factor], len(recovered)
    failures = [c for c in labels if c.label == "GENERATION_FAILURE"]
    if failures:
        return "generation", len(failures), len(failures)
    return None
