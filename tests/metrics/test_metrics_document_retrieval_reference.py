"""``document_retrieval`` against the recorded outputs of ``azure-ai-evaluation``.

The fixture (written by ``scripts/reference/document_retrieval_fixture.py``) holds
seeded cases with what ``DocumentRetrievalEvaluator`` returned or raised. Every case
goes through the evaluator as a recorded row: its checks, its reading and its judge.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from oloproof._exceptions import ConfigError, DatasetError, EvaluatorConfigError
from oloproof.evaluators import CaseView, JudgeContext, Verdict, build_evaluators

FIXTURE = Path(__file__).parent / "fixtures" / "document_retrieval_reference.json"
GT, RD = "retrieval_ground_truth", "retrieved_documents"
FIELDS = {GT: "query_relevance_label", RD: "relevance_score"}
TOLERANCE = 1e-9


def _decode(value: dict[str, Any]) -> Any:
    return float(value["$float"]) if set(value) == {"$float"} else value


def _expand(value: Any, name: str) -> Any:
    if isinstance(value, dict) and "$sequence" in value:
        spec = value["$sequence"]
        return [{"document_id": f"{spec['id_prefix']}{i}", FIELDS[name]: spec["value"]} for i in range(spec["count"])]
    return value


@cache
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"), object_hook=_decode)


def cases(*groups: str) -> list[Any]:
    return [pytest.param(case, id=case["id"]) for case in fixture()["cases"] if case["group"] in groups]


def row_of(case: dict[str, Any]) -> dict[str, Any]:
    return {name: _expand(case[name], name) for name in (GT, RD) if name in case}


def build(case: dict[str, Any]):
    parameters = case["parameters"]
    entry = {"type": "document_retrieval", "ground_truth_label_min": parameters["ground_truth_label_min"],
             "ground_truth_label_max": parameters["ground_truth_label_max"]}  # fmt: skip
    if "thresholds" in parameters:
        entry["thresholds"] = parameters["thresholds"]
    (evaluator,) = build_evaluators([entry], rag=True)
    return evaluator


def evaluate(case: dict[str, Any], row: dict[str, Any] | None = None) -> tuple[Any, Verdict]:
    """Check, read and judge one fixture case as a recorded row."""
    evaluator = build(case)
    view = CaseView(case_id=case["id"], input=None, expected={}, metadata={}, output=None,
                    item=row_of(case) if row is None else row, recorded=True)  # fmt: skip
    evaluator.check_case(view)
    fields = evaluator.read(view)
    if isinstance(fields, Verdict):
        return evaluator, fields
    return evaluator, evaluator.judge(fields, JudgeContext())


def metrics_of(evaluator: Any, verdict: Verdict) -> dict[str, float]:
    assert verdict.status == "observed", verdict.reason
    assert verdict.scores is not None
    return {criterion.removeprefix("document_retrieval."): value for criterion, value in verdict.scores.items()}


def passed_of(evaluator: Any, verdict: Verdict) -> set[str]:
    assert verdict.scores is not None
    names = set()
    for output in evaluator.outputs():
        _, passed, _ = output.verdict_of(verdict.scores[output.criterion])
        if passed:
            names.add(output.criterion.removeprefix("document_retrieval."))
    return names


def same(ours: float, theirs: float) -> bool:
    if math.isnan(theirs):
        return math.isnan(ours)
    return math.isclose(ours, theirs, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def differences(ours: dict[str, float], theirs: dict[str, float]) -> dict[str, tuple[float, float]]:
    return {name: (ours[name], value) for name, value in theirs.items() if not same(ours[name], float(value))}


def test_the_fixture_names_the_reference_and_covers_every_group() -> None:
    data = fixture()
    assert data["reference"]["package"] == "azure-ai-evaluation"
    assert data["reference"]["version"].startswith("1.18.")
    groups = {case["group"] for case in data["cases"]}
    assert groups == {"valid", "invalid", "stricter", "fidelity_label_strings", "duplicates", "negative_range"}
    assert sum(case["group"] == "valid" for case in data["cases"]) >= 300
    assert sum(case["group"] == "invalid" for case in data["cases"]) >= 50


@pytest.mark.parametrize("case", cases("valid"))
def test_valid_cases_agree_with_the_reference(case: dict[str, Any]) -> None:
    evaluator, verdict = evaluate(case)
    reference = case["reference"]
    ours = metrics_of(evaluator, verdict)
    assert set(ours) == set(reference["metrics"])
    assert differences(ours, reference["metrics"]) == {}
    assert passed_of(evaluator, verdict) == set(reference["passed"])
    assert same(verdict.score, reference["score"])


@pytest.mark.parametrize("case", cases("invalid", "stricter", "negative_range"))
def test_invalid_cases_are_rejected_with_the_field(case: dict[str, Any]) -> None:
    expected = case["oloproof"]
    if case["group"] == "invalid":
        assert "raised" in case["reference"]
    if "excluded" in expected:
        _, verdict = evaluate(case)
        assert verdict.status == "excluded" and verdict.reason == expected["excluded"]
        return
    error_type = DatasetError if expected["error"] == "DatasetError" else ConfigError
    with pytest.raises(error_type) as info:
        evaluate(case)
    if error_type is ConfigError:
        assert isinstance(info.value, EvaluatorConfigError)
        assert info.value.field == f"evaluators.0.{expected['field']}"
    else:
        assert info.value.field == expected["field"]


@pytest.mark.parametrize("case", cases("fidelity_label_strings"))
def test_fidelity_weighs_labels_by_value_where_the_reference_sorts_strings(case: dict[str, Any]) -> None:
    evaluator, verdict = evaluate(case)
    ours = metrics_of(evaluator, verdict)
    reference = case["reference"]["metrics"]
    assert set(differences(ours, reference)) <= {"fidelity"}
    # Fidelity from its definition: labels above the minimum weigh 2**(l + 1) - 1.
    low = case["parameters"]["ground_truth_label_min"]
    labels = {item["document_id"]: item["query_relevance_label"] for item in case[GT]}
    retrieved = {item["document_id"] for item in case[RD]}

    def weight(values: list[int]) -> float:
        return sum(2.0 ** (label + 1) - 1 for label in values if label > low)

    if not any(labels.get(doc, 0) for doc in retrieved):
        assert ours["fidelity"] == 0.0
        return
    expected = weight([labels[doc] for doc in retrieved if doc in labels]) / weight(list(labels.values()))
    assert same(ours["fidelity"], expected)


def test_the_reference_misweighs_fidelity_in_most_label_string_cases() -> None:
    departed = 0
    for param in cases("fidelity_label_strings"):
        evaluator, verdict = evaluate(param.values[0])
        departed += "fidelity" in differences(metrics_of(evaluator, verdict), param.values[0]["reference"]["metrics"])
    assert departed >= len(cases("fidelity_label_strings")) // 2


@pytest.mark.parametrize("case", cases("duplicates"))
def test_duplicates_count_once_as_the_reference_scores_the_deduplicated_lists(case: dict[str, Any]) -> None:
    evaluator, verdict = evaluate(case)
    ours = metrics_of(evaluator, verdict)
    deduplicated = case["deduplicated"]
    assert differences(ours, deduplicated["reference"]["metrics"]) == {}
    assert differences(ours, case["reference"]["metrics"]) != {}  # the reference counts every entry
    unique = evaluate(case, row={GT: deduplicated[GT], RD: deduplicated[RD]})
    assert metrics_of(*unique) == ours


@pytest.mark.parametrize("case", cases("negative_range"))
def test_negative_ranges_are_refused_where_the_reference_scores_or_divides_by_zero(case: dict[str, Any]) -> None:
    assert case["parameters"]["ground_truth_label_min"] < 0
    reference = case["reference"]
    assert "metrics" in reference or reference["raised"] == "ZeroDivisionError"
    with pytest.raises(EvaluatorConfigError) as info:
        build(case)
    assert info.value.field == "evaluators.0.ground_truth_label_min"
