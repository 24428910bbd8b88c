"""Per-case facts a report slices by.

Covers ``best_relevant_position`` (first candidate whose document is labelled
relevant with a positive grade), ``case_facts`` (the ``relevant_position`` label:
a number, ``beyond_top_k``, ``none`` or ``unlabelled``; ``context_truncated`` from
token-budget drops; nothing for a missing case or one without a retrieval) and
``slice_value`` (the built-in slices and ``metadata.<path>`` lookups).
"""

from __future__ import annotations

import pytest

from oloproof.dataset import Case
from oloproof.report import best_relevant_position, case_facts, slice_value

NO_FACTS = {"best_relevant_position": None, "relevant_position": None, "context_truncated": None}


def _case(relevant=None, metadata=None):
    expected = {"answer": "14 days"}
    if relevant is not None:
        expected["relevant"] = relevant
    return Case(id="c1", input={"question": "q"}, expected=expected, metadata=metadata or {})


def _candidates(*doc_ids):
    return [{"doc_id": doc_id, "text": f"text of {doc_id}"} for doc_id in doc_ids]


def _ok(candidates, dropped=None):
    # What case_facts is given of an executed case: its candidates and what assembly dropped.
    return {"candidates": candidates, "dropped": dropped}


# -- best_relevant_position ---------------------------------------------------


def test_position_is_one_based_and_the_first_relevant_candidate_wins():
    case = _case([{"doc_id": "kb-03"}, {"doc_id": "kb-02"}])
    assert best_relevant_position(case, _candidates("kb-09", "kb-02", "kb-03")) == 2


def test_position_of_the_top_candidate_is_1():
    case = _case([{"doc_id": "kb-01"}])
    assert best_relevant_position(case, _candidates("kb-01", "kb-02")) == 1


def test_no_relevant_candidate_gives_no_position():
    case = _case([{"doc_id": "kb-01"}])
    assert best_relevant_position(case, _candidates("kb-05", "kb-06")) is None


def test_grade_zero_labels_are_judged_not_relevant():
    case = _case([{"doc_id": "kb-01", "grade": 0}, {"doc_id": "kb-02", "grade": 2}])
    assert best_relevant_position(case, _candidates("kb-01", "kb-02")) == 2


@pytest.mark.parametrize("candidates", [None, []])
def test_no_candidates_give_no_position(candidates):
    assert best_relevant_position(_case([{"doc_id": "kb-01"}]), candidates) is None


def test_a_case_without_labels_has_no_position():
    assert best_relevant_position(_case(), _candidates("kb-01")) is None


def test_position_is_by_document_whatever_the_chunk():
    case = _case([{"doc_id": "kb-01", "chunk_id": "c1"}])
    candidates = [{"doc_id": "kb-07", "chunk_id": "c1"}, {"doc_id": "kb-01", "chunk_id": "c9"}]
    assert best_relevant_position(case, candidates) == 2


# -- case_facts -----------------------------------------------------------------


def test_relevant_position_within_top_k_is_the_number():
    facts = case_facts(_case([{"doc_id": "kb-02"}]), **_ok(_candidates("kb-01", "kb-02")), top_k=2)
    assert facts == {"best_relevant_position": 2, "relevant_position": "2", "context_truncated": False}


def test_relevant_position_at_exactly_top_k_is_still_a_number():
    facts = case_facts(_case([{"doc_id": "kb-03"}]), **_ok(_candidates("a", "b", "kb-03")), top_k=3)
    assert facts["relevant_position"] == "3"


def test_relevant_position_below_top_k_is_beyond_top_k():
    facts = case_facts(_case([{"doc_id": "kb-03"}]), **_ok(_candidates("a", "b", "kb-03")), top_k=2)
    assert facts == {"best_relevant_position": 3, "relevant_position": "beyond_top_k", "context_truncated": False}


def test_without_top_k_every_position_is_a_number():
    facts = case_facts(_case([{"doc_id": "kb-06"}]), **_ok(_candidates("a", "b", "c", "d", "e", "kb-06")), top_k=None)
    assert facts["relevant_position"] == "6"


def test_relevant_document_never_retrieved_is_none():
    facts = case_facts(_case([{"doc_id": "kb-01"}]), **_ok(_candidates("kb-08", "kb-09")), top_k=2)
    assert facts == {"best_relevant_position": None, "relevant_position": "none", "context_truncated": False}


def test_an_empty_retrieval_of_a_labelled_case_is_none():
    facts = case_facts(_case([{"doc_id": "kb-01"}]), **_ok([]), top_k=2)
    assert facts == {"best_relevant_position": None, "relevant_position": "none", "context_truncated": False}


def test_a_case_without_relevance_labels_is_unlabelled():
    facts = case_facts(_case(), **_ok(_candidates("kb-01")), top_k=2)
    assert facts == {"best_relevant_position": None, "relevant_position": "unlabelled", "context_truncated": False}


def test_an_empty_label_list_is_unlabelled():
    facts = case_facts(_case([]), **_ok(_candidates("kb-01")), top_k=2)
    assert facts["relevant_position"] == "unlabelled"


def test_a_token_budget_drop_truncates_the_context():
    dropped = [{"doc_id": "kb-02", "position": 2, "reason": "token_budget"}]
    facts = case_facts(_case([{"doc_id": "kb-01"}]), **_ok(_candidates("kb-01", "kb-02"), dropped), top_k=2)
    assert facts["context_truncated"] is True


def test_drops_below_top_k_alone_do_not_truncate():
    dropped = [{"doc_id": "kb-03", "position": 3, "reason": "beyond_top_k"}]
    facts = case_facts(_case([{"doc_id": "kb-01"}]), **_ok(_candidates("kb-01", "kb-02", "kb-03"), dropped), top_k=2)
    assert facts["context_truncated"] is False


def test_one_token_budget_drop_among_others_truncates():
    dropped = [{"doc_id": "kb-03", "position": 3, "reason": "beyond_top_k"},
               {"doc_id": "kb-02", "position": 2, "reason": "token_budget"}]
    facts = case_facts(_case([{"doc_id": "kb-01"}]), **_ok(_candidates("kb-01", "kb-02", "kb-03"), dropped), top_k=2)
    assert facts["context_truncated"] is True


def test_a_case_without_candidates_has_no_facts():
    # Missing cases and plain systems have no retrieval to take facts from.
    assert case_facts(_case([{"doc_id": "kb-01"}]), None, None, top_k=2) == NO_FACTS
    assert case_facts(_case([{"doc_id": "kb-01"}]), None, [{"position": 1, "reason": "token_budget"}], 2) == NO_FACTS


# -- slice_value ----------------------------------------------------------------

FACTS = {"best_relevant_position": 2, "relevant_position": "2", "context_truncated": True}


def test_relevant_position_slice_is_the_label():
    assert slice_value("relevant_position", _case(), FACTS) == "2"
    assert slice_value("relevant_position", _case(), {**FACTS, "relevant_position": "none"}) == "none"


@pytest.mark.parametrize(("truncated", "expected"), [(True, "true"), (False, "false"), (None, None)])
def test_context_truncated_slice_is_lowercase_text(truncated, expected):
    assert slice_value("context_truncated", _case(), {**FACTS, "context_truncated": truncated}) == expected


def test_facts_of_a_case_without_retrieval_are_in_no_slice():
    assert slice_value("relevant_position", _case(), NO_FACTS) is None
    assert slice_value("context_truncated", _case(), NO_FACTS) is None


def test_metadata_slice_reads_the_field():
    assert slice_value("metadata.topic", _case(metadata={"topic": "billing"}), FACTS) == "billing"


def test_metadata_slice_follows_nested_fields():
    case = _case(metadata={"account": {"plan": {"tier": "annual"}}})
    assert slice_value("metadata.account.plan.tier", case, FACTS) == "annual"


def test_metadata_slice_values_are_text():
    case = _case(metadata={"seats": 12, "ratio": 0.5})
    assert slice_value("metadata.seats", case, FACTS) == "12"
    assert slice_value("metadata.ratio", case, FACTS) == "0.5"


@pytest.mark.parametrize(
    "metadata",
    [{}, {"topic": None}, {"other": "x"}],
    ids=["no-metadata", "null-value", "other-field"],
)
def test_a_case_without_the_field_is_in_no_slice_value(metadata):
    assert slice_value("metadata.topic", _case(metadata=metadata), FACTS) is None


def test_a_path_through_a_non_mapping_is_in_no_slice_value():
    case = _case(metadata={"account": "enterprise"})
    assert slice_value("metadata.account.plan", case, FACTS) is None

