"""A comparison of two runs, as ``comparisons/<id>.json`` holds it and ``--json`` prints it.

Plain typed dictionaries: the record is written and printed as it is built, so
its bytes (key order and ``null`` entries included) are the JSON of these values.
"""

from __future__ import annotations

from typing import NotRequired

from pydantic import JsonValue
from typing_extensions import TypedDict

__all__ = [
    "ComparisonRecord",
    "ComparisonScope",
    "DecisionEntry",
    "MetricLine",
    "PairedValues",
    "Pairing",
    "ProbeLine",
    "RulePlan",
]


class Pairing(TypedDict):
    """One criterion's judgments of two runs, paired by case id.

    Attributes:
        criterion: The criterion.
        pairs: ``(case_id, candidate value, baseline value)`` of each paired case.
        paired: How many cases were paired.
        missing: Cases missing in either run.
        judge_errors: Of those, the ones a judge failed on.
        excluded: Cases excluded in either run.
        unpaired: Cases present in one run only.
    """

    criterion: str
    pairs: list[tuple[str, float, float]]
    paired: int
    missing: int
    judge_errors: int
    excluded: int
    unpaired: int


class PairedValues(TypedDict):
    """Difference (candidate − baseline) and its paired interval, in points.

    Attributes:
        difference: The mean difference; ``None`` without pairs.
        low: The interval's lower bound.
        high: The interval's upper bound.
        method: The interval's method.
    """

    difference: float | None
    low: float | None
    high: float | None
    method: str


class MetricLine(TypedDict, total=False):
    """A compared criterion's line: its counts and its paired difference.

    Attributes:
        criterion: The criterion.
        confidence: The interval's confidence level.
        paired: Paired cases.
        missing: Cases missing in either run.
        judge_errors: Of those, the ones a judge failed on.
        excluded: Cases excluded in either run.
        unpaired: Cases present in one run only.
        difference: The mean difference, in points.
        low: The interval's lower bound.
        high: The interval's upper bound.
        method: The interval's method.
    """

    criterion: str
    confidence: float
    paired: int
    missing: int
    judge_errors: int
    excluded: int
    unpaired: int
    difference: float | None
    low: float | None
    high: float | None
    method: str


class ProbeLine(MetricLine, total=False):
    """An exploratory line over one slice value of the baseline.

    Attributes:
        slice: The slice.
        slice_value: Its value.
        scored: Whether it had enough pairs to estimate.
    """

    slice: str
    slice_value: str
    scored: bool


class DecisionEntry(TypedDict, total=False):
    """A policy rule's decision (the ``decisions`` table's row, `DecisionRow`, less the id).

    Attributes:
        rule: The rule's name.
        criterion: The metric it is about.
        kind: ``non-inferiority``, ``superiority`` or ``equivalence``.
        margin: The margin, in points.
        difference: The mean difference, in points.
        low: The interval's lower bound.
        high: The interval's upper bound.
        paired: Paired cases.
        verdict: ``PASS``, ``FAIL`` or ``INSUFFICIENT_EVIDENCE``.
        reason: The reason code.
        confidence: The interval's confidence level.
    """

    rule: str
    criterion: str
    kind: str
    margin: float
    difference: float | None
    low: float | None
    high: float | None
    paired: int
    verdict: str
    reason: str
    confidence: float


class ComparisonScope(TypedDict):
    """What a (partial) comparison leaves out.

    Attributes:
        different_specs: Criteria the runs judge with different evaluator specs.
        one_sided: Criteria only one run has.
        same_dataset: Whether both runs hold the same cases.
    """

    different_specs: list[str]
    one_sided: list[str]
    same_dataset: bool


class ComparisonRecord(TypedDict, total=False):
    """A comparison: metric lines, probes, decisions and the gate.

    Attributes:
        candidate_run_id: The candidate run.
        baseline_run_id: The baseline run.
        paired_cases: Cases both runs hold.
        confidence: The intervals' confidence level.
        method: How the intervals were chosen.
        metrics: One line per compared criterion.
        probes: Exploratory lines per slice value.
        decisions: One per policy rule.
        gate: ``PASS`` or ``BLOCK``; ``None`` without a policy.
        policy: The policy, as JSON.
        scope: What the comparison leaves out.
        comparison_id: ``sha256:`` of its content.
    """

    candidate_run_id: str
    baseline_run_id: str
    paired_cases: int
    confidence: float
    method: str
    metrics: list[MetricLine]
    probes: list[ProbeLine]
    decisions: list[DecisionEntry]
    gate: str | None
    policy: dict[str, JsonValue] | None
    scope: ComparisonScope
    comparison_id: str


class RulePlan(TypedDict):
    """``oloproof plan``: the pairs one rule needs, and every assumption behind the figure.

    Attributes:
        rule: The rule's name.
        metric: The metric it is about.
        kind: The rule's kind.
        margin: Its margin, in points.
        assumed_difference: The true difference assumed, in points.
        baseline_observed: The baseline's observed cases of the metric.
        baseline_mean: Their mean value.
        power: The power asked for.
        pass_fail: Whether the values are pass/fail.
        method: The gate's interval.
        discordance: The share of discordant cases assumed.
        discordance_source: Where it came from: given, pilot, raised or assumed.
        pilot_pairs: The pilot's pairs with the baseline.
        pilot_discordant: How many of them disagree.
        difference_sd: The spread of the pilot's paired differences (scores).
        required_pairs: The paired cases needed; ``None`` when beyond the search.
        error: Why no figure could be given.
        repeats: The baseline's repeats of each case: the plan's cases are cases × this.
        within_share: With repeats, the share of a sample's variance within its case.
        case_over_repeat: With repeats, how much more, per generation, one more case
            lowers the estimate's variance than one more repeat of every case.
        stable_repeats: With repeats, the fewest repeats of the candidate at which two
            identical runs of it get the same verdict against the baseline in all but
            2.5% of simulated pairs (`oloproof.stats.stable_repeats`); ``None`` when
            none up to 32 does, or nothing could be simulated.
        stable_flip_rate: The simulated share of pairs whose verdicts differ, at
            ``stable_repeats`` (at 32 where none is within 2.5%).
        stable_verdict: The verdict those simulated runs gave most often.
        stable_from: Whose samples the candidate's were drawn from: ``pilot`` or ``baseline``.
    """

    rule: str
    metric: str
    kind: str
    margin: float
    assumed_difference: float
    baseline_observed: int
    baseline_mean: float | None
    power: float
    pass_fail: bool | None
    method: str | None
    discordance: float | None
    discordance_source: str | None
    pilot_pairs: int | None
    pilot_discordant: int | None
    difference_sd: float | None
    required_pairs: int | None
    error: str | None
    repeats: int
    within_share: float | None
    case_over_repeat: float | None
    stable_repeats: NotRequired[int | None]
    stable_flip_rate: NotRequired[float]
    stable_verdict: NotRequired[str]
    stable_from: NotRequired[str]
