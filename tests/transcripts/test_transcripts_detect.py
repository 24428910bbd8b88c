"""The four readers and `read_transcript`: one conversation reads the same from every format."""

from __future__ import annotations

import pytest
from conversations import EXPECTED, FORMATS, SEARCH_FORMATS

from oloproof import DatasetError
from oloproof.transcripts import (
    Message,
    Transcript,
    TranscriptError,
    read_anthropic_messages,
    read_chat_messages,
    read_responses_items,
    read_transcript,
    read_vendor_messages,
)

READERS = {
    "vendor": read_vendor_messages,
    "chat": read_chat_messages,
    "responses": read_responses_items,
    "anthropic": read_anthropic_messages,
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_reads_to_the_same_transcript(name):
    assert READERS[name](FORMATS[name]) == EXPECTED


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_read_transcript_tells_the_format(name):
    assert read_transcript(FORMATS[name]) == EXPECTED


@pytest.mark.parametrize("name", sorted(SEARCH_FORMATS))
def test_read_transcript_tells_the_format_of_a_file_search(name):
    assert read_transcript(SEARCH_FORMATS[name]) == READERS[name](SEARCH_FORMATS[name])


def test_a_file_search_call_reads_like_the_vendors_file_search():
    assert read_responses_items(SEARCH_FORMATS["responses"]) == read_vendor_messages(SEARCH_FORMATS["vendor"])


def test_plain_text_messages_read_though_no_format_can_be_told():
    value = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    assert read_transcript(value) == Transcript(messages=(
        Message(role="user", texts=("Hi",)), Message(role="assistant", texts=("Hello",))))


def test_file_search_calls_in_a_row_are_one_assistant_message_before_their_results():
    items = [
        {"type": "file_search_call", "id": "fs_1", "queries": ["a"], "results": []},
        {"type": "file_search_call", "id": "fs_2", "queries": ["b"], "results": None},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
    ]
    transcript = read_responses_items(items)
    assert [message.role for message in transcript.messages] == ["assistant", "tool", "assistant"]
    assert [call.id for call in transcript.messages[0].tool_calls] == ["fs_1", "fs_2"]
    assert transcript.messages[1].tool_results[0].call_id == "fs_1"  # fs_2 came without results


def _chat_call(arguments: str) -> list[object]:
    return [{"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search_kb", "arguments": arguments}}]}]


BAD = [
    pytest.param(read_chat_messages, [{"role": "tool", "tool_call_id": "c9", "content": "x"}],
                 "[0].tool_call_id", "got 'c9', which matches no call", id="chat-result-for-no-call"),
    pytest.param(read_vendor_messages,
                 [{"role": "tool", "tool_call_id": "c9", "content": [{"type": "tool_result", "tool_result": []}]}],
                 "[0].tool_call_id", "matches no call", id="vendor-result-for-no-call"),
    pytest.param(read_anthropic_messages,
                 [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c9", "content": "x"}]}],
                 "[0].content[0].tool_use_id", "matches no call", id="anthropic-result-for-no-call"),
    pytest.param(read_responses_items, [{"type": "function_call_output", "call_id": "c9", "output": "x"}],
                 "[0].call_id", "matches no call", id="responses-result-for-no-call"),
    pytest.param(read_chat_messages, _chat_call("{not json"), "[1].tool_calls[0].function.arguments",
                 "expected JSON text of an object, could not parse it", id="chat-unparsable-arguments"),
    pytest.param(read_chat_messages, _chat_call("[1, 2]"), "[1].tool_calls[0].function.arguments",
                 "expected JSON text of an object, got a list", id="chat-arguments-not-an-object"),
    pytest.param(read_responses_items,
                 [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{'a': 1}"}],
                 "[0].arguments", "could not parse it", id="responses-unparsable-arguments"),
    pytest.param(read_chat_messages, "How long do refunds take?", None,
                 "expected a list of messages, got a string", id="a-string-for-a-message-list"),
    pytest.param(read_vendor_messages, [{"role": "user", "content": [{"type": "text", "text": [{"a": 1}]}]}],
                 "[0].content[0].text", "expected a string, got a list", id="a-list-for-a-string"),
    pytest.param(read_chat_messages, [{"role": "user", "content": {"text": "hi"}}],
                 "[0].content", "expected a string, null or a list of text parts, got an object",
                 id="an-object-for-content"),
    pytest.param(read_responses_items, [{"type": "web_search_call", "id": "ws_1"}], "[0].type",
                 "expected an item type in ['message', 'function_call', 'function_call_output', "
                 "'file_search_call', 'reasoning'], got 'web_search_call'", id="responses-unknown-item"),
    pytest.param(read_vendor_messages, [{"role": "user", "content": [{"type": "image", "url": "x"}]}],
                 "[0].content[0].type", "expected an item type 'text', got 'image'", id="vendor-unknown-item"),
    pytest.param(read_anthropic_messages, [{"role": "assistant", "content": [{"type": "server_tool_use"}]}],
                 "[0].content[0].type", "got 'server_tool_use'", id="anthropic-unknown-block"),
    pytest.param(read_chat_messages, [{"role": "assistant", "content": "x", "tool_calls": [
        {"id": "c1", "type": "custom", "function": {}}]}], "[0].tool_calls[0].type",
                 "expected the call type 'function', got 'custom'", id="chat-unknown-call-type"),
    pytest.param(read_vendor_messages, [{"role": "narrator", "content": "x"}], "[0].role",
                 "expected a role in", id="unknown-role"),
    pytest.param(read_anthropic_messages, [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
        {"type": "tool_use", "id": "c1", "name": "g", "input": {}}]}], "[0].content[1].id",
                 "expected a new call id, 'c1' is already an earlier call's", id="a-call-id-twice"),
    pytest.param(read_chat_messages, [*_chat_call("{}"), {"role": "tool", "tool_call_id": "c1", "content": "a"},
                                      {"role": "tool", "tool_call_id": "c1", "content": "b"}],
                 "[3].tool_call_id", "expected one result per call", id="a-call-answered-twice"),
    pytest.param(read_chat_messages, [{"content": "x"}], "[0]", "expected an object with 'role'",
                 id="a-message-without-a-role"),
]


@pytest.mark.parametrize(("reader", "value", "field", "message"), BAD)
def test_bad_input_names_the_path_and_what_was_expected(reader, value, field, message):
    with pytest.raises(TranscriptError) as caught:
        reader(value)
    assert caught.value.field == field
    assert message in caught.value.message
    assert isinstance(caught.value, DatasetError)
    assert str(caught.value).startswith(f"field '{field}': " if field else "expected")


def test_read_transcript_refuses_a_value_that_mixes_formats():
    value = [FORMATS["chat"][1], FORMATS["anthropic"][1]]
    with pytest.raises(TranscriptError, match=r"expected one format, found Chat Completions at \[0\]\.tool_calls"
                                              r" and Anthropic Messages here") as caught:
        read_transcript(value)
    assert caught.value.field == "[1].content[2]"  # the first tool_use block


def test_read_transcript_refuses_a_string():
    with pytest.raises(TranscriptError, match="expected a list of messages or items, got a string"):
        read_transcript("Refunds take 5 days.")


def test_read_transcript_refuses_what_fits_no_format():
    with pytest.raises(TranscriptError, match="it fits none") as caught:
        read_transcript([{"content": "no role"}])
    assert caught.value.field is None


def test_read_transcript_reports_the_error_of_the_format_it_told():
    with pytest.raises(TranscriptError) as caught:
        read_transcript(_chat_call("{not json"))
    assert caught.value.field == "[1].tool_calls[0].function.arguments"
