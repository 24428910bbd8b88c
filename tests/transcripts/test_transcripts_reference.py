"""`extract_context` against what ``azure-ai-evaluation``'s groundedness evaluator extracts from agent messages.

The fixture (written by ``scripts/reference/agent_groundedness_fixture.py``) holds
seeded responses in the vendor's agent message format with what
``GroundednessEvaluator`` made of them before calling its model: the context it
built from the ``file_search`` results, the response its judge reads and whether it
refused. Every ``valid`` case must agree: the same passages (file name and text, in
order, rebuilding the library's context text exactly), the same final answer, and
the same tool results left in the judged response.

Where Oloproof deliberately differs, each case asserts the difference, so a change
on either side fails here:

* ``no_context_judged``: the library refuses only when no context was extracted
  *and* the response is a list of one message *and* the query is a string or a list
  of one message; otherwise it judges against the placeholder context ``"<>"``. Oloproof is stricter: any response with
  no file_search result is ``not_applicable == "no_context_tool_results"``.
* ``empty_results``: file_search calls that found nothing (an empty list, or only
  empty texts). Both judge: the library against ``"<>"``, keeping those tool
  messages in the judged response; Oloproof with no passages, having removed them.
* ``string_response``: the library skips extraction and uses the response itself as
  the context. Oloproof does not read a string as a transcript (a string response
  is plain text, whose context is given, not extracted).
* ``unsupported_tool``: the library refuses any response calling a tool such as
  ``bing_grounding`` or ``azure_ai_search``; Oloproof ignores tools that are not
  context tools and extracts the file_search passages the library's extraction takes.
* ``no_file_name``: the library names a result without ``file_name`` "Unknown file
  name"; Oloproof names it by its ``file_id``. The texts agree.
* ``json_text_result``: a file_search result given as JSON text makes the library's
  extraction fail (context ``"<>"``); Oloproof reads it as the library reads the
  same result given as JSON.
* ``stricter``: responses the library judges although they are malformed (no final
  assistant text, a result with neither file name nor id, results nested in lists);
  Oloproof refuses them with a :class:`TranscriptError` naming the path.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from oloproof.evaluators._agent import is_messages
from oloproof.transcripts import Extraction, TranscriptError, extract_context, read_transcript

FIXTURE = Path(__file__).parent / "fixtures" / "agent_groundedness_reference.json"
NO_CONTEXT = "<>"
UNKNOWN_FILE = "Unknown file name"
GROUPS = {"valid", "not_applicable", "no_context_judged", "empty_results", "string_response", "unsupported_tool",
          "no_file_name", "json_text_result", "stricter"}  # fmt: skip


@cache
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def cases(group: str) -> list[Any]:
    return [pytest.param(case, id=case["id"]) for case in fixture()["cases"] if case["group"] == group]


def extract(response: Any) -> Extraction:
    return extract_context(read_transcript(response))


def context_text(pairs: list[tuple[str, str]]) -> str:
    """The library's context text for ``(file name, text)`` pairs, as ``_get_context_from_agent_response`` builds it."""
    return "\n".join(f"{name}:\n- {text}---\n\n" for name, text in pairs) if pairs else NO_CONTEXT


def passages(extraction: Extraction) -> list[tuple[str, str]]:
    return [(passage.document_id, passage.text) for passage in extraction.passages]


def reference_passages(case: dict[str, Any]) -> list[tuple[str, str]]:
    return [(name, text) for name, text in case["reference"]["passages"]]


def final_text(judge_response: list[dict[str, Any]]) -> str:
    """The last message the judge reads, as text: the library keeps an assistant message's texts as a list."""
    content = judge_response[-1]["content"]
    return content if isinstance(content, str) else "".join(content)


def file_search_ids(response: list[dict[str, Any]]) -> set[str]:
    return {item["tool_call_id"] for message in response if isinstance(message["content"], list)
            for item in message["content"] if item.get("type") == "tool_call" and item["name"] == "file_search"}  # fmt: skip


def tool_messages(judge_response: list[dict[str, Any]]) -> list[str]:
    return [message["tool_call_id"] for message in judge_response if message["role"] == "tool"]


def kept_results(extraction: Extraction) -> list[str]:
    return [message.tool_results[0].call_id for message in extraction.transcript.messages if message.role == "tool"]


def test_the_fixture_names_the_reference_and_covers_every_group() -> None:
    data = fixture()
    assert data["reference"]["package"] == "azure-ai-evaluation"
    assert data["reference"]["version"].startswith("1.18.")
    assert {case["group"] for case in data["cases"]} == GROUPS
    assert sum(case["group"] == "valid" for case in data["cases"]) >= 150
    assert sum(case["group"] == "not_applicable" for case in data["cases"]) >= 40


@pytest.mark.parametrize("case", cases("valid"))
def test_valid_cases_extract_what_the_reference_extracts(case: dict[str, Any]) -> None:
    reference = case["reference"]
    assert reference["outcome"] == "judged"
    extraction = extract(case["response"])
    assert extraction.not_applicable is None
    assert passages(extraction) == reference_passages(case)
    assert context_text(passages(extraction)) == reference["context"]
    assert extraction.response == final_text(reference["judge_response"])
    # The file_search results are gone, every other tool's result stays, in the same order.
    assert kept_results(extraction) == tool_messages(reference["judge_response"])
    assert not set(kept_results(extraction)) & file_search_ids(case["response"])
    assert [m.role for m in extraction.transcript.messages] == [m["role"] for m in reference["judge_response"]]


@pytest.mark.parametrize("case", cases("not_applicable"))
def test_what_the_reference_refuses_is_not_applicable(case: dict[str, Any]) -> None:
    assert case["reference"]["outcome"] == "refused"
    assert "No valid context provided or could be extracted" in case["reference"]["message"]
    extraction = extract(case["response"])
    assert (extraction.not_applicable, extraction.passages) == ("no_context_tool_results", ())


@pytest.mark.parametrize("case", cases("no_context_judged"))
def test_without_file_search_results_oloproof_refuses_where_the_reference_judges_against_nothing(
        case: dict[str, Any]) -> None:  # fmt: skip
    reference = case["reference"]
    assert (reference["outcome"], reference["context"]) == ("judged", NO_CONTEXT)
    assert len(case["response"]) > 1 or not (isinstance(case["query"], str) or len(case["query"]) == 1)
    extraction = extract(case["response"])
    assert (extraction.not_applicable, extraction.passages) == ("no_context_tool_results", ())
    assert extraction.response == final_text(reference["judge_response"])


@pytest.mark.parametrize("case", cases("empty_results"))
def test_a_file_search_that_found_nothing_is_judged_with_no_passages(case: dict[str, Any]) -> None:
    reference = case["reference"]
    assert (reference["outcome"], reference["context"], reference["passages"]) == ("judged", NO_CONTEXT, [])
    searches = file_search_ids(case["response"])
    # The library keeps the empty results in what its judge reads; Oloproof removes them.
    assert set(tool_messages(reference["judge_response"])) & searches
    extraction = extract(case["response"])
    assert (extraction.not_applicable, extraction.passages) == (None, ())
    assert not set(kept_results(extraction)) & searches
    assert extraction.response == final_text(reference["judge_response"])


@pytest.mark.parametrize("case", cases("string_response"))
def test_a_string_response_is_not_a_transcript(case: dict[str, Any]) -> None:
    reference = case["reference"]
    assert (reference["outcome"], reference["context"]) == ("judged", case["response"])
    assert not is_messages(case["response"])
    with pytest.raises(TranscriptError, match="expected a list of messages or items"):
        read_transcript(case["response"])


@pytest.mark.parametrize("case", cases("unsupported_tool"))
def test_a_tool_the_reference_refuses_is_ignored_and_file_search_still_extracted(case: dict[str, Any]) -> None:
    reference = case["reference"]
    assert (reference["outcome"], reference["category"]) == ("raised", "NOT APPLICABLE")
    assert "tool call is currently not supported" in reference["message"]
    extraction = extract(case["response"])
    assert extraction.not_applicable is None
    assert passages(extraction) == reference_passages(case) != []


@pytest.mark.parametrize("case", cases("no_file_name"))
def test_a_result_without_a_file_name_is_named_by_its_file_id(case: dict[str, Any]) -> None:
    reference = case["reference"]
    assert reference["outcome"] == "judged"
    extraction = extract(case["response"])
    assert [p.text for p in extraction.passages] == [text for _, text in reference["passages"]]
    results = {message["tool_call_id"]: message["content"][0]["tool_result"]
               for message in case["response"] if message["role"] == "tool"}  # fmt: skip
    unknown = 0
    for passage, (name, _) in zip(extraction.passages, reference["passages"], strict=True):
        result = results[passage.call_id][passage.rank - 1]
        if name == UNKNOWN_FILE:
            unknown += 1
            assert "file_name" not in result and passage.document_id == result["file_id"]
        else:
            assert passage.document_id == name == result["file_name"]
    assert unknown > 0


@pytest.mark.parametrize("case", cases("json_text_result"))
def test_a_result_as_json_text_is_read_as_the_reference_reads_it_as_json(case: dict[str, Any]) -> None:
    reference = case["reference"]
    assert (reference["outcome"], reference["context"]) == ("judged", NO_CONTEXT)
    expected = [(name, text) for name, text in case["decoded"]["passages"]]
    extraction = extract(case["response"])
    assert passages(extraction) == expected != []
    assert passages(extract(case["decoded"]["response"])) == expected
    assert not set(kept_results(extraction)) & file_search_ids(case["response"])


@pytest.mark.parametrize("case", cases("stricter"))
def test_what_the_reference_judges_although_malformed_is_refused(case: dict[str, Any]) -> None:
    assert case["reference"]["outcome"] == "judged"
    with pytest.raises(TranscriptError) as caught:
        extract(case["response"])
    assert caught.value.field == case["oloproof"]["field"]
