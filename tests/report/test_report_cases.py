"""``inspect RUN_ID``: one printed line per case of a run.

Covers the header, the order (by case id, whatever the input order), missing
cases with their failing stage, the verdict of each criterion (pass/fail, a score
with three decimals, missing and excluded with their reason), the relevant
position, the context (positions, chunks, token counts, ``empty``), passages
dropped by the token budget and the count of candidates below top-k.
"""

from __future__ import annotations

from oloproof.report import render_run_cases

REPORT = {"run_id": "run_01M3C3R5Y9D18WGSZQFA7N4XRT"}


def _case(case_id, *, context=None, dropped=None, relevant_position=None, status="ok", **extra):
    return {"case_id": case_id, "status": status, "error_stage": None, "error": None,
            "relevant_position": relevant_position, "context": context, "dropped": dropped, **extra}


def _verdict(case_id, criterion, *, passed=None, value=None, status="observed", reason=None):
    if passed is not None and value is None:
        value = float(passed)
    return {"case_id": case_id, "criterion": criterion, "status": status, "reason": reason,
            "passed": passed, "value": value}


def _kept(doc_id, position, tokens=None, chunk_id=None):
    return {"doc_id": doc_id, "chunk_id": chunk_id, "position": position, "tokens": tokens}


def _dropped(doc_id, position, reason, tokens=None, chunk_id=None):
    return {"doc_id": doc_id, "chunk_id": chunk_id, "position": position, "text": "…", "reason": reason,
            "tokens": tokens}


def test_header_names_the_run_and_counts_its_cases():
    lines = render_run_cases(REPORT, [_case("a"), _case("b")], [])
    assert lines[0] == "Run run_01M3C3R5Y9D18WGSZQFA7N4XRT · 2 cases"


def test_a_run_without_cases_is_its_header():
    assert render_run_cases(REPORT, [], []) == ["Run run_01M3C3R5Y9D18WGSZQFA7N4XRT · 0 cases"]


def test_cases_are_listed_by_id():
    cases = [_case("seat_count"), _case("money_back"), _case("refund_review")]
    judgments = [_verdict(c["case_id"], "answer_correct", passed=True) for c in cases]
    lines = render_run_cases(REPORT, cases, judgments)
    assert [line.split(":")[0] for line in lines[1:]] == ["money_back", "refund_review", "seat_count"]


def test_a_missing_case_names_its_failing_stage_and_error():
    case = {**_case("broken", status="missing"), "error_stage": "generate", "error": "RuntimeError: boom"}
    judgments = [_verdict("broken", "answer_correct", status="missing", reason="generate_error")]
    assert render_run_cases(REPORT, [case], judgments)[1] == "broken: missing (generate error: RuntimeError: boom)"


def test_verdicts_are_pass_fail_scores_and_non_observed_reasons_in_judgment_order():
    judgments = [
        _verdict("a", "answer_correct", passed=False),
        _verdict("a", "ndcg_at_6", value=0.63093),
        _verdict("a", "citations_valid", passed=True),
        _verdict("a", "recall_at_2", status="excluded", reason="no_relevance_labels"),
        _verdict("a", "groundedness", status="missing", reason="judge_error"),
    ]
    assert render_run_cases(REPORT, [_case("a")], judgments)[1] == (
        "a: answer_correct fail; ndcg_at_6 0.631; citations_valid pass; "
        "recall_at_2 excluded (no_relevance_labels); groundedness missing (judge_error)"
    )


def test_verdicts_of_other_cases_are_not_mixed_in():
    judgments = [_verdict("a", "answer_correct", passed=True), _verdict("b", "answer_correct", passed=False)]
    lines = render_run_cases(REPORT, [_case("a"), _case("b")], judgments)
    assert lines[1:] == ["a: answer_correct pass", "b: answer_correct fail"]


def test_a_binary_score_without_passed_prints_as_a_score():
    judgments = [_verdict("a", "hit_rate_at_2", value=1.0)]
    assert render_run_cases(REPORT, [_case("a")], judgments)[1] == "a: hit_rate_at_2 1.000"


def test_relevant_position_and_context_follow_the_verdicts():
    case = _case("refund_annual", relevant_position="1",
                 context=[_kept("kb-01", 1, tokens=21), _kept("kb-04", 2, tokens=15)])
    judgments = [_verdict("refund_annual", "answer_correct", passed=True)]
    assert render_run_cases(REPORT, [case], judgments)[1] == (
        "refund_annual: answer_correct pass · relevant position 1 · "
        "context kb-01 (position 1, 21 tokens), kb-04 (position 2, 15 tokens)"
    )


def test_a_relevant_position_label_is_printed_as_is():
    for label in ("none", "beyond_top_k", "unlabelled"):
        case = _case("a", relevant_position=label)
        line = render_run_cases(REPORT, [case], [_verdict("a", "answer_correct", passed=False)])[1]
        assert line == f"a: answer_correct fail · relevant position {label}"


def test_passages_without_a_token_count_and_chunked_passages():
    case = _case("a", context=[_kept("kb-01", 1), _kept("kb-02", 3, chunk_id="c7")])
    line = render_run_cases(REPORT, [case], [_verdict("a", "answer_correct", passed=True)])[1]
    assert line == "a: answer_correct pass · context kb-01 (position 1), kb-02#c7 (position 3)"


def test_an_empty_context_says_empty():
    case = _case("a", context=[], dropped=[])
    line = render_run_cases(REPORT, [case], [_verdict("a", "answer_correct", passed=False)])[1]
    assert line == "a: answer_correct fail · context empty"


def test_token_budget_drops_are_listed_and_candidates_below_top_k_counted():
    case = _case(
        "refund_review", relevant_position="2",
        context=[_kept("kb-07", 1, tokens=30)],
        dropped=[_dropped("kb-02", 2, "token_budget", tokens=25), _dropped("kb-03", 3, "beyond_top_k"),
                 _dropped("kb-04", 4, "beyond_top_k"), _dropped("kb-05", 5, "beyond_top_k", chunk_id="c1")],
    )
    line = render_run_cases(REPORT, [case], [_verdict("refund_review", "answer_correct", passed=False)])[1]
    assert line == (
        "refund_review: answer_correct fail · relevant position 2 · context kb-07 (position 1, 30 tokens) · "
        "dropped kb-02 (position 2, token_budget, 25 tokens) · 3 below top-k"
    )


def test_only_below_top_k_drops_print_no_dropped_list():
    case = _case("a", context=[_kept("kb-01", 1)], dropped=[_dropped("kb-03", 3, "beyond_top_k")])
    line = render_run_cases(REPORT, [case], [_verdict("a", "answer_correct", passed=True)])[1]
    assert line == "a: answer_correct pass · context kb-01 (position 1) · 1 below top-k"


def test_a_case_without_an_assembly_prints_verdicts_only():
    case = _case("plain")  # no retrieval, no context: a plain (non-RAG) system
    line = render_run_cases(REPORT, [case], [_verdict("plain", "answer_correct", passed=True)])[1]
    assert line == "plain: answer_correct pass"


def test_missing_and_ok_cases_together():
    cases = [{**_case("b", status="missing"), "error_stage": "retrieve", "error": "timeout after 5s"},
             _case("a", relevant_position="1", context=[_kept("kb-01", 1)])]
    judgments = [_verdict("a", "answer_correct", passed=True),
                 _verdict("b", "answer_correct", status="missing", reason="retrieve_error")]
    assert render_run_cases(REPORT, cases, judgments) == [
        "Run run_01M3C3R5Y9D18WGSZQFA7N4XRT · 2 cases",
        "a: answer_correct pass · relevant position 1 · context kb-01 (position 1)",
        "b: missing (retrieve error: timeout after 5s)",
    ]
