"""Judge prompts: parsing sections and placeholders, rendering, hashing and loading."""

from __future__ import annotations

import hashlib

import pytest

from oloproof._exceptions import EvaluatorConfigError
from oloproof.evaluators import Groundedness, Relevance, ResponseCompleteness, Retrieval
from oloproof.evaluators._citation_support import CitationSupportJudge
from oloproof.evaluators._prompts import load_prompt, packaged_prompt, parse_prompt

TEXT = """\
[system]
You grade answers.

[user]
Question: {{query}}
Answer: {{ response }}
"""


def test_sections_are_split_and_the_hash_is_of_the_whole_text():
    prompt = parse_prompt(TEXT, "mine.md", allowed=("query", "response"))
    assert prompt.source == "mine.md"
    assert prompt.system == "You grade answers.\n"
    assert prompt.user == "Question: {{query}}\nAnswer: {{ response }}"
    assert prompt.fields == frozenset({"query", "response"})
    assert prompt.sha256 == hashlib.sha256(TEXT.encode("utf-8")).hexdigest()


def test_an_edited_prompt_has_another_hash():
    one = parse_prompt(TEXT, "a.md", allowed=("query", "response"))
    other = parse_prompt(TEXT.replace("grade", "score"), "a.md", allowed=("query", "response"))
    assert one.sha256 != other.sha256


def test_render_fills_every_placeholder_once_and_leaves_absent_ones_empty():
    prompt = parse_prompt(TEXT, "mine.md", allowed=("query", "response"))
    system, user = prompt.render({"query": "Is {{response}} literal?", "response": None})
    assert system == "You grade answers."
    # The text inserted for {{query}} is not expanded again; a None value is empty.
    assert user == "Question: Is {{response}} literal?\nAnswer:"


def test_render_shows_values_that_are_not_text_as_text():
    prompt = parse_prompt("[user]\n{{query}}", "n.md", allowed=("query",))
    assert prompt.render({"query": 3}) == ("", "3")


def test_a_placeholder_the_judge_does_not_read_is_refused_at_its_line():
    with pytest.raises(EvaluatorConfigError) as caught:
        parse_prompt(TEXT.replace("{{ response }}", "{{answer}}"), "mine.md", allowed=("query", "response"))
    error = caught.value
    assert (error.path, error.line, error.field) == ("mine.md", 6, "answer")
    assert "{{answer}}" in error.message and "query, response" in error.message


def test_text_before_the_first_section_is_refused():
    with pytest.raises(EvaluatorConfigError) as caught:
        parse_prompt("\nstray\n[user]\n{{query}}", "mine.md", allowed=("query",))
    assert (caught.value.path, caught.value.line) == ("mine.md", 2)


@pytest.mark.parametrize("text", ["[system]\nOnly a system message.\n", "[system]\nx\n[user]\n   \n"])
def test_a_prompt_without_a_user_message_is_refused(text):
    with pytest.raises(EvaluatorConfigError, match=r"no \[user\] section") as caught:
        parse_prompt(text, "mine.md", allowed=())
    assert caught.value.path == "mine.md"


@pytest.mark.parametrize(("name", "judge"), [
    ("groundedness_v1", Groundedness), ("groundedness_noquery_v1", Groundedness), ("relevance_v1", Relevance),
    ("response_completeness_v1", ResponseCompleteness), ("retrieval_v1", Retrieval),
    ("citation_support_v1", CitationSupportJudge),
])  # fmt: skip
def test_every_packaged_prompt_uses_only_what_its_judge_reads(name, judge):
    prompt = packaged_prompt(name, allowed=judge.reads)
    assert prompt.source == f"oloproof:{name}"
    assert prompt.fields <= set(judge.reads)
    assert prompt.user.strip()


def test_a_project_prompt_is_read_relative_to_the_project(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "mine.md").write_text(TEXT, encoding="utf-8")
    prompt = load_prompt("prompts/mine.md", tmp_path, allowed=("query", "response"))
    assert prompt.source == str(tmp_path / "prompts" / "mine.md")
    assert prompt == parse_prompt(TEXT, prompt.source, allowed=("query", "response"))


def test_an_absolute_prompt_path_ignores_the_project(tmp_path):
    file = tmp_path / "mine.md"
    file.write_text(TEXT, encoding="utf-8")
    assert load_prompt(str(file), tmp_path / "elsewhere", allowed=("query", "response")).source == str(file)


def test_a_missing_or_undecodable_prompt_file_names_the_file(tmp_path):
    with pytest.raises(EvaluatorConfigError, match="cannot read the prompt: FileNotFoundError") as caught:
        load_prompt("absent.md", tmp_path, allowed=())
    assert caught.value.path == str(tmp_path / "absent.md")
    (tmp_path / "latin.md").write_bytes("[user]\ncaf\xe9".encode("latin-1"))
    with pytest.raises(EvaluatorConfigError, match="UnicodeDecodeError"):
        load_prompt("latin.md", tmp_path, allowed=())
