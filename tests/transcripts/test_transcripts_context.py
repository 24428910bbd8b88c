"""`extract_context`: the judged response, the context tools' passages, and the transcript without them."""

from __future__ import annotations

import copy
import json
import re

import pytest
from conversations import ANSWER, EXPECTED, FORMATS, QUESTION, SEARCH_FORMATS

from oloproof import ConfigError
from oloproof.transcripts import (
    ContextPassage,
    ContextTool,
    Message,
    ToolCall,
    ToolResult,
    Transcript,
    TranscriptError,
    extract_context,
    read_transcript,
)

SEARCH_KB = ContextTool(name="search_kb", id_field="doc_id")


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_gives_the_same_response_and_context(name):
    extraction = extract_context(read_transcript(FORMATS[name]), [SEARCH_KB])
    assert extraction.response == ANSWER
    assert extraction.passages == (
        ContextPassage(number=1, document_id="kb-3", text="Refunds take 5 days.", tool="search_kb", call_id="c1",
                       rank=1),
        ContextPassage(number=2, document_id="kb-9", text="Refunds go to the original card.", tool="search_kb",
                       call_id="c1", rank=2),
    )
    assert extraction.not_applicable is None
    # The context tool's result is gone; its call and the other tool's result stay.
    assert extraction.transcript == Transcript(messages=EXPECTED.messages[:2] + EXPECTED.messages[3:])


@pytest.mark.parametrize("name", sorted(SEARCH_FORMATS))
def test_a_file_search_gives_the_same_context_in_every_format(name):
    extraction = extract_context(read_transcript(SEARCH_FORMATS[name]))
    assert [(p.number, p.document_id, p.text, p.rank) for p in extraction.passages] == [
        (1, "refunds.md", "Refunds take 5 days.", 1),
        (2, "file-2", "Cards are refunded.", 2),  # no file name: the file id
    ]
    assert extraction.response == ANSWER
    assert [message.role for message in extraction.transcript.messages] == ["user", "assistant", "assistant"]


def _search(*results: tuple[str, str, object]) -> Transcript:
    """A transcript calling the named tools in order, each answered with its result, then an answer."""
    calls = tuple(ToolCall(name=name, id=call_id, arguments={}) for name, call_id, _ in results)
    return Transcript(messages=(
        Message(role="user", texts=(QUESTION,)),
        Message(role="assistant", tool_calls=calls),
        # Results out of call order: passages still follow the calls.
        *(Message(role="tool", tool_results=(ToolResult(call_id=call_id, content=content),))
          for _, call_id, content in reversed(results)),
        Message(role="assistant", texts=("Part one, ", "part two.")),
    ))


def test_passages_follow_call_order_then_rank_and_each_content_text_is_one():
    transcript = _search(
        ("file_search", "a", [{"file_name": "x.md", "content": [{"text": "x1"}, {"type": "text", "text": "x2"}]}]),
        ("search_kb", "b", [{"doc_id": "kb-1", "text": "k1"}, {"doc_id": "kb-2", "text": "k2"}]),
        ("other", "c", "not a context tool"),
    )
    extraction = extract_context(transcript, [SEARCH_KB])
    assert [(p.number, p.document_id, p.text, p.tool, p.rank) for p in extraction.passages] == [
        (1, "x.md", "x1", "file_search", 1), (2, "x.md", "x2", "file_search", 1),
        (3, "kb-1", "k1", "search_kb", 1), (4, "kb-2", "k2", "search_kb", 2),
    ]
    assert extraction.response == "Part one, part two."
    assert [m.tool_results[0].call_id for m in extraction.transcript.messages if m.role == "tool"] == ["c"]


def test_no_context_tool_result_is_not_applicable():
    extraction = extract_context(_search(("other", "c", "x")), [SEARCH_KB])
    assert extraction.not_applicable == "no_context_tool_results"
    assert extraction.passages == ()
    assert extraction.transcript == _search(("other", "c", "x"))


def test_a_tool_is_a_context_tool_only_when_named():
    assert extract_context(_search(("search_kb", "b", "[]"))).not_applicable == "no_context_tool_results"


def test_a_context_tool_that_found_nothing_is_applicable_with_no_passages():
    extraction = extract_context(_search(("file_search", "a", [])))
    assert (extraction.not_applicable, extraction.passages) == (None, ())


def test_a_single_assistant_message_is_not_applicable():
    transcript = Transcript(messages=(Message(role="assistant", texts=(ANSWER,)),))
    assert extract_context(transcript).not_applicable == "no_context_tool_results"


@pytest.mark.parametrize(
    ("content", "field", "message"),
    [
        pytest.param("[{oops", "messages[2].tool_results[0].content",
                     "expected a context tool's result as a list or JSON text of one", id="not-json-text"),
        pytest.param(json.dumps({"results": []}), "messages[2].tool_results[0].content (JSON text)",
                     "expected a list of results, got an object", id="json-text-of-an-object"),
        pytest.param([{"content": [{"text": "t"}]}], "messages[2].tool_results[0].content[0]",
                     "expected a file search result with 'file_name' or 'file_id'", id="no-file-name"),
        pytest.param([{"file_id": "f", "content": [{"text": ["t"]}]}],
                     "messages[2].tool_results[0].content[0].content[0].text", "expected a string, got a list",
                     id="text-not-a-string"),
        pytest.param([{"file_id": "f"}], "messages[2].tool_results[0].content[0]",
                     "expected a file search result with 'content'", id="no-content"),
    ],
)
def test_a_malformed_file_search_result_names_its_path(content, field, message):
    with pytest.raises(TranscriptError) as caught:
        extract_context(_search(("file_search", "a", content)))
    assert (caught.value.field, message in caught.value.message) == (field, True)


def test_a_result_without_the_configured_document_id_field_names_it():
    with pytest.raises(TranscriptError, match="expected a result of search_kb with 'doc_id'") as caught:
        extract_context(_search(("search_kb", "b", [{"id": "kb-1", "text": "k"}])), [SEARCH_KB])
    assert caught.value.field == "messages[2].tool_results[0].content[0]"


def test_a_transcript_that_does_not_end_with_assistant_text_is_refused():
    transcript = Transcript(messages=_search(("file_search", "a", [])).messages[:-1])
    with pytest.raises(TranscriptError, match="expected the transcript to end with an assistant message with text"):
        extract_context(transcript)


@pytest.mark.parametrize("tools", [[ContextTool(name="file_search", id_field="id")], [SEARCH_KB, SEARCH_KB]])
def test_file_search_or_a_tool_named_twice_is_a_configuration_error(tools):
    with pytest.raises(ConfigError) as caught:
        extract_context(_search(), tools)
    assert caught.value.field == f"context_tools[{len(tools) - 1}]"


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        pytest.param([Message(role="tool", tool_results=(ToolResult(call_id="x", content=""),))],
                     "messages[0]: result for 'x' answers no earlier unanswered call", id="result-for-no-call"),
        pytest.param([Message(role="user", tool_calls=(ToolCall(name="f", id="x", arguments={}),))],
                     "messages[0]: only assistant messages make tool calls", id="call-in-a-user-message"),
        pytest.param([Message(role="assistant", tool_calls=(ToolCall(name="f", id="x", arguments={}),) * 2)],
                     "call id 'x' is already an earlier call's", id="call-id-twice"),
    ],
)
def test_a_transcript_built_by_hand_pairs_calls_and_results(messages, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Transcript(messages=tuple(messages))


def test_a_failed_context_call_retrieved_nothing_and_its_error_text_is_no_passage():
    failed = copy.deepcopy(FORMATS["anthropic"])
    failed[2]["content"][0] = {"type": "tool_result", "tool_use_id": "c1", "is_error": True,
                               "content": "search backend down"}  # fmt: skip
    extraction = extract_context(read_transcript(failed), [ContextTool(name="search_kb", id_field="doc_id")])
    assert extraction.passages == () and extraction.not_applicable is None
    assert extraction.response == ANSWER
    failed[2]["content"][0]["is_error"] = "yes"
    with pytest.raises(TranscriptError) as raised:
        read_transcript(failed)
    assert raised.value.field == "[2].content[0].is_error"


def test_a_malformed_context_result_names_the_call_it_answers():
    broken = copy.deepcopy(FORMATS["chat"])
    broken[2]["content"] = "not json"
    with pytest.raises(TranscriptError, match="the result of search_kb call 'c1': expected a context tool's result"):
        extract_context(read_transcript(broken), [ContextTool(name="search_kb", id_field="doc_id")])
