"""Agent-response mode: judges reading a query and a response given as message lists."""

from __future__ import annotations

import copy

import pytest
from transcripts.conversations import ANSWER, FORMATS, QUESTION, SEARCH_FORMATS

from oloproof._exceptions import DatasetError
from oloproof.evaluators import CaseView, Verdict, build_evaluators
from oloproof.providers import ProviderConfig
from oloproof.transcripts import ContextTool

PROVIDERS = {"local": ProviderConfig(type="openai", base_url="http://127.0.0.1:9/v1")}
MAPPING = {"query": "{{item.query}}", "response": "{{item.response}}"}
JUDGES = ("groundedness", "relevance", "retrieval", "response_completeness")
SEARCH_KB = ContextTool(name="search_kb")


def build(kind, *, tools=(SEARCH_KB,), recorded=True, mapping=None, **options):
    entry = {"type": kind, "provider": "local", "model": "m", **options}
    if mapping is not None:
        entry["data_mapping"] = mapping
    # A live agent with a context tool reads its retrieval as a staged system does.
    (built,) = build_evaluators([entry], rag=not recorded, recorded=recorded, providers=PROVIDERS,
                                context_tools=tools)  # fmt: skip
    return built


def recorded(row):
    return CaseView(case_id="r1", input=None, expected={}, metadata={}, output=None, item=row, recorded=True)


def prompt_of(evaluator, case):
    fields = evaluator.read(case)
    assert not isinstance(fields, Verdict), fields
    return evaluator.prompt_for(fields).render(fields)


@pytest.mark.parametrize("kind", ["groundedness", "retrieval"])
@pytest.mark.parametrize("conversation", [FORMATS, SEARCH_FORMATS], ids=["search_kb", "file_search"])
def test_the_four_formats_give_byte_identical_prompts(kind, conversation):
    evaluator = build(kind)
    prompts = {name: prompt_of(evaluator, recorded({"query": QUESTION, "response": messages}))
               for name, messages in conversation.items()}  # fmt: skip
    assert len(set(prompts.values())) == 1, prompts
    assert len(prompts) == 4


def test_mapped_message_lists_read_the_final_text_and_the_context_tools_results():
    evaluator = build("groundedness", mapping=MAPPING)
    row = {"query": [{"role": "user", "content": QUESTION}], "response": FORMATS["chat"]}
    fields = evaluator.read(recorded(row))
    assert fields["query"] == QUESTION and fields["response"] == ANSWER
    # Numbered in call order then rank, each with its document id; the order tool's result is not context.
    assert fields["context"] == "[1] kb-3\nRefunds take 5 days.\n\n[2] kb-9\nRefunds go to the original card."


def test_file_search_is_a_context_tool_without_configuration():
    evaluator = build("groundedness", tools=())
    fields = evaluator.read(recorded({"query": QUESTION, "response": SEARCH_FORMATS["vendor"]}))
    assert fields["context"] == "[1] refunds.md\nRefunds take 5 days.\n\n[2] file-2\nCards are refunded."


def test_a_tool_not_named_as_context_is_not_context():
    evaluator = build("groundedness", tools=())
    verdict = evaluator.read(recorded({"query": QUESTION, "response": FORMATS["anthropic"]}))
    assert verdict == Verdict.excluded("not_applicable:no_context_tool_results")


@pytest.mark.parametrize("kind", ["groundedness", "retrieval", "groundedness_pro"])
def test_no_context_tool_result_is_not_applicable(kind, monkeypatch):
    monkeypatch.setenv("CS_KEY", "k")
    evaluator = build(kind, tools=()) if kind != "groundedness_pro" else _pro()
    answer_only = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": ANSWER}]
    verdict = evaluator.read(recorded({"query": QUESTION, "response": answer_only}))
    assert verdict == Verdict.excluded("not_applicable:no_context_tool_results")


def _pro():
    (built,) = build_evaluators([{"type": "groundedness_pro", "endpoint": "https://127.0.0.1:9", "api_key_env": "CS_KEY"}],
                                rag=False, recorded=True, providers={}, context_tools=(SEARCH_KB,))  # fmt: skip
    return built


def test_groundedness_pro_reads_the_passages_and_the_final_text(monkeypatch):
    monkeypatch.setenv("CS_KEY", "k")
    fields = _pro().read(recorded({"query": QUESTION, "response": FORMATS["responses"]}))
    assert fields["sources"] == ["Refunds take 5 days.", "Refunds go to the original card."]
    assert fields["response"] == ANSWER and fields["query"] == QUESTION


def test_a_given_context_wins_over_the_extracted_one():
    evaluator = build("groundedness")
    fields = evaluator.read(recorded({"query": QUESTION, "response": FORMATS["vendor"], "context": "Given."}))
    assert fields["context"] == "Given." and fields["response"] == ANSWER


@pytest.mark.parametrize("kind", ["relevance", "response_completeness"])
def test_judges_without_context_read_the_final_text(kind):
    evaluator = build(kind)
    fields = evaluator.read(recorded({"query": QUESTION, "response": FORMATS["responses"], "ground_truth": "5 days"}))
    assert fields["response"] == ANSWER


def test_a_conversation_as_the_query_is_its_turns():
    evaluator = build("relevance")
    query = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
             {"role": "assistant", "content": "Hello."}, {"role": "user", "content": QUESTION}]  # fmt: skip
    fields = evaluator.read(recorded({"query": query, "response": FORMATS["vendor"]}))
    assert fields["query"] == f"User turn 1:\nHi\n\nAgent turn 1:\nHello.\n\nUser turn 2:\n{QUESTION}"


def test_a_live_agents_transcript_through_sample_output_items():
    evaluator = build("groundedness", recorded=False,
                      mapping={"query": "{{item.input.question}}", "response": "{{sample.output_items}}"})  # fmt: skip
    items = copy.deepcopy(FORMATS["vendor"])
    case = CaseView(case_id="c1", input={"question": QUESTION}, expected={}, metadata={}, output={"answer": "x"},
                    item={"id": "c1", "input": {"question": QUESTION}}, output_items=items)  # fmt: skip
    fields = evaluator.read(case)
    assert fields["response"] == ANSWER and fields["context"].startswith("[1] kb-3\n")


def test_a_live_agent_that_called_no_context_tool_is_not_applicable():
    evaluator = build("groundedness", recorded=False)
    case = CaseView(case_id="c1", input={"question": QUESTION}, expected={}, metadata={}, output={"answer": "x"},
                    output_items=[{"role": "user", "content": [{"type": "text", "text": QUESTION}]}])  # fmt: skip
    assert evaluator.read(case) == Verdict.excluded("not_applicable:no_context_tool_results")


def test_a_malformed_transcript_is_refused_before_anything_runs_naming_the_path_inside_it():
    evaluator = build("groundedness")
    broken = copy.deepcopy(FORMATS["chat"])
    broken[1]["tool_calls"][0]["function"]["arguments"] = "{not json"
    with pytest.raises(DatasetError) as raised:
        evaluator.check_case(recorded({"query": QUESTION, "response": broken}))
    assert raised.value.field == "response[1].tool_calls[0].function.arguments"
    orphan = copy.deepcopy(FORMATS["chat"])
    orphan[3]["tool_call_id"] = "nowhere"
    with pytest.raises(DatasetError, match="nowhere") as raised:
        evaluator.check_case(recorded({"query": QUESTION, "response": orphan}))
    assert raised.value.field.startswith("response[3]")


def test_a_mapped_transcript_names_the_row_field_it_came_from():
    evaluator = build("groundedness", mapping={"query": "{{item.q}}", "response": "{{item.agent.messages}}"})
    broken = copy.deepcopy(FORMATS["vendor"])
    broken[1]["content"][1]["arguments"] = "text"
    with pytest.raises(DatasetError) as raised:
        evaluator.check_case(recorded({"q": QUESTION, "agent": {"messages": broken}}))
    assert raised.value.field.startswith("agent.messages[1].content[1]")


def test_identity_follows_what_was_read_so_the_formats_share_one_judgment():
    evaluator = build("groundedness")
    reads = {name: evaluator.read(recorded({"query": QUESTION, "response": messages}))
             for name, messages in FORMATS.items()}  # fmt: skip
    assert all(fields == reads["vendor"] for fields in reads.values())


def test_document_retrieval_ranks_the_context_tools_results_in_call_order_then_rank():
    (evaluator,) = build_evaluators([{"type": "document_retrieval"}], rag=False, recorded=True,
                                    context_tools=(SEARCH_KB,))  # fmt: skip
    truth = [{"document_id": "kb-9", "query_relevance_label": 4}]
    reads = [evaluator.read(recorded({"retrieval_ground_truth": truth, "response": messages}))
             for messages in FORMATS.values()]  # fmt: skip
    assert reads[0]["retrieved_documents"] == [["kb-3", 2.0], ["kb-9", 1.0]]
    assert all(fields == reads[0] for fields in reads)
    answer_only = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": ANSWER}]
    assert evaluator.read(recorded({"retrieval_ground_truth": truth, "response": answer_only})) == Verdict.excluded(
        "not_applicable:no_context_tool_results"
    )
    broken = copy.deepcopy(FORMATS["responses"])
    broken[3]["arguments"] = "[1, 2"
    with pytest.raises(DatasetError) as raised:
        evaluator.check_case(recorded({"retrieval_ground_truth": truth, "response": broken}))
    assert raised.value.field == "response[3].arguments"


def test_a_message_list_where_text_is_expected_is_refused_naming_the_field():
    evaluator = build("response_completeness")
    row = {"response": FORMATS["vendor"], "ground_truth": FORMATS["chat"]}
    with pytest.raises(DatasetError, match="expected text, got a list of messages") as raised:
        evaluator.check_case(recorded(row))
    assert raised.value.field == "ground_truth"
    assert evaluator.read(recorded(row)) == Verdict.excluded(
        "invalid_field:ground_truth: expected text, got a list of messages")
