"""``data_mapping`` templates and how evaluators read their inputs through them."""

from __future__ import annotations

import pytest

from oloproof.evaluators import MISSING, CaseView, build_evaluators
from oloproof.evaluators._mapping import parse_template, sample_of
from oloproof.providers import ProviderConfig

PROVIDERS = {"local": ProviderConfig(type="openai", base_url="http://127.0.0.1:9/v1")}


def _judge(kind: str, **options):
    entry = {"type": kind, "provider": "local", "model": "m", **options}
    return build_evaluators([entry], rag=True, providers=PROVIDERS)[0]


def test_a_lone_reference_yields_the_value_itself():
    template = parse_template("{{item.docs}}")
    assert template.render({"docs": [1, {"a": 2}]}, None) == [1, {"a": 2}]
    assert template.render({}, None) is MISSING


def test_nested_fields_list_items_and_text_around_references():
    item = {"q": {"text": "hours?"}, "docs": ["a", "b"]}
    assert parse_template("{{ item.q.text }}").render(item, None) == "hours?"
    assert parse_template("{{item.docs.1}}").render(item, None) == "b"
    assert parse_template("Q: {{item.q.text}} / {{item.docs}}").render(item, None) == 'Q: hours? / ["a", "b"]'
    assert parse_template("Q: {{item.q.missing}}").render(item, None) is MISSING


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (3, "must be a string template"),
        (["{{item.a}}"], "must be a string template"),
        ("plain text", "references no field"),
        ("{{row.query}}", r"only 'item' \(the dataset row\) and 'sample'"),
        ("{{item.query}", "unbalanced braces"),
        ("{{item.a..b}}", "invalid field path"),
    ],
)
def test_bad_templates_are_refused(value, message):
    with pytest.raises(ValueError, match=message):
        parse_template(value)


def test_the_sample_of_a_staged_case():
    candidates = [{"doc_id": "d1", "text": "x", "score": 0.1}, {"doc_id": "d2", "text": "y", "score": 0.9}]
    sample = sample_of({"answer": "42"}, "answer", [{"doc_id": "d1", "text": "x"}], candidates)
    assert sample["output_text"] == "42" and sample["output"] == {"answer": "42"}
    # The catalogue's shape, ranked by the retriever's order (not its own scores).
    assert sample["retrieved_documents"] == [
        {"document_id": "d1", "relevance_score": 2.0}, {"document_id": "d2", "relevance_score": 1.0},
    ]  # fmt: skip


def test_one_mapping_reads_a_staged_systems_case():
    judge = _judge("relevance", data_mapping={"query": "{{item.input.question}}", "response": "{{sample.output_text}}"})
    view = CaseView(case_id="c1", input={"question": "When?"}, expected={}, metadata={}, output={"answer": "Now."},
                    item={"id": "c1", "input": {"question": "When?"}})  # fmt: skip
    fields = judge.read(view)
    assert fields["query"] == "When?" and fields["response"] == "Now."


def test_recorded_rows_default_to_fields_of_the_inputs_name():
    judge = _judge("groundedness")
    row = {"query": "q", "context": ["chunk one", {"doc_id": "kb-2", "text": "chunk two"}], "response": "r"}
    view = CaseView(case_id="line-1", input=row, expected={}, metadata={}, output=None, item=row, recorded=True)
    fields = judge.read(view)
    assert fields["context"] == "[1]\nchunk one\n\n[2] kb-2\nchunk two"
    assert judge.read(CaseView(case_id="x", input={}, expected={}, metadata={}, output=None,
                               item={"context": "c"}, recorded=True)).reason == "missing_field:response"  # fmt: skip


def test_an_optional_input_absent_is_not_an_exclusion():
    judge = _judge("groundedness")
    row = {"context": "c", "response": "r"}
    fields = judge.read(CaseView(case_id="x", input=row, expected={}, metadata={}, output=None, item=row, recorded=True))
    assert fields["query"] is None  # the no-query prompt is used


def test_a_mapping_key_the_evaluator_does_not_take():
    from oloproof._exceptions import EvaluatorConfigError

    with pytest.raises(EvaluatorConfigError, match=r"relevance has no input 'context' \(takes: query, response\)") as raised:
        _judge("relevance", data_mapping={"context": "{{item.context}}"})
    assert raised.value.field == "evaluators.0.data_mapping.context"


def test_no_mapping_keeps_the_spec_and_identity_as_they_were():
    plain = _judge("relevance")
    assert "data_mapping" not in plain.spec()["options"]
    mapped = _judge("relevance", data_mapping={"query": "{{item.q}}"})
    assert mapped.spec()["options"]["data_mapping"] == {"query": "{{item.q}}"}
    assert mapped.spec_hash != plain.spec_hash
