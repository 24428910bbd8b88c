"""Record how the reference groundedness evaluator reads agent messages, as a JSON fixture.

Runs ``GroundednessEvaluator`` of ``azure-ai-evaluation`` 1.18.x over a few
hundred seeded agent responses in the vendor's message format (``tool_call`` and
``tool_result`` items) and writes, for each, its inputs and what the library made
of them before any model is asked: the context it extracted from the
``file_search`` results, the response the judge reads, and whether it refused, to
``tests/transcripts/fixtures/agent_groundedness_reference.json``. The test suite
reads that file; it never needs the library.

No model is called: the evaluator is built with a placeholder model configuration
and its Prompty runner is replaced by one that records the inputs it is handed and
returns a fixed score. Everything before that point is the library's own code.

The reference is installed in a virtual environment of its own, never in the
project's::

    python3 -m venv /tmp/azref
    /tmp/azref/bin/pip install 'azure-ai-evaluation>=1.18,<1.19'
    /tmp/azref/bin/python scripts/reference/agent_groundedness_fixture.py

Cases come in groups:

* ``valid``: file_search results with text; the library extracts a context and
  removes those results from the response. Several calls, results answered out of
  call order, other tools, unanswered calls, empty texts and empty result lists
  beside non-empty ones are all here.
* ``not_applicable``: no file_search result, a one-message response and a
  one-message (or string) query: the library refuses as not applicable.
* ``no_context_judged``: no file_search result, but a longer response or query:
  the library judges against the placeholder context ``"<>"``.
* ``empty_results``: file_search calls that returned an empty list or only empty
  texts: the library judges against ``"<>"`` and keeps those results in the response.
* ``string_response``: the response is a string: the library skips extraction and
  uses the response itself as the context.
* ``unsupported_tool``: a tool the library refuses for groundedness
  (``bing_grounding``, ``azure_ai_search`` ...) beside a file_search: it raises;
  ``context`` and ``passages`` hold what its extraction alone takes.
* ``no_file_name``: results with a ``file_id`` and no ``file_name``: the library
  names the passage ``"Unknown file name"``.
* ``json_text_result``: a file_search result given as JSON text: the library's
  extraction fails on it and it judges against ``"<>"``; ``decoded`` holds what it
  extracts when the same result is given as JSON.
* ``stricter``: responses the library judges although they are malformed for
  Oloproof (no final assistant text, a result without any file name or id, nested
  result lists); ``oloproof`` names the field Oloproof's error points at.

For each case ``reference`` holds ``outcome`` (``judged``, ``refused`` or
``raised``), ``context`` (the context text exactly as the library builds it),
``passages`` (the ``[file_name, text]`` pairs that text is built from, in order),
``judge_response`` (the response the judge is handed, as the library formats it)
and, when it refused or raised, ``message``.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import logging
import platform
import random
import string
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

SEED = 20250612
FIXTURE = Path(__file__).resolve().parents[2] / "tests/transcripts/fixtures/agent_groundedness_reference.json"
MODEL_CONFIG = {"azure_endpoint": "https://reference.invalid", "azure_deployment": "none", "api_key": "none",
                "api_version": "2024-10-21"}  # fmt: skip
NO_CONTEXT = "<>"
UNKNOWN_FILE = "Unknown file name"

WORDS = ("refund", "order", "shipping", "policy", "invoice", "warranty", "days", "card", "store", "return",
         "café", "naïve", "日本", "résumé", "item", "price", "label", "box", "tax", "account")  # fmt: skip
FILES = ("refunds.md", "shipping.pdf", "faq.txt", "warranty.docx", "policy 2024.md", "prix-été.md")
OTHER_TOOLS = ("get_weather", "order_status", "calculator", "send_email")
UNSUPPORTED = ("bing_grounding", "azure_ai_search", "web_search", "sharepoint_grounding", "bing_custom_search")


# -- the reference ----------------------------------------------------------------


HANDED: list[dict[str, Any]] = []
"""What the judge was handed in the current case."""


async def record(runner: Any, *, timeout: float, **eval_input: Any) -> dict[str, Any]:
    """Stands in for the Prompty runner's call: keeps what the judge would be handed, calls no model."""
    HANDED.append(copy.deepcopy(eval_input))
    return {"llm_output": {"score": 5, "reason": "recorded, no model called"}}


def evaluator() -> Any:
    """A ``GroundednessEvaluator`` whose runner records instead of calling a model."""
    from azure.ai.evaluation import GroundednessEvaluator
    from azure.ai.evaluation._evaluators._common import _model_runners

    # Patched on the class: the evaluator reloads its Prompty flow whenever a query is given.
    _model_runners.PromptyModelRunner.__call__ = record
    return GroundednessEvaluator(model_config=MODEL_CONFIG)


def sdk_passages(judge: Any, response: Any) -> list[list[str]]:
    """The ``[file_name, text]`` pairs the library's context text is built from.

    Walks the library's own parse of the response the way
    ``_get_context_from_agent_response`` does; :func:`run_reference` checks that
    these pairs rebuild the library's context text exactly.
    """
    pairs: list[list[str]] = []
    try:
        for call in judge._parse_tools_from_response(response=response):
            if not isinstance(call, dict) or call.get("type") != "tool_call" or call.get("name") != "file_search":
                continue
            for result in call.get("tool_result", []):
                for item in result if isinstance(result, list) else [result]:
                    file_name = item.get("file_name", UNKNOWN_FILE)
                    pairs.extend([file_name, content.get("text")] for content in item.get("content", [])
                                 if content.get("text"))  # fmt: skip
    except Exception:  # noqa: BLE001 - the library drops the whole context on any error
        return []
    return pairs


def context_of(pairs: list[list[str]]) -> str:
    """The library's context text for ``pairs`` (its format, for the consistency check)."""
    return "\n".join(f"{name}:\n- {text}---\n\n" for name, text in pairs) if pairs else NO_CONTEXT


def run_reference(judge: Any, case: dict[str, Any]) -> dict[str, Any]:
    """What the library does with ``case`` up to the model call."""
    from azure.ai.evaluation._exceptions import EvaluationException

    query, response = copy.deepcopy(case["query"]), copy.deepcopy(case["response"])
    HANDED.clear()
    reference: dict[str, Any] = {}
    if isinstance(response, list):
        extracted = judge._get_context_from_agent_response(copy.deepcopy(response), None)
        pairs = sdk_passages(judge, response)
        if context_of(pairs) != extracted:
            raise AssertionError(f"{case['note']}: the passages do not rebuild the library's context {extracted!r}")
        reference.update(context=extracted, passages=pairs)
    # The library logs (and may print) what it refuses; the fixture records it instead.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            result = judge(query=query, response=response)
        except EvaluationException as error:
            return {"outcome": "raised", "category": error.category.value, "message": error.message, **reference}
    if result["groundedness_result"] == "not_applicable":
        return {"outcome": "refused", "message": result["groundedness_reason"], **reference}
    (handed,) = HANDED
    if "context" in reference and handed["context"] != reference["context"]:
        raise AssertionError(f"{case['note']}: the judge got another context than the extraction")
    return {"outcome": "judged", **reference, "context": handed["context"], "judge_response": handed["response"]}


# -- generation -------------------------------------------------------------------


def text(rng: random.Random, low: int = 2, high: int = 8) -> str:
    words = rng.choices(WORDS, k=rng.randint(low, high))
    if rng.random() < 0.1:
        words.insert(rng.randrange(len(words)), rng.choice(["\n", "---", "*", "1.", "—"]))
    return " ".join(words).capitalize() + "."


def new_id(rng: random.Random) -> str:
    return "call_" + "".join(rng.choices(string.ascii_letters + string.digits, k=8))


def query_of(rng: random.Random, shape: str) -> Any:
    question = text(rng).rstrip(".") + "?"
    if shape == "string":
        return question
    user = {"role": "user", "content": [{"type": "text", "text": question}]}
    if shape == "single":
        return [user]
    return [{"role": "system", "content": "You answer from the files."}, user]


def file_results(rng: random.Random, count: int, *, file_id_only: bool = False,
                 empty_text: float = 0.0) -> list[dict[str, Any]]:  # fmt: skip
    results = []
    for _ in range(count):
        result: dict[str, Any] = {"file_id": "assistant-" + "".join(rng.choices(string.ascii_uppercase, k=6))}
        if not file_id_only:
            result["file_name"] = rng.choice(FILES)
        result["score"] = round(rng.uniform(0, 1), 4)
        result["content"] = [{"type": "text", "text": "" if rng.random() < empty_text else text(rng, 2, 8)}
                             for _ in range(rng.choice([1, 1, 1, 2]))]  # fmt: skip
        results.append(result)
    return results


def other_result(rng: random.Random) -> Any:
    kind = rng.randrange(3)
    if kind == 0:
        return text(rng)
    if kind == 1:
        return {"status": rng.choice(["shipped", "pending"]), "count": rng.randint(0, 9)}
    return [{"value": rng.randint(0, 99)}, {"value": text(rng, 1, 2)}]


class Response:
    """A response message list being built: assistant turns, their calls, the tool messages answering them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.messages: list[dict[str, Any]] = []
        self.found_text = False  # whether an answered file search returned a non-empty text

    def turn(self, calls: list[tuple[str, Any]], *, say: bool | None = None, shuffle: bool = False,
             unanswered: int = 0) -> None:  # fmt: skip
        """An assistant message making ``calls`` (name, result), then one tool message per answered call."""
        rng = self.rng
        content: list[dict[str, Any]] = []
        if say if say is not None else rng.random() < 0.3:
            content.append({"type": "text", "text": text(rng)})
        answers = []
        for number, (name, result) in enumerate(calls):
            call_id = new_id(rng)
            arguments = {"queries": [text(rng, 1, 3)]} if name == "file_search" else {"input": text(rng, 1, 2)}
            content.append({"type": "tool_call", "tool_call_id": call_id, "name": name, "arguments": arguments})
            if number >= len(calls) - unanswered:
                continue
            if name == "file_search" and isinstance(result, list):
                self.found_text |= any(item["text"] for found in result if isinstance(found, dict)
                                       for item in found.get("content", []))
            answers.append({"role": "tool", "tool_call_id": call_id,
                            "content": [{"type": "tool_result", "tool_result": result}]})  # fmt: skip
        if shuffle:
            rng.shuffle(answers)
        self.messages.append({"role": "assistant", "content": content})
        self.messages.extend(answers)

    def answer(self, parts: int = 1) -> list[dict[str, Any]]:
        """The final assistant text, ``parts`` text items; the finished message list."""
        self.messages.append({"role": "assistant",
                              "content": [{"type": "text", "text": text(self.rng, 3, 8)} for _ in range(parts)]})
        return self.messages


class Cases:
    """The generated cases, in order."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, group: str, note: str, query: Any, response: Any, **extra: Any) -> None:
        self.items.append({"id": "", "group": group, "note": note, "query": query, "response": response, **extra})


QUERY_SHAPES = ("single", "single", "string", "system")


def valid_cases(rng: random.Random, cases: Cases, count: int) -> None:
    made = 0
    while made < count:
        response = Response(rng)
        turns = rng.choice([1, 1, 1, 2, 3])
        searches = 0
        for turn in range(turns):
            calls: list[tuple[str, Any]] = []
            for _ in range(rng.choice([1, 1, 2, 3])):
                if rng.random() < 0.65 or (turn == turns - 1 and not searches and not calls):
                    searches += 1
                    found = rng.choice([1, 1, 2, 3]) if rng.random() < 0.9 else 0
                    calls.append(("file_search", file_results(rng, found, empty_text=rng.choice([0, 0, 0, 0.3]))))
                else:
                    calls.append((rng.choice(OTHER_TOOLS), other_result(rng)))
            rng.shuffle(calls)
            response.turn(calls, shuffle=rng.random() < 0.3, unanswered=int(rng.random() < 0.1))
        messages = response.answer(rng.choice([1, 1, 1, 2]))
        if not response.found_text:  # drawn again: a valid case has a context
            continue
        made += 1
        note = f"turns: {turns}, file searches: {searches}"
        cases.add("valid", note, query_of(rng, rng.choice(QUERY_SHAPES)), messages)

    # Fixed shapes: results answered in reverse call order, one call of many results, the same file twice.
    response = Response(rng)
    response.turn([("file_search", file_results(rng, 2)), ("file_search", file_results(rng, 1)),
                   ("file_search", file_results(rng, 3))], say=True)  # fmt: skip
    response.messages[1:] = response.messages[1:][::-1]
    cases.add("valid", "three searches answered in reverse call order", query_of(rng, "single"), response.answer())
    response = Response(rng)
    response.turn([("file_search", file_results(rng, 8))], say=False)
    cases.add("valid", "one search of eight results", query_of(rng, "single"), response.answer())
    response = Response(rng)
    results = file_results(rng, 1)
    response.turn([("file_search", results), ("file_search", copy.deepcopy(results))], say=False)
    cases.add("valid", "the same result from two searches", query_of(rng, "system"), response.answer(3))


def not_applicable_cases(rng: random.Random, cases: Cases, count: int) -> None:
    for number in range(count):
        kind = number % 4
        if kind == 0:
            response = [{"role": "assistant", "content": [{"type": "text", "text": text(rng)}]}]
        elif kind == 1:
            response = [{"role": "assistant", "content": text(rng)}]
        else:  # a call in the one message cannot be answered in it
            name = "file_search" if kind == 2 else rng.choice(OTHER_TOOLS)
            response = [{"role": "assistant", "content": [
                {"type": "text", "text": text(rng)},
                {"type": "tool_call", "tool_call_id": new_id(rng), "name": name, "arguments": {"q": text(rng, 1, 2)}},
            ]}]  # fmt: skip
        note = ["one text message", "one string message", "an unanswered file search", "an unanswered tool"][kind]
        cases.add("not_applicable", note, query_of(rng, rng.choice(["single", "string"])), response)


def no_context_judged_cases(rng: random.Random, cases: Cases, count: int) -> None:
    for number in range(count):
        kind = number % 3
        response = Response(rng)
        if kind == 0:  # other tools only
            for _ in range(rng.randint(1, 2)):
                response.turn([(rng.choice(OTHER_TOOLS), other_result(rng)) for _ in range(rng.randint(1, 2))])
            messages, shape, note = response.answer(), rng.choice(QUERY_SHAPES), "other tools only"
        elif kind == 1:  # a file search never answered, and another tool
            response.turn([(rng.choice(OTHER_TOOLS), other_result(rng)), ("file_search", None)], unanswered=1)
            messages, shape, note = response.answer(), rng.choice(QUERY_SHAPES), "a file search never answered"
        else:  # one message, but a query of several
            messages, shape, note = response.answer(), "system", "one message after a two-message query"
        cases.add("no_context_judged", note, query_of(rng, shape), messages)


def empty_results_cases(rng: random.Random, cases: Cases, count: int) -> None:
    for number in range(count):
        response = Response(rng)
        calls: list[tuple[str, Any]] = [("file_search", [] if number % 2 == 0 else file_results(rng, 2, empty_text=1))]
        if rng.random() < 0.5:
            calls.append((rng.choice(OTHER_TOOLS), other_result(rng)))
        if rng.random() < 0.3:
            calls.append(("file_search", []))
        response.turn(calls)
        note = "an empty results list" if number % 2 == 0 else "results with only empty texts"
        cases.add("empty_results", note, query_of(rng, rng.choice(QUERY_SHAPES)), response.answer())


def string_response_cases(rng: random.Random, cases: Cases, count: int) -> None:
    for _ in range(count):
        cases.add("string_response", "the response as text", query_of(rng, rng.choice(QUERY_SHAPES)), text(rng, 4, 20))


def unsupported_tool_cases(rng: random.Random, cases: Cases) -> None:
    for name in UNSUPPORTED:
        response = Response(rng)
        response.turn([("file_search", file_results(rng, 2)), (name, [{"title": text(rng, 1, 3), "url": "u"}])])
        cases.add("unsupported_tool", f"{name} beside a file search", query_of(rng, "single"), response.answer())


def no_file_name_cases(rng: random.Random, cases: Cases, count: int) -> None:
    for number in range(count):
        response = Response(rng)
        calls = [("file_search", file_results(rng, rng.randint(1, 3), file_id_only=True))]
        if number % 2:
            calls.append(("file_search", file_results(rng, 1)))
        response.turn(calls)
        cases.add("no_file_name", "results with a file id only", query_of(rng, "single"), response.answer())


def json_text_cases(rng: random.Random, cases: Cases, count: int) -> None:
    for number in range(count):
        response = Response(rng)
        results = file_results(rng, rng.randint(1, 3))
        calls: list[tuple[str, Any]] = [("file_search", json.dumps(results, ensure_ascii=False))]
        if number % 2:
            calls.append(("file_search", file_results(rng, 1)))
        response.turn(calls)
        messages = response.answer()
        decoded = copy.deepcopy(messages)
        decoded[1]["content"][0]["tool_result"] = results
        cases.add("json_text_result", "a result as JSON text" + (", and one as JSON" if number % 2 else ""),
                  query_of(rng, "single"), messages, decoded=decoded)  # fmt: skip


def stricter_cases(rng: random.Random, cases: Cases) -> None:
    def error(field: str) -> dict[str, str]:
        return {"error": "TranscriptError", "field": field}

    response = Response(rng)
    response.turn([("file_search", file_results(rng, 2))])
    last = len(response.messages) - 1
    cases.add("stricter", "no final answer: ends with the tool result", query_of(rng, "single"), response.messages,
              oloproof=error(f"messages[{last}]"))  # fmt: skip
    response = Response(rng)
    response.turn([("file_search", file_results(rng, 2))], say=True)
    response.answer()
    response.turn([("file_search", None)], say=False, unanswered=1)
    cases.add("stricter", "ends with an assistant call", query_of(rng, "single"), response.messages,
              oloproof=error(f"messages[{len(response.messages) - 1}]"))  # fmt: skip
    response = Response(rng)
    results = file_results(rng, 2)
    del results[1]["file_name"], results[1]["file_id"]
    response.turn([("file_search", results)], say=False)
    cases.add("stricter", "a result with neither file name nor file id", query_of(rng, "single"), response.answer(),
              oloproof=error("messages[1].tool_results[0].content[1]"))  # fmt: skip
    response = Response(rng)
    response.turn([("file_search", [file_results(rng, 2), file_results(rng, 1)])], say=False)
    cases.add("stricter", "results nested in lists", query_of(rng, "single"), response.answer(),
              oloproof=error("messages[1].tool_results[0].content[0]"))  # fmt: skip


EXPECTED_OUTCOME = {
    "valid": "judged", "not_applicable": "refused", "no_context_judged": "judged", "empty_results": "judged",
    "string_response": "judged", "unsupported_tool": "raised", "no_file_name": "judged",
    "json_text_result": "judged", "stricter": "judged",
}  # fmt: skip


def check(case: dict[str, Any]) -> str | None:
    """Why the library did not treat ``case`` as its group expects, or ``None``."""
    reference, group = case["reference"], case["group"]
    if reference["outcome"] != EXPECTED_OUTCOME[group]:
        return f"outcome {reference['outcome']}"
    has_context = reference["context"] != NO_CONTEXT
    if group in ("valid", "no_file_name", "stricter") and not has_context:
        return "no context"
    if group in ("not_applicable", "no_context_judged", "empty_results", "json_text_result") and has_context:
        return f"a context {reference['context']!r}"
    if group == "string_response" and reference["context"] != case["response"]:
        return "a context other than the response"
    return None


def generate(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases = Cases()
    valid_cases(rng, cases, 150)
    not_applicable_cases(rng, cases, 40)
    no_context_judged_cases(rng, cases, 30)
    empty_results_cases(rng, cases, 16)
    string_response_cases(rng, cases, 20)
    unsupported_tool_cases(rng, cases)
    no_file_name_cases(rng, cases, 8)
    json_text_cases(rng, cases, 6)
    stricter_cases(rng, cases)
    return cases.items


def render(fixture: dict[str, Any]) -> str:
    """The fixture as JSON text, one case a line (a regenerated fixture diffs by case)."""
    head = {key: value for key, value in fixture.items() if key != "cases"}
    lines = [json.dumps(case, ensure_ascii=False, separators=(",", ":")) for case in fixture["cases"]]
    opening = json.dumps(head, ensure_ascii=False, indent=1)[:-2]
    return opening + ',\n "cases": [\n' + ",\n".join(lines) + "\n ]\n}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--output", type=Path, default=FIXTURE)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    version = metadata.version("azure-ai-evaluation")
    if not version.startswith("1.18."):
        raise SystemExit(f"expected azure-ai-evaluation 1.18.x, found {version}")

    judge = evaluator()
    cases = generate(args.seed)
    surprises = []
    groups: dict[str, int] = {}
    for case in cases:
        case["reference"] = run_reference(judge, case)
        if "decoded" in case:
            decoded = run_reference(judge, {**case, "response": case["decoded"]})
            case["decoded"] = {"response": case["decoded"], "passages": decoded["passages"]}
        problem = check(case)
        if problem:
            surprises.append(f"{case['group']} case {case['note']!r}: {problem}")
        groups[case["group"]] = groups.get(case["group"], 0) + 1
        case["id"] = f"{case['group']}-{groups[case['group']]:03d}"
    if surprises:
        print("the library did not behave as the generator expects:", *surprises, sep="\n  ", file=sys.stderr)
        return 1

    fixture = {
        "reference": {
            "package": "azure-ai-evaluation",
            "version": version,
            "evaluator": "GroundednessEvaluator",
            "python": platform.python_version(),
        },
        "generator": {"script": "scripts/reference/agent_groundedness_fixture.py", "seed": args.seed},
        "cases": cases,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(fixture), encoding="utf-8")
    print(f"{len(cases)} cases with azure-ai-evaluation {version}: {groups} -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
