"""LLM judges: what they read, their identity, and the configuration errors they raise."""

from __future__ import annotations

import pytest

from oloproof._exceptions import EvaluatorConfigError
from oloproof.evaluators import CaseView, Verdict, build_evaluators, registered_evaluators
from oloproof.providers import ProviderConfig

PROVIDERS = {
    "local": ProviderConfig(type="openai", base_url="http://127.0.0.1:9/v1"),
    "claude": ProviderConfig(type="anthropic", api_key_env="ANTHROPIC_KEY_FOR_TESTS"),
}
CONTEXT = [
    {"doc_id": "kb-01", "chunk_id": None, "text": "Refunds for annual plans take 14 days."},
    {"doc_id": "kb-02", "chunk_id": "c3", "text": "Monthly plans renew each month."},
]


def judge(entry, *, providers=PROVIDERS, directory=None):
    (built,) = build_evaluators([entry], rag=True, providers=providers, directory=directory)
    return built


def view(output=None, *, context=CONTEXT, question="How long do refunds take?", expected=None):
    return CaseView(
        case_id="c1", input={"question": question} if question is not None else {},
        expected=expected or {}, metadata={}, output=output or {"answer": "14 days.", "citations": ["kb-01"]},
        context=context, candidates=context,
    )  # fmt: skip


def test_the_catalogue_and_walkthrough_judges_are_registered():
    names = set(registered_evaluators())
    assert {"groundedness", "groundedness_judge", "relevance", "retrieval", "response_completeness",
            "citation_support_judge"} <= names  # fmt: skip


def test_groundedness_reads_the_assembled_context_as_numbered_passages():
    fields = judge({"type": "groundedness", "provider": "local", "model": "m"}).read(view())
    assert fields["query"] == "How long do refunds take?" and fields["response"] == "14 days."
    assert fields["context"] == (
        "[1] kb-01\nRefunds for annual plans take 14 days.\n\n[2] kb-02#c3\nMonthly plans renew each month."
    )
    assert "[{" not in fields["context"] and "'doc_id'" not in fields["context"]


def test_groundedness_without_a_query_uses_its_own_prompt():
    evaluator = judge({"type": "groundedness", "provider": "local", "model": "m"})
    with_query = evaluator.read(view())
    without = evaluator.read(view(question=None))
    assert without["query"] is None and with_query["prompt"] != without["prompt"]
    _system, user = evaluator.prompt_for(without).render(without)
    assert "Question" not in user and "14 days." in user


@pytest.mark.parametrize(
    ("entry", "case", "reason"),
    [
        ({"type": "groundedness"}, view(context=[]), "not_applicable:empty_context"),
        ({"type": "groundedness"}, view(output={"text": "x"}), "missing_field:response"),
        ({"type": "relevance"}, view(question=None), "missing_field:query"),
        ({"type": "response_completeness"}, view(), "missing_field:ground_truth"),
        ({"type": "retrieval"}, view(context=[]), "not_applicable:empty_retrieval"),
        ({"type": "citation_support_judge"}, view(output={"answer": "x", "citations": []}),
         "not_applicable:no_citations"),
    ],
)  # fmt: skip
def test_nothing_to_judge_is_a_skip_with_its_reason(entry, case, reason):
    read = judge({**entry, "provider": "local", "model": "m"}).read(case)
    assert read == Verdict.excluded(reason)


def test_response_completeness_reads_the_expected_answer():
    fields = judge({"type": "response_completeness", "provider": "local", "model": "m"}).read(
        view(expected={"answer": ["14 days", "two weeks"]})
    )
    assert fields["ground_truth"] == "14 days\ntwo weeks" and fields["response"] == "14 days."


def test_the_threshold_and_the_provider_name_are_not_the_judgment_identity():
    base = judge({"type": "groundedness", "provider": "local", "model": "m"})
    stricter = judge({"type": "groundedness", "provider": "local", "model": "m", "threshold": 4})
    assert base.identity() == stricter.identity() and base.spec() != stricter.spec()
    assert stricter.output.threshold == 4 and stricter.kind == "proportion"
    other_model = judge({"type": "groundedness", "provider": "local", "model": "m2"})
    other_type = judge({"type": "groundedness", "provider": "claude", "model": "m"})
    hotter = judge({"type": "groundedness", "provider": "local", "model": "m", "temperature": 0.7})
    identities = [e.identity() for e in (base, other_model, other_type, hotter)]
    assert len({repr(i) for i in identities}) == 4
    assert base.identity()["provider_type"] == "openai"


def test_scores_become_verdicts_through_the_threshold():
    output = judge({"type": "relevance", "provider": "local", "model": "m", "threshold": 4}).output
    assert output.verdict_of(4.0) == (1.0, True, "pass")
    assert output.verdict_of(3.0) == (0.0, False, "fail")
    unthresholded = judge({"type": "relevance", "provider": "local", "model": "m", "threshold": None}).output
    assert unthresholded.verdict_of(5.0) == (1.0, None, None) and unthresholded.verdict_of(2.0) == (0.25, None, None)


def test_citation_support_asks_about_the_cited_passages_only():
    evaluator = judge({"type": "citation_support_judge", "provider": "local", "model": "m"})
    fields = evaluator.read(view({"answer": "14 days.", "citations": ["kb-01", "kb-01", "kb-99", "kb-02#c3"]}))
    assert fields["cited"] == ["kb-01", "kb-99", "kb-02#c3"]
    assert fields["passages"] == {"kb-01": CONTEXT[0]["text"], "kb-02#c3": CONTEXT[1]["text"]}
    assert evaluator.kind == "mean"


def test_a_citation_reply_that_skips_a_citation_is_an_error():
    evaluator = judge({"type": "citation_support_judge", "provider": "local", "model": "m"})
    fields = evaluator.read(view({"answer": "14 days.", "citations": ["kb-01", "kb-02#c3"]}))
    partial = evaluator.verdict_of({"citations": [{"id": "kb-01", "supported": True, "reason": "r"}]}, {}, fields)
    assert partial.status == "error" and "kb-02#c3" in partial.reason
    whole = evaluator.verdict_of({"citations": [
        {"id": "kb-01", "supported": True, "reason": "r"}, {"id": "kb-02#c3", "supported": False, "reason": "r"},
    ]}, {}, fields)  # fmt: skip
    assert (whole.status, whole.score, whole.detail["unsupported"]) == ("observed", 0.5, ["kb-02#c3"])


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        ({"provider": "nowhere"}, "evaluators.0.provider", "no provider named 'nowhere' (configured: claude, local)"),
        ({"threshold": 7}, "evaluators.0.threshold", "threshold 7 is outside the score range 1-5"),
        ({"temperature": 3}, "evaluators.0.temperature", None),
        ({"model": None}, "evaluators.0.model", None),
    ],
)  # fmt: skip
def test_bad_judge_options_name_their_field(entry, field, message):
    with pytest.raises(EvaluatorConfigError) as raised:
        judge({"type": "groundedness", "provider": "local", "model": "m", **entry})
    assert raised.value.field == field
    if message is not None:
        assert raised.value.message == message


def test_a_project_prompt_replaces_the_packaged_one(tmp_path):
    (tmp_path / "strict.md").write_text("[system]\nBe strict.\n[user]\n{{context}}\n---\n{{response}}\n")
    evaluator = judge({"type": "groundedness", "provider": "local", "model": "m", "prompt": "strict.md"},
                      directory=tmp_path)  # fmt: skip
    fields = evaluator.read(view())
    system, user = evaluator.prompt_for(fields).render(fields)
    assert system == "Be strict." and user.endswith("---\n14 days.")
    assert fields["prompt"] != judge({"type": "groundedness", "provider": "local", "model": "m"}).read(view())["prompt"]


def test_a_prompt_field_the_judge_does_not_read_names_the_file_and_line(tmp_path):
    (tmp_path / "bad.md").write_text("[system]\nGrade.\n[user]\n{{response}}\n{{ground_truth}}\n")
    with pytest.raises(EvaluatorConfigError) as raised:
        judge({"type": "groundedness", "provider": "local", "model": "m", "prompt": "bad.md"}, directory=tmp_path)
    error = raised.value
    assert (error.path, error.line, error.field) == (str(tmp_path / "bad.md"), 5, "ground_truth")
    assert str(error).count("\n") == 0


def test_rendering_inserts_text_once():
    evaluator = judge({"type": "relevance", "provider": "local", "model": "m"})
    fields = evaluator.read(view({"answer": "Use {{query}} literally."}))
    _, user = evaluator.prompt_for(fields).render(fields)
    assert "Use {{query}} literally." in user


@pytest.mark.parametrize("option", [{"threshold": "3"}, {"temperature": "0"}])
def test_judge_numbers_are_never_read_from_text(option):
    from oloproof._exceptions import EvaluatorConfigError
    from oloproof.evaluators._judges import JudgeOptions

    with pytest.raises((EvaluatorConfigError, ValueError)):
        JudgeOptions.model_validate({"provider": "p", "model": "m", **option})
