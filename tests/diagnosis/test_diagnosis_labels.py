"""label_case and implicated_factor: which label a failure gets, and which factor is implicated."""

from __future__ import annotations

import pytest

from oloproof.diagnosis import FACTORS, LABELS, CaseLabel, implicated_factor, label_case


def _recorded(position, context_ids=()):
    return {
        "best_relevant_position": position,
        "context": [{"doc_id": doc_id, "position": i + 1} for i, doc_id in enumerate(context_ids)],
        "dropped": [],
    }


def _label(*, control=False, gold=True, position=None, context_ids=(), relevant=("kb-1",), top_k=2):
    return label_case(
        "c1",
        control_passed=control,
        gold_passed=gold,
        recorded=_recorded(position, context_ids),
        relevant=set(relevant),
        top_k=top_k,
    )


def test_no_relevant_retrieved_and_gold_recovers_is_retrieval_miss():
    label = _label(position=None, context_ids=("kb-9", "kb-8"))
    assert label == CaseLabel(
        case_id="c1", label="RETRIEVAL_MISS", reason="relevant_not_retrieved",
        strength="intervention_recovery", best_relevant_position=None,
        control_passed=False, intervention_passed=True,
    )


def test_relevant_below_top_k_is_ranked_out():
    label = _label(position=3, context_ids=("kb-9", "kb-8"), top_k=2)
    assert (label.label, label.reason, label.strength, label.best_relevant_position) == (
        "RANKED_OUT", "relevant_ranked_out", "intervention_recovery", 3)


def test_relevant_at_exactly_top_k_is_not_ranked_out():
    dropped = _label(position=2, context_ids=("kb-9",), top_k=2)
    assert dropped.label == "CONTEXT_ASSEMBLY_LOSS"
    kept = _label(position=2, context_ids=("kb-9", "kb-1"), top_k=2)
    assert kept.label == "CONTEXT_DISTRACTION"


def test_relevant_within_top_k_but_missing_from_context_is_context_assembly_loss():
    label = _label(position=1, context_ids=("kb-9",), top_k=2)
    assert (label.label, label.reason, label.strength) == (
        "CONTEXT_ASSEMBLY_LOSS", "relevant_dropped_from_context", "intervention_recovery")


def test_relevant_in_context_and_gold_recovers_is_context_distraction():
    label = _label(position=2, context_ids=("kb-9", "kb-1"), top_k=2)
    assert (label.label, label.reason, label.strength) == (
        "CONTEXT_DISTRACTION", "recovered_with_relevant_in_context", "intervention_recovery")


def test_context_key_absent_or_none_counts_as_nothing_in_context():
    for recorded in ({"best_relevant_position": 1}, {"best_relevant_position": 1, "context": None}):
        label = label_case("c1", control_passed=False, gold_passed=True, recorded=recorded,
                           relevant={"kb-1"}, top_k=2)
        assert label.label == "CONTEXT_ASSEMBLY_LOSS"


def test_only_relevant_documents_count_as_relevant_in_context():
    # kb-2 is in the context but is not relevant: the relevant kb-1 was dropped.
    label = _label(position=1, context_ids=("kb-2",), relevant=("kb-1",), top_k=2)
    assert label.label == "CONTEXT_ASSEMBLY_LOSS"
    several = _label(position=1, context_ids=("kb-2",), relevant=("kb-1", "kb-2"), top_k=2)
    assert several.label == "CONTEXT_DISTRACTION"


@pytest.mark.parametrize("position", [None, 1, 5])
def test_failing_with_gold_context_is_generation_failure_wherever_the_relevant_was(position):
    label = _label(gold=False, position=position, context_ids=("kb-1",))
    assert (label.label, label.reason, label.strength, label.intervention_passed) == (
        "GENERATION_FAILURE", "fails_with_gold_context", "intervention_non_recovery", False)
    assert label.best_relevant_position == position


@pytest.mark.parametrize("gold", [True, False])
@pytest.mark.parametrize("position", [None, 1, 5])
def test_passing_the_control_is_unstable_whatever_else(gold, position):
    label = _label(control=True, gold=gold, position=position)
    assert (label.label, label.reason, label.strength) == (
        "UNSTABLE", "passes_on_plain_reexecution", "control_recovery")
    assert label.control_passed is True and label.intervention_passed is gold


def test_every_label_has_its_reason_and_a_non_causal_description():
    assert list(LABELS) == ["RETRIEVAL_MISS", "RANKED_OUT", "CONTEXT_ASSEMBLY_LOSS",
                            "CONTEXT_DISTRACTION", "GENERATION_FAILURE", "UNSTABLE", "PARTIAL_RECOVERY",
                            "TOOL_NOT_CALLED"]
    for name, label in LABELS.items():
        assert label.name == name
        assert label.factor is None or label.factor in FACTORS
        text = " ".join([label.description, *(e for es in FACTORS.values() for e in es)]).lower()
        for word in ("cause of", "caused", "because", "root cause"):
            assert word not in text
    assert LABELS["UNSTABLE"].factor is None
    assert LABELS["PARTIAL_RECOVERY"].factor is None


def _case(name, control=False, gold=True):
    return CaseLabel(case_id=name.lower(), label=name, reason=LABELS[name].reason, strength="x",
                     best_relevant_position=None, control_passed=control, intervention_passed=gold)


def test_implicated_factor_of_the_example():
    labels = [_case("RETRIEVAL_MISS"), _case("CONTEXT_ASSEMBLY_LOSS"), _case("CONTEXT_ASSEMBLY_LOSS"),
              _case("GENERATION_FAILURE", gold=False)]
    assert implicated_factor(labels) == ("context budget", 2, 3)


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["RANKED_OUT"], ("top-k cut-off", 1, 1)),
        (["RETRIEVAL_MISS", "RETRIEVAL_MISS", "RANKED_OUT"], ("retrieval", 2, 3)),
        (["CONTEXT_DISTRACTION", "CONTEXT_DISTRACTION", "RANKED_OUT"], ("context composition", 2, 3)),
        # Ties go to the first factor in the fixed order: budget, top-k, retrieval, composition.
        (["CONTEXT_DISTRACTION", "RETRIEVAL_MISS"], ("retrieval", 1, 2)),
        (["RETRIEVAL_MISS", "RANKED_OUT"], ("top-k cut-off", 1, 2)),
        (["RANKED_OUT", "CONTEXT_ASSEMBLY_LOSS"], ("context budget", 1, 2)),
    ],
)
def test_implicated_factor_is_the_factor_of_most_recovered_failures(names, expected):
    assert implicated_factor([_case(n) for n in names]) == expected


def test_unstable_and_generation_failures_are_not_counted_as_recovered():
    labels = [_case("RANKED_OUT"), _case("UNSTABLE", control=True), _case("GENERATION_FAILURE", gold=False),
              _case("GENERATION_FAILURE", gold=False)]
    assert implicated_factor(labels) == ("top-k cut-off", 1, 1)


def test_generation_is_implicated_only_when_nothing_recovered():
    labels = [_case("GENERATION_FAILURE", gold=False), _case("GENERATION_FAILURE", gold=False),
              _case("UNSTABLE", control=True)]
    assert implicated_factor(labels) == ("generation", 2, 2)


def test_nothing_is_implicated_without_diagnosed_failures():
    assert implicated_factor([]) is None
    assert implicated_factor([_case("UNSTABLE", control=True)]) is None


def _agent(*, called, control=False, gold=True, position=None, context_ids=()):
    return label_case("c1", control_passed=control, gold_passed=gold, recorded=_recorded(position, context_ids),
                      relevant={"kb-1"}, top_k=None, called_context_tool=called)  # fmt: skip


@pytest.mark.parametrize("gold", [True, False])
def test_an_agent_that_called_no_context_tool_is_tool_not_called_recovered_or_not(gold):
    label = _agent(called=False, gold=gold)
    assert (label.label, label.reason, label.intervention_passed) == ("TOOL_NOT_CALLED", "context_tool_not_called", gold)
    assert label.strength == ("intervention_recovery" if gold else "intervention_non_recovery")


def test_an_agent_that_searched_takes_the_staged_labels_without_a_cut_off():
    assert _agent(called=True, position=None).label == "RETRIEVAL_MISS"
    assert _agent(called=True, gold=False, position=1, context_ids=("kb-1",)).label == "GENERATION_FAILURE"
    # No top_k: a relevant passage at any position was in what the agent read.
    assert _agent(called=True, position=9, context_ids=("kb-2",) * 8 + ("kb-1",)).label == "CONTEXT_DISTRACTION"
    assert _agent(called=False, control=True).label == "UNSTABLE"


def test_a_tool_not_called_that_did_not_recover_is_no_recovered_failure():
    labels = [_case("TOOL_NOT_CALLED", gold=False), _case("GENERATION_FAILURE", gold=False)]
    assert implicated_factor(labels) == ("generation", 1, 1)
    assert implicated_factor([_case("TOOL_NOT_CALLED"), _case("RETRIEVAL_MISS"), _case("TOOL_NOT_CALLED")]) == (
        "tool use", 2, 3)
