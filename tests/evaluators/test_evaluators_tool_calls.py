"""``tool_calls``: the matching kernel, the evaluator over each transcript format, exclusions and row checks."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof._exceptions import ConfigError, DatasetError, EvaluatorConfigError, TranscriptError
from oloproof.dataset import load_cases
from oloproof.evaluators import CaseView, JudgeContext, ToolCalls, Verdict, build_evaluators, registered_evaluators
from oloproof.evaluators._tool_calls import call_matches, json_equal, match_calls, tool_call_scores
from oloproof.tasks._inputs import check_inputs

Call = tuple[str, dict[str, Any]]
CALLS: list[Call] = [
    ("search", {"query": "refunds", "k": 3}),
    ("order_status", {"order": 7}),
    ("search", {"query": "shipping", "k": 3}),
]
EXPECTED = [
    {"name": "order_status", "arguments": {"order": 7}},
    {"name": "search", "arguments": {"query": "refunds"}},
]

# -- one conversation in each transcript format --------------------------------------


def vendor(calls: list[Call]) -> list[Any]:
    items = [{"type": "tool_call", "tool_call_id": f"c{n}", "name": name, "arguments": args}
             for n, (name, args) in enumerate(calls)]  # fmt: skip
    results = [{"role": "tool", "tool_call_id": f"c{n}", "content": [{"type": "tool_result", "tool_result": "ok"}]}
               for n in range(len(calls))]  # fmt: skip
    return [
        {"role": "user", "content": [{"type": "text", "text": "Where is order 7?"}]},
        *([{"role": "assistant", "content": items}, *results] if calls else []),
        {"role": "assistant", "content": [{"type": "text", "text": "It has shipped."}]},
    ]


def chat(calls: list[Call]) -> list[Any]:
    tool_calls = [{"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                  for n, (name, args) in enumerate(calls)]  # fmt: skip
    results = [{"role": "tool", "tool_call_id": f"c{n}", "content": "ok"} for n in range(len(calls))]
    return [
        {"role": "user", "content": "Where is order 7?"},
        *([{"role": "assistant", "content": None, "tool_calls": tool_calls}, *results] if calls else []),
        {"role": "assistant", "content": "It has shipped."},
    ]


def responses(calls: list[Call]) -> list[Any]:
    return [
        {"role": "user", "content": "Where is order 7?"},
        *({"type": "function_call", "call_id": f"c{n}", "name": name, "arguments": json.dumps(args)}
          for n, (name, args) in enumerate(calls)),
        *({"type": "function_call_output", "call_id": f"c{n}", "output": "ok"} for n in range(len(calls))),
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It has shipped."}]},
    ]  # fmt: skip


def anthropic(calls: list[Call]) -> list[Any]:
    uses = [{"type": "tool_use", "id": f"c{n}", "name": name, "input": args} for n, (name, args) in enumerate(calls)]
    results = [{"type": "tool_result", "tool_use_id": f"c{n}", "content": "ok"} for n in range(len(calls))]
    return [
        {"role": "user", "content": "Where is order 7?"},
        *([{"role": "assistant", "content": uses}, {"role": "user", "content": results}] if calls else []),
        {"role": "assistant", "content": [{"type": "text", "text": "It has shipped."}]},
    ]


FORMATS = {"vendor": vendor, "chat": chat, "responses": responses, "anthropic": anthropic}

# -- helpers --------------------------------------------------------------------------


def build(**options: Any) -> ToolCalls:
    (evaluator,) = build_evaluators([{"type": "tool_calls", **options}], rag=False)
    assert isinstance(evaluator, ToolCalls)
    return evaluator


def recorded(row: dict[str, Any]) -> CaseView:
    return CaseView(case_id="c1", input=row, expected={}, metadata={}, output=None, item=row, recorded=True)


def live(output_items: list[Any] | None, expected: dict[str, Any] | None = None) -> CaseView:
    expected = {"tool_calls": EXPECTED} if expected is None else expected
    item = {"id": "c1", "input": "Where is order 7?", "expected": expected, "metadata": {}}
    return CaseView(case_id="c1", input=item["input"], expected=expected, metadata={}, output="It has shipped.",
                    item=item, output_items=output_items)  # fmt: skip


def run(evaluator: ToolCalls, case: CaseView) -> Verdict:
    evaluator.check_case(case)
    fields = evaluator.read(case)
    if isinstance(fields, Verdict):
        return fields
    return evaluator.judge(fields, JudgeContext())


def scores(verdict: Verdict) -> tuple[float, float, float]:
    assert verdict.status == "observed", verdict.reason
    assert verdict.scores is not None
    found = verdict.scores
    return found["tool_calls"], found["tool_calls.precision"], found["tool_calls.recall"]


def spec(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


# -- the kernel -----------------------------------------------------------------------


def test_json_equality_keeps_booleans_and_numbers_apart() -> None:
    assert json_equal(1, 1.0) and json_equal({"a": [1, None]}, {"a": [1.0, None]})
    assert not json_equal(True, 1) and not json_equal(0, False) and not json_equal([True], [1])
    assert not json_equal({"a": 1}, {"a": 1, "b": 2}) and not json_equal([1], [1, 1])
    assert not json_equal(None, 0) and not json_equal("1", 1) and json_equal("x", "x")


def test_a_call_matches_on_its_name_and_the_given_arguments_only() -> None:
    made = spec("search", query="refunds", k=3)
    assert call_matches({"name": "search"}, made)
    assert call_matches(spec("search", query="refunds"), made)
    assert call_matches(spec("search"), made)
    assert not call_matches(spec("search", query="Refunds"), made)
    assert not call_matches(spec("search", k=True), spec("search", k=1))
    assert not call_matches(spec("search", top=3), made)  # a given argument the call lacks
    assert not call_matches(spec("lookup", query="refunds"), made)


def test_the_unordered_matching_is_maximum_not_greedy() -> None:
    # Greedy would give the first call to the loose expectation and leave the strict one unmatched.
    expected = [{"name": "search"}, spec("search", query="a")]
    actual = [spec("search", query="a"), spec("search", query="b")]
    assert match_calls(expected, actual) == [(0, 1), (1, 0)]


def test_each_call_is_matched_once() -> None:
    assert match_calls([{"name": "search"}] * 3, [spec("search")] * 2) == [(0, 0), (1, 1)]
    assert len(match_calls([{"name": "search"}], [spec("search")] * 3)) == 1


def test_the_ordered_matching_is_the_longest_subsequence() -> None:
    expected = [{"name": "a"}, {"name": "b"}, {"name": "c"}]
    actual = [spec("b"), spec("a"), spec("x"), spec("c"), spec("b")]
    assert match_calls(expected, actual, ordered=True) == [(1, 0), (2, 3)]  # one of the three longest
    assert len(match_calls(expected, actual)) == 3
    assert match_calls(expected, [spec("a"), spec("y"), spec("b"), spec("c")], ordered=True) == [(0, 0), (1, 2), (2, 3)]
    assert match_calls(expected, [], ordered=True) == [] and match_calls(expected, []) == []


def test_scores_of_a_matching() -> None:
    assert tool_call_scores(2, 2, 4) == (True, 0.5, 1.0)
    assert tool_call_scores(1, 2, 1) == (False, 1.0, 0.5)
    assert tool_call_scores(0, 2, 0) == (False, 0.0, 0.0)  # no calls: precision 0
    for counts in ((0, 0, 3), (3, 2, 5), (2, 3, 1), (-1, 2, 2)):
        with pytest.raises(ValueError, match="invalid counts"):
            tool_call_scores(*counts)


NAMES = st.sampled_from(["a", "b", "c"])
VALUES = st.sampled_from([0, 1, True, "1"])
# Actual calls: every call of a tool has the same arguments, as a tool's schema gives them.
FULL = st.builds(lambda name, arguments: {"name": name, "arguments": arguments}, NAMES,
                 st.fixed_dictionaries({"x": VALUES, "y": VALUES}))  # fmt: skip
LOOSE = st.builds(lambda name, arguments: {"name": name, "arguments": arguments}, NAMES,
                  st.dictionaries(st.sampled_from(["x", "y", "z"]), VALUES, max_size=2))  # fmt: skip
EXPECTED_CALLS = st.one_of(st.builds(lambda name: {"name": name}, NAMES), LOOSE)


def brute_force(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> int:
    def best(i: int, used: frozenset[int]) -> int:
        if i == len(expected):
            return 0
        taken = [1 + best(i + 1, used | {j}) for j, call in enumerate(actual)
                 if j not in used and call_matches(expected[i], call)]  # fmt: skip
        return max([best(i + 1, used), *taken])

    return best(0, frozenset())


def valid(pairs: list[tuple[int, int]], expected: list[Any], actual: list[Any]) -> bool:
    lefts, rights = [i for i, _ in pairs], [j for _, j in pairs]
    return (len(set(lefts)) == len(lefts) and len(set(rights)) == len(rights)
            and all(call_matches(expected[i], actual[j]) for i, j in pairs))  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(EXPECTED_CALLS, max_size=5), st.lists(FULL, max_size=5), st.randoms(use_true_random=False))
def test_matchings_are_valid_maximum_and_independent_of_order(
    expected: list[dict[str, Any]], actual: list[dict[str, Any]], random: Any
) -> None:
    pairs = match_calls(expected, actual)
    assert valid(pairs, expected, actual)
    assert len(pairs) == brute_force(expected, actual)
    shuffled_expected, shuffled_actual = random.sample(expected, len(expected)), random.sample(actual, len(actual))
    assert len(match_calls(shuffled_expected, shuffled_actual)) == len(pairs)
    in_order = match_calls(expected, actual, ordered=True)
    assert valid(in_order, expected, actual) and len(in_order) <= len(pairs)
    assert all(a < b for a, b in itertools.pairwise([j for _, j in in_order]))
    assert [i for i, _ in in_order] == sorted(i for i, _ in in_order)


@settings(max_examples=300, deadline=None)
@given(st.lists(FULL, max_size=6), st.lists(FULL, max_size=6))
def test_matching_fully_given_calls_is_symmetric_in_count(left: list[dict[str, Any]], right: list[dict[str, Any]]) -> None:
    # With every argument given, a match is plain equality, which does not care which side is expected.
    assert len(match_calls(left, right)) == len(match_calls(right, left))
    assert len(match_calls(left, right, ordered=True)) == len(match_calls(right, left, ordered=True))


# -- the evaluator --------------------------------------------------------------------


def test_registered_with_three_criteria() -> None:
    assert registered_evaluators()["tool_calls"] is ToolCalls
    evaluator = build()
    assert [(o.criterion, o.kind, o.metric_kind) for o in evaluator.outputs()] == [
        ("tool_calls", "pass_fail", "proportion"),
        ("tool_calls.precision", "score", "mean"),
        ("tool_calls.recall", "score", "mean"),
    ]
    assert [o.criterion for o in build(criterion="agent_tools").outputs()] == [
        "agent_tools", "agent_tools.precision", "agent_tools.recall",
    ]  # fmt: skip


@pytest.mark.parametrize("options", [{"tools": []}, {"tools": [""]}, {"tools": "search"}, {"ordered": "yes"},
                                     {"data_mapping": {"query": "{{item.q}}"}}, {"arguments": True}])  # fmt: skip
def test_invalid_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(EvaluatorConfigError):
        build(**options)


@pytest.mark.parametrize("kind", FORMATS)
def test_recorded_rows_in_every_format(kind: str) -> None:
    verdict = run(build(), recorded({"response": FORMATS[kind](CALLS), "tool_calls": EXPECTED}))
    assert scores(verdict) == (1.0, pytest.approx(2 / 3), 1.0)
    assert verdict.detail == {"matched": 2, "expected": 2, "actual": 3, "unexpected": ["search"]}


@pytest.mark.parametrize("kind", FORMATS)
def test_a_missed_call_fails_in_every_format(kind: str) -> None:
    expected = [*EXPECTED, spec("order_status", order=8)]
    verdict = run(build(), recorded({"response": FORMATS[kind](CALLS), "tool_calls": expected}))
    assert scores(verdict) == (0.0, pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert verdict.detail["missing"] == [spec("order_status", order=8)]


def test_a_live_agent_is_read_from_its_output_items() -> None:
    assert scores(run(build(), live(vendor(CALLS)))) == (1.0, pytest.approx(2 / 3), 1.0)
    # Or from a mapping naming them; either way the expected calls are the case's.
    mapped = build(data_mapping={"response": "{{sample.output_items}}"})
    assert scores(run(mapped, live(vendor(CALLS)))) == (1.0, pytest.approx(2 / 3), 1.0)


def test_data_mapping_overrides_both_inputs() -> None:
    evaluator = build(data_mapping={"response": "{{item.trace}}", "tool_calls": "{{item.gold.calls}}"})
    row = {"trace": chat(CALLS), "gold": {"calls": [{"name": "search"}]}, "response": "not a transcript"}
    assert scores(run(evaluator, recorded(row))) == (1.0, pytest.approx(1 / 3), 1.0)
    # A live case's row may give the transcript too (a recorded trace replayed against the case).
    replay = build(data_mapping={"response": "{{item.input}}"})
    case = live(None)
    case = CaseView(case_id="c1", input=anthropic(CALLS), expected=case.expected, metadata={}, output=None,
                    item={**case.item, "input": anthropic(CALLS)})  # fmt: skip
    assert scores(run(replay, case)) == (1.0, pytest.approx(2 / 3), 1.0)


def test_ordered_matching() -> None:
    evaluator = build(ordered=True)
    # order_status came second, after the first search: in order, only one of the two is found.
    assert scores(run(evaluator, live(vendor(CALLS)))) == (0.0, pytest.approx(1 / 3), 0.5)
    in_order = [spec("search", query="refunds"), spec("order_status", order=7)]
    assert scores(run(evaluator, live(vendor(CALLS), {"tool_calls": in_order}))) == (1.0, pytest.approx(2 / 3), 1.0)


def test_tools_restricts_the_calls_that_count_on_both_sides() -> None:
    evaluator = build(tools=["order_status"])
    verdict = run(evaluator, live(vendor(CALLS)))
    assert scores(verdict) == (1.0, 1.0, 1.0)
    assert verdict.detail == {"matched": 1, "expected": 1, "actual": 1}
    # Calls that do not count are not part of what is judged (nor of the judgment's identity).
    other = [("search", {"query": "anything"}), ("order_status", {"order": 7})]
    assert evaluator.read(live(vendor(CALLS))) == evaluator.read(live(vendor(other)))
    only_search = {"tool_calls": [spec("search", query="refunds")]}
    assert run(evaluator, live(vendor(CALLS), only_search)) == Verdict.excluded("not_applicable:no_expected_tool_calls")


def test_an_agent_without_calls_has_recall_and_precision_zero() -> None:
    for kind in FORMATS.values():
        verdict = run(build(), recorded({"response": kind([]), "tool_calls": EXPECTED}))
        assert scores(verdict) == (0.0, 0.0, 0.0)
        assert verdict.reason is not None and "precision, undefined, is reported as 0" in verdict.reason
        assert verdict.detail == {"matched": 0, "expected": 2, "actual": 0, "missing": EXPECTED}


def test_exclusions() -> None:
    evaluator = build()
    assert run(evaluator, live(None)) == Verdict.excluded("no_transcript")
    assert run(evaluator, live(vendor(CALLS), {})) == Verdict.excluded("missing_field:tool_calls")
    assert run(evaluator, live(vendor(CALLS), {"tool_calls": []})) == Verdict.excluded(
        "not_applicable:no_expected_tool_calls")  # fmt: skip
    assert run(evaluator, recorded({"tool_calls": EXPECTED})) == Verdict.excluded("missing_field:response")
    assert run(evaluator, recorded({"response": None, "tool_calls": EXPECTED})) == Verdict.excluded(
        "missing_field:response")  # fmt: skip
    assert run(evaluator, recorded({"response": chat(CALLS)})) == Verdict.excluded("missing_field:tool_calls")
    mapped = build(data_mapping={"response": "{{sample.output_items}}"})
    assert run(mapped, live(None)) == Verdict.excluded("missing_field:response")


@pytest.mark.parametrize(("value", "field", "message"), [
    ({"name": "search"}, "expected.tool_calls", "expected a list"),
    ([{"name": "a"}, {"name": "b"}, {"arguments": {}}], "expected.tool_calls[2].name", "got nothing"),
    ([{"name": 5}], "expected.tool_calls[0].name", "got a number"),
    ([{"name": ""}], "expected.tool_calls[0].name", "non-empty string"),
    (["search"], "expected.tool_calls[0]", "got a string"),
    ([{"name": "a", "arguments": ["q"]}], "expected.tool_calls[0].arguments", "got a list"),
    ([{"name": "a", "arguments": None}], "expected.tool_calls[0].arguments", "got null"),
    ([{"name": "a", "args": {"q": 1}}], "expected.tool_calls[0].args", "unknown key 'args'"),
])  # fmt: skip
def test_check_case_refuses_malformed_expected_calls(value: Any, field: str, message: str) -> None:
    with pytest.raises(DatasetError, match=message) as info:
        build().check_case(live(None, {"tool_calls": value}))
    assert info.value.field == field


def test_check_case_names_the_row_field_the_expected_calls_come_from() -> None:
    bad = [{"name": "a"}, {"arguments": {}}]
    with pytest.raises(DatasetError) as info:
        build().check_case(recorded({"response": chat(CALLS), "tool_calls": bad}))
    assert info.value.field == "tool_calls[1].name"
    with pytest.raises(DatasetError) as info:
        build(data_mapping={"tool_calls": "{{item.gold.calls}}"}).check_case(recorded({"gold": {"calls": bad}}))
    assert info.value.field == "gold.calls[1].name"


def test_check_case_refuses_a_malformed_recorded_transcript() -> None:
    transcript = chat(CALLS)
    transcript[1]["tool_calls"][0]["function"]["arguments"] = "{not json"
    with pytest.raises(TranscriptError, match="JSON text of an object") as info:
        build().check_case(recorded({"response": transcript, "tool_calls": EXPECTED}))
    assert info.value.field == "response[1].tool_calls[0].function.arguments"
    with pytest.raises(TranscriptError) as info:
        build(data_mapping={"response": "{{item.trace}}"}).check_case(recorded({"trace": "a transcript"}))
    assert info.value.field == "trace"


def test_check_case_leaves_what_the_system_produces_to_the_run() -> None:
    mapped = build(data_mapping={"response": "{{sample.output_items}}"})
    mapped.check_case(live(None))  # nothing produced yet: nothing to check
    broken = [{"role": "assistant", "content": [{"type": "tool_call", "name": "search"}]}]
    verdict = run(build(), live(broken))
    assert verdict.status == "error" and verdict.reason is not None
    assert verdict.reason.startswith("output_items[0].content[0]: expected an object with 'arguments'")


def test_a_recorded_dataset_is_checked_before_anything_runs(tmp_path: Path) -> None:
    rows = [{"response": vendor(CALLS), "tool_calls": EXPECTED},
            {"response": vendor(CALLS), "tool_calls": [{"name": "search", "arguments": "refunds"}]}]  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    dataset = load_cases(str(path), recorded=True)

    def locate(message: str, location: tuple[str | int, ...]) -> ConfigError:
        return ConfigError(message, field=".".join(map(str, location)))

    with pytest.raises(DatasetError) as info:
        check_inputs([build()], dataset, locate)
    assert (info.value.line, info.value.field) == (2, "tool_calls[0].arguments")
    path.write_text(json.dumps({"transcript": vendor(CALLS), "tool_calls": EXPECTED}) + "\n")
    with pytest.raises(ConfigError, match=r"\{\{item.response\}\}"):
        check_inputs([build()], load_cases(str(path), recorded=True), locate)
