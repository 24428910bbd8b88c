"""``tool_calls``: the tool calls of an agent's transcript against the calls a case expects.

Deterministic, no judge. The expected calls are a list of ``{"name", "arguments"}``
objects; ``arguments`` is optional, and the arguments it gives must each equal the
call's (as JSON values: ``true`` is not ``1``, ``1`` is ``1.0``, objects and lists
compare whole), while arguments it does not give are not compared. Each expected
call is matched by at most one actual call and each actual call matches at most one
expected call; the matching is a maximum one (``ordered: false``, the default) or the
longest run of expected calls found in order in the transcript (``ordered: true``).

Three criteria, ``tool_calls`` by default (``<criterion>`` when the entry names its
own, the other two then ``<criterion>.precision`` and ``<criterion>.recall``):

* ``tool_calls``: pass/fail, passing when every expected call is matched;
* ``tool_calls.precision``: matched calls over the agent's calls, in [0, 1];
* ``tool_calls.recall``: matched calls over the expected calls, in [0, 1].

With ``tools`` set, only calls of those tools count, on both sides: the agent's other
calls are not the evaluator's concern, and expected calls of other tools are left to
entries that count them.

Where the inputs come from:

* ``response``, the transcript, in any format `oloproof.transcripts.read_transcript`
  reads: a live agent's ``output_items`` unless a ``data_mapping`` names it; for
  recorded rows, the row's ``response`` field (or the mapped one).
* ``tool_calls``, the expected calls: ``expected.tool_calls`` of a case unless a
  ``data_mapping`` names it (``{{item.expected_tool_calls}}``); for recorded rows, the
  row's ``tool_calls`` field (or the mapped one), as every input of recorded rows
  defaults to the row's field of its name.

Conventions where a ratio has nothing to count:

* No expected calls (an empty list, or none left after ``tools``): the case is
  excluded, ``not_applicable:no_expected_tool_calls``, as a query without relevant
  documents is left out of retrieval metrics; this evaluator does not check that an
  agent calls no tools.
* Expected calls but no call by the agent: recall 0, the pass/fail criterion fails,
  and precision, undefined over no calls, is reported as 0 (trec_eval's set precision
  of an empty retrieval, scikit-learn's ``zero_division=0``), so an agent that calls
  nothing never scores better than one that calls the wrong tools; the verdict's
  reason says so.

Malformed input is refused before anything runs when it is the row's own: an expected
calls value that is not a list of ``{"name", "arguments"}`` objects (``name`` a
non-empty string, ``arguments`` an object, no other key), or a recorded transcript
that is malformed; the error names the field, e.g. ``expected.tool_calls[2].name`` or
``response[3].content[0].arguments``. A live agent's malformed transcript is that
case's error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field, JsonValue
from typing_extensions import TypedDict

from oloproof._exceptions import DatasetError, TranscriptError
from oloproof._json import json_kind
from oloproof.evaluators._base import (
    MISSING,
    UNMAPPED,
    CaseView,
    Evaluator,
    EvaluatorOptions,
    JudgeContext,
    Output,
    Verdict,
    evaluator,
)
from oloproof.transcripts import read_transcript

__all__ = [
    "CallSpec",
    "ToolCalls",
    "ToolCallsFields",
    "ToolCallsOptions",
    "actual_calls",
    "call_matches",
    "json_equal",
    "match_calls",
    "parse_expected_calls",
    "tool_call_scores",
]

RESPONSE, EXPECTED = "response", "tool_calls"
_SHOWN = 10  # unmatched calls listed in a verdict's detail


class CallSpec(TypedDict):
    """A tool call as the kernel compares it.

    Attributes:
        name: The tool's name.
        arguments: For an expected call, the arguments it requires (absent: none);
            for an actual call, all of its arguments.
    """

    name: str
    arguments: NotRequired[dict[str, JsonValue]]


# -- the matching kernel ------------------------------------------------------------


def json_equal(left: object, right: object) -> bool:
    """Whether two JSON values are equal as JSON: ``true`` is not ``1``, ``1`` is ``1.0``.

    Python's ``==`` says ``True == 1``; JSON has booleans and numbers apart.
    """
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(value, right[key]) for key, value in left.items())
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
    if left is None or right is None:
        return left is None and right is None
    return type(left) is type(right) and left == right


def call_matches(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Whether an actual call satisfies an expected one.

    Args:
        expected: ``{"name", "arguments"?}``; each argument it gives must be the call's.
        actual: ``{"name", "arguments"}`` of the call made.

    Returns:
        True when the names are equal and every given argument equals the call's.
    """
    if expected["name"] != actual["name"]:
        return False
    made = actual.get("arguments") or {}
    return all(key in made and json_equal(value, made[key]) for key, value in (expected.get("arguments") or {}).items())


def match_calls(
    expected: Sequence[Mapping[str, Any]], actual: Sequence[Mapping[str, Any]], *, ordered: bool = False
) -> list[tuple[int, int]]:
    """A largest one-to-one matching of expected calls to actual calls.

    Args:
        expected: The expected calls (`CallSpec`).
        actual: The calls made, in transcript order (`CallSpec`).
        ordered: Match the expected calls as a subsequence of the actual ones, in
            order (a longest common subsequence under `call_matches`); otherwise any
            pairing (a maximum bipartite matching).

    Returns:
        ``(expected index, actual index)`` pairs, by expected index; with ``ordered``
        the actual indices increase too.
    """
    if ordered:
        return _longest_subsequence(expected, actual)
    adjacency = [[j for j, call in enumerate(actual) if call_matches(wanted, call)] for wanted in expected]
    owner = [-1] * len(actual)  # the expected call each actual call is matched to
    for left in range(len(expected)):
        _augment(left, adjacency, owner)
    return sorted((left, right) for right, left in enumerate(owner) if left >= 0)


def _augment(start: int, adjacency: list[list[int]], owner: list[int]) -> None:
    """Grow the matching by one along an augmenting path from ``start``, if there is one.

    Kuhn's search, iterative: a recursive one would be as deep as the expected calls are many.
    """
    for right in adjacency[start]:  # a free call first: the common case, and the earliest one
        if owner[right] < 0:
            owner[right] = start
            return
    seen = [False] * len(owner)
    stack: list[tuple[int, Iterator[int]]] = [(start, iter(adjacency[start]))]
    via: list[int] = []  # the actual call each stacked expected call would take
    while stack:
        for right in stack[-1][1]:
            if seen[right]:
                continue
            seen[right] = True
            via.append(right)
            if owner[right] < 0:
                for (left, _), taken in zip(stack, via, strict=True):
                    owner[taken] = left
                return
            stack.append((owner[right], iter(adjacency[owner[right]])))
            break
        else:
            stack.pop()
            if via:
                via.pop()


def _longest_subsequence(
    expected: Sequence[Mapping[str, Any]], actual: Sequence[Mapping[str, Any]]
) -> list[tuple[int, int]]:
    rows, columns = len(expected), len(actual)
    hits = [[call_matches(wanted, call) for call in actual] for wanted in expected]
    # best[i][j]: the longest matched subsequence of expected[i:] in actual[j:].
    best = [[0] * (columns + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(columns - 1, -1, -1):
            skip = max(best[i + 1][j], best[i][j + 1])
            best[i][j] = max(skip, best[i + 1][j + 1] + 1) if hits[i][j] else skip
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < rows and j < columns:
        if hits[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def tool_call_scores(matched: int, expected: int, actual: int) -> tuple[bool, float, float]:
    """``(all matched, precision, recall)`` of a matching.

    Args:
        matched: The matched pairs.
        expected: The expected calls (at least one).
        actual: The calls made; with none, precision is 0 (trec_eval's convention).

    Returns:
        Whether every expected call is matched, matched / actual, matched / expected.

    Raises:
        ValueError: No expected calls, or more matches than either side has calls.
    """
    if expected < 1 or not 0 <= matched <= min(expected, actual):
        raise ValueError(f"invalid counts: {matched} matched of {expected} expected and {actual} actual calls")
    return matched == expected, (matched / actual if actual else 0.0), matched / expected


# -- reading the inputs -------------------------------------------------------------


def parse_expected_calls(value: object, where: str) -> list[CallSpec]:
    """The expected calls, checked.

    Args:
        value: The value as read: a list of ``{"name", "arguments"?}`` objects.
        where: Where the value was read, for errors (``expected.tool_calls``).

    Returns:
        The calls, in order, ``arguments`` only where given.

    Raises:
        DatasetError: The value is not such a list; ``field`` names the entry, e.g.
            ``expected.tool_calls[2].name``.
    """
    if not isinstance(value, list):
        raise DatasetError(f"expected a list of {{name, arguments}} objects, got {json_kind(value)}", field=where)
    calls: list[CallSpec] = []
    for index, entry in enumerate(value):
        at = f"{where}[{index}]"
        if not isinstance(entry, dict):
            raise DatasetError(f"expected a {{name, arguments}} object, got {json_kind(entry)}", field=at)
        # An unknown key is most likely a misspelt "arguments", which would compare nothing.
        for key in entry:
            if key not in ("name", "arguments"):
                raise DatasetError(f"unknown key {key!r} (an expected call has name and arguments)", field=f"{at}.{key}")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            shown = "nothing" if "name" not in entry else json_kind(name)
            raise DatasetError(f"expected the tool's name as a non-empty string, got {shown}", field=f"{at}.name")
        call: CallSpec = {"name": name}
        if "arguments" in entry:
            arguments = entry["arguments"]
            if not isinstance(arguments, dict):
                raise DatasetError(f"expected the arguments as an object, got {json_kind(arguments)}",
                                   field=f"{at}.arguments")  # fmt: skip
            call["arguments"] = arguments
        calls.append(call)
    return calls


def actual_calls(value: object, where: str) -> list[CallSpec]:
    """Every tool call of a transcript, in order.

    Raises:
        TranscriptError: The transcript is malformed; ``field`` is ``where`` followed
            by the path inside it, e.g. ``response[2].tool_calls[0].function.arguments``.
    """
    try:
        transcript = read_transcript(value)
    except TranscriptError as error:
        inside = error.field or ""
        raise TranscriptError(error.message, field=f"{where}{'' if inside.startswith('[') else '.'}{inside}"
                              if inside else where) from None  # fmt: skip
    return [{"name": call.name, "arguments": dict(call.arguments)}
            for message in transcript.messages for call in message.tool_calls]  # fmt: skip




# -- the evaluator ------------------------------------------------------------------


class ToolCallsOptions(EvaluatorOptions):
    """Options of ``tool_calls``."""

    ordered: bool = Field(default=False, strict=True)
    """Match the expected calls in their order, as a subsequence of the agent's calls
    (other calls may come between them); by default in any order."""

    tools: list[Annotated[str, Field(min_length=1, strict=True)]] | None = Field(default=None, min_length=1)
    """Only calls of these tools count, the agent's and the expected ones; unset: all calls."""


class ToolCallsFields(TypedDict, total=False):
    """What ``tool_calls`` reads: both lists of calls, or why the system's input was invalid.

    Attributes:
        expected: The expected calls that count, in order.
        actual: The agent's calls that count, in transcript order.
        invalid: What is wrong with an input the system produced.
    """

    expected: list[CallSpec]
    actual: list[CallSpec]
    invalid: str


@evaluator("tool_calls")
class ToolCalls(Evaluator[ToolCallsFields]):
    """Whether an agent made the expected tool calls, and their precision and recall."""

    options_model = ToolCallsOptions
    options: ToolCallsOptions
    inputs = required_inputs = (RESPONSE, EXPECTED)

    def metric_names(self) -> tuple[str, ...]:
        """The criteria besides the pass/fail one, in the order they are reported."""
        return ("precision", "recall")

    def criterion_of(self, metric: str) -> str:
        """The criterion a metric is reported under, e.g. ``tool_calls.recall``."""
        return f"{self.criterion}.{metric}"

    def outputs(self) -> tuple[Output, ...]:
        return (
            Output(self.criterion, "pass_fail"),
            *(Output(self.criterion_of(metric), "score", low=0.0, high=1.0) for metric in self.metric_names()),
        )

    # -- reading --------------------------------------------------------------------

    def _source(self, case: CaseView, name: str) -> tuple[str, Literal["row", "system"]] | None:
        """Where input ``name`` is read: its field for errors, and whether the row or the system
        gives it; ``None`` for a live agent's own transcript."""
        template = self.mapping.get(name)
        if template is None:
            if case.recorded:
                return name, "row"
            return (f"expected.{EXPECTED}", "row") if name == EXPECTED else None
        references = template.references
        system = not case.recorded and any(reference.namespace == "sample" for reference in references)
        lone = len(template.parts) == 1 and references[0].namespace == "item" and references[0].path
        return (references[0].path if lone else name), "system" if system else "row"

    def _value(self, case: CaseView, name: str) -> Any:
        value = self.mapped(case, name)
        if value is UNMAPPED:
            if name == EXPECTED:
                return case.expected.get(EXPECTED, MISSING)
            return MISSING if case.output_items is None else case.output_items
        return value

    def _counts(self, name: str) -> bool:
        return self.options.tools is None or name in self.options.tools

    def check_case(self, case: CaseView) -> None:
        # The row's own inputs are checked here, before anything runs; what the system
        # produces is checked when it is read.
        for name in (EXPECTED, RESPONSE):
            source = self._source(case, name)
            if source is None or source[1] == "system":
                continue
            value = self._value(case, name)
            if value is MISSING or value is None:
                continue
            if name == EXPECTED:
                parse_expected_calls(value, source[0])
            else:
                actual_calls(value, source[0])

    def read(self, case: CaseView) -> ToolCallsFields | Verdict:
        values: dict[str, Any] = {}
        for name in (RESPONSE, EXPECTED):
            value = self._value(case, name)
            if value is MISSING or value is None:
                no_transcript = name == RESPONSE and RESPONSE not in self.mapping and not case.recorded
                return Verdict.excluded("no_transcript" if no_transcript else f"missing_field:{name}")
            values[name] = value
        try:
            source = self._source(case, EXPECTED)
            expected = parse_expected_calls(values[EXPECTED], source[0] if source else EXPECTED)
            source = self._source(case, RESPONSE)
            actual = actual_calls(values[RESPONSE], source[0] if source else "output_items")
        except DatasetError as error:
            # Rows were checked before the run: this is the system's output, and a
            # malformed one is this case's error, not a crash of the run.
            return {"invalid": f"{error.field}: {error.message}"}
        expected = [call for call in expected if self._counts(call["name"])]
        if not expected:
            return Verdict.excluded("not_applicable:no_expected_tool_calls")
        # Calls that do not count stay out of the judgment's identity as well.
        return {"expected": expected, "actual": [call for call in actual if self._counts(call["name"])]}

    # -- judging --------------------------------------------------------------------

    def judge(self, fields: ToolCallsFields, ctx: JudgeContext) -> Verdict:
        if "invalid" in fields:
            return Verdict.error(fields["invalid"])
        expected, actual = fields.get("expected", []), fields.get("actual", [])
        pairs = match_calls(expected, actual, ordered=self.options.ordered)
        passed, precision, recall = tool_call_scores(len(pairs), len(expected), len(actual))
        expected_hit, actual_hit = {i for i, _ in pairs}, {j for _, j in pairs}
        missing = [call for i, call in enumerate(expected) if i not in expected_hit]
        unexpected = [call["name"] for j, call in enumerate(actual) if j not in actual_hit]
        detail: dict[str, object] = {"matched": len(pairs), "expected": len(expected), "actual": len(actual)}
        if missing:
            detail["missing"] = missing[:_SHOWN]
        if unexpected:
            detail["unexpected"] = unexpected[:_SHOWN]
        scores = {self.criterion: 1.0 if passed else 0.0, self.criterion_of("precision"): precision,
                  self.criterion_of("recall"): recall}  # fmt: skip
        return Verdict(
            score=scores[self.criterion],
            scores=scores,
            reason="the agent made no tool calls: precision, undefined, is reported as 0" if not actual else None,
            detail=detail,
        )
