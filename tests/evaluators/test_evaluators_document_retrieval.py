"""``document_retrieval``: outputs, thresholds, validation, departures and where its inputs come from."""

from __future__ import annotations

import math
from typing import Any

import pytest

from oloproof._exceptions import DatasetError, EvaluatorConfigError
from oloproof.evaluators import (
    CaseView,
    DocumentRetrieval,
    JudgeContext,
    Verdict,
    build_evaluators,
)

GT, RD = "retrieval_ground_truth", "retrieved_documents"
TRUTH = [
    {"document_id": "1", "query_relevance_label": 4},
    {"document_id": "2", "query_relevance_label": 2},
    {"document_id": "3", "query_relevance_label": 3},
    {"document_id": "4", "query_relevance_label": 1},
    {"document_id": "5", "query_relevance_label": 0},
]
RANKING = [
    {"document_id": "2", "relevance_score": 45.1},
    {"document_id": "6", "relevance_score": 35.8},
    {"document_id": "3", "relevance_score": 29.2},
    {"document_id": "5", "relevance_score": 25.4},
    {"document_id": "7", "relevance_score": 18.8},
]
METRICS = (
    "ndcg@3", "xdcg@3", "fidelity", "top1_relevance", "top3_max_relevance", "holes", "holes_ratio",
    "total_retrieved_documents", "total_ground_truth_documents",
)  # fmt: skip


def build(rag: bool = True, **options: Any) -> DocumentRetrieval:
    (evaluator,) = build_evaluators([{"type": "document_retrieval", **options}], rag=rag)
    assert isinstance(evaluator, DocumentRetrieval)
    return evaluator


def recorded(row: dict[str, Any]) -> CaseView:
    return CaseView(case_id="c1", input=None, expected={}, metadata={}, output=None, item=row, recorded=True)


def staged(candidates: list[dict[str, Any]] | None, relevant: list[dict[str, Any]] | None,
           output: Any = None) -> CaseView:  # fmt: skip
    expected = {} if relevant is None else {"relevant": relevant}
    item = {"id": "c1", "input": "q", "expected": expected, "metadata": {}}
    return CaseView(case_id="c1", input="q", expected=expected, metadata={}, output=output,
                    context=candidates, candidates=candidates, item=item)  # fmt: skip


def passage(doc_id: str, chunk_id: str | None = None) -> dict[str, Any]:
    return {"doc_id": doc_id, "chunk_id": chunk_id, "score": None, "text": doc_id}


def run(evaluator: DocumentRetrieval, case: CaseView) -> Verdict:
    evaluator.check_case(case)
    fields = evaluator.read(case)
    if isinstance(fields, Verdict):
        return fields
    return evaluator.judge(fields, JudgeContext())


def metrics(verdict: Verdict, prefix: str = "document_retrieval.") -> dict[str, float]:
    assert verdict.status == "observed", verdict.reason
    assert verdict.scores is not None
    return {name.removeprefix(prefix): value for name, value in verdict.scores.items()}


def score(truth: Any = TRUTH, ranking: Any = RANKING, **options: Any) -> dict[str, float]:
    return metrics(run(build(**options), recorded({GT: truth, RD: ranking})))


# -- outputs ----------------------------------------------------------------------


def test_the_libraries_sample() -> None:
    result = score()
    # ranked labels 2, hole, 3, 0, hole; ideal 4, 3, 2
    idcg = 15 + 7 / math.log2(3) + 3 / 2
    assert result["ndcg@3"] == pytest.approx((3 + 7 / 2) / idcg)
    assert result["xdcg@3"] == pytest.approx(25 * (2 + 0.36 * 3) / 1.96)
    assert result["fidelity"] == pytest.approx((7 + 15) / (31 + 15 + 7 + 3))
    assert (result["top1_relevance"], result["top3_max_relevance"]) == (2, 3)
    assert (result["holes"], result["holes_ratio"]) == (2, pytest.approx(0.4))
    assert (result["total_retrieved_documents"], result["total_ground_truth_documents"]) == (5, 5)


def test_outputs_directions_and_default_thresholds() -> None:
    outputs = {output.criterion: output for output in build().outputs()}
    assert list(outputs) == [f"document_retrieval.{name}" for name in METRICS]
    thresholds = {name.removeprefix("document_retrieval."): output.threshold for name, output in outputs.items()}
    assert thresholds == {
        "ndcg@3": 0.5, "xdcg@3": 50.0, "fidelity": 0.5, "top1_relevance": 50.0, "top3_max_relevance": 50.0,
        "holes": 0.0, "holes_ratio": 0.0, "total_retrieved_documents": 50.0, "total_ground_truth_documents": 50.0,
    }  # fmt: skip
    lower = {name for name, output in outputs.items() if not output.higher_is_better}
    assert lower == {"document_retrieval.holes", "document_retrieval.holes_ratio"}
    assert outputs["document_retrieval.holes"].kind == "count"
    assert outputs["document_retrieval.ndcg@3"].kind == "score"
    assert (outputs["document_retrieval.xdcg@3"].low, outputs["document_retrieval.xdcg@3"].high) == (0.0, 100.0)
    assert all(output.metric_kind == "proportion" for output in outputs.values())


def test_verdicts_pass_and_fail_in_each_direction() -> None:
    evaluator = build(thresholds={"holes": 2, "fidelity": 0.3})
    verdict = run(evaluator, recorded({GT: TRUTH, RD: RANKING}))
    passed = {}
    for output in evaluator.outputs():
        _, ok, label = output.verdict_of(verdict.scores[output.criterion])
        passed[output.criterion.removeprefix("document_retrieval.")] = (ok, label)
    assert passed["holes"] == (True, "pass")  # 2 holes, at most 2 allowed
    assert passed["holes_ratio"] == (False, "fail")  # 0.4 > 0
    assert passed["fidelity"] == (True, "pass")  # 0.39 >= 0.3
    assert passed["ndcg@3"] == (False, "fail")  # 0.31 < 0.5
    assert verdict.score == verdict.scores["document_retrieval.ndcg@3"]


def test_thresholds_change_verdicts_but_not_the_judgment() -> None:
    default, strict = build(), build(thresholds={"fidelity": 0.3, "ndcg@3": 0.9})
    assert default.identity() == strict.identity()
    assert default.spec_hash != strict.spec_hash
    case = recorded({GT: TRUTH, RD: RANKING})
    assert default.read(case) == strict.read(case)
    threshold = {output.criterion: output.threshold for output in strict.outputs()}
    assert threshold["document_retrieval.fidelity"] == 0.3
    assert threshold["document_retrieval.ndcg@3"] == 0.9
    assert threshold["document_retrieval.xdcg@3"] == 50.0


def test_the_librarys_threshold_parameters_set_thresholds() -> None:
    evaluator = build(fidelity_threshold=0.3, ndcg_threshold=None, top3_max_relevance_threshold=2)
    assert evaluator.options.thresholds == {"fidelity": 0.3, "top3_max_relevance": 2.0}
    assert evaluator.identity() == build().identity()
    assert build(k=5, ndcg_threshold=0.7).options.thresholds == {"ndcg@5": 0.7}
    with pytest.raises(EvaluatorConfigError, match="both set"):
        build(fidelity_threshold=0.3, thresholds={"fidelity": 0.4})
    with pytest.raises(EvaluatorConfigError) as info:
        build(fidelity_threshold="high")
    assert info.value.field == "evaluators.0.thresholds.fidelity"


def test_the_cutoff_renames_metrics_and_thresholds() -> None:
    evaluator = build(k=5, thresholds={"ndcg@5": 0.2, "top5_max_relevance": 3})
    names = [output.criterion for output in evaluator.outputs()]
    assert "document_retrieval.ndcg@5" in names and "document_retrieval.top5_max_relevance" in names
    result = metrics(run(evaluator, recorded({GT: TRUTH, RD: RANKING})))
    assert result["top5_max_relevance"] == 3
    assert result["fidelity"] == score()["fidelity"]


def test_criterion_prefixes_every_metric() -> None:
    evaluator = build(criterion="search")
    assert [output.criterion for output in evaluator.outputs()][:2] == ["search.ndcg@3", "search.xdcg@3"]
    verdict = run(evaluator, recorded({GT: TRUTH, RD: RANKING}))
    assert metrics(verdict, "search.") == score()
    (first, second) = build_evaluators(
        [{"type": "document_retrieval"}, {"type": "document_retrieval", "criterion": "labels_1_5",
                                          "ground_truth_label_min": 1, "ground_truth_label_max": 5}],
        rag=True,
    )  # fmt: skip
    assert first.criterion != second.criterion


def test_an_empty_ranking_scores_zero_and_unlabelled_documents_are_reported() -> None:
    result = score(ranking=[])
    assert all(result[name] == 0 for name in METRICS if name != "total_ground_truth_documents")
    verdict = run(build(), recorded({GT: TRUTH, RD: RANKING}))
    assert verdict.detail == {"unlabelled": ["6", "7"]}


def test_fidelity_without_a_label_above_the_minimum_is_nan_and_fails() -> None:
    evaluator = build(ground_truth_label_min=1, ground_truth_label_max=5)
    truth = [{"document_id": "a", "query_relevance_label": 1}]
    verdict = run(evaluator, recorded({GT: truth, RD: [{"document_id": "a", "relevance_score": 1}]}))
    assert math.isnan(verdict.scores["document_retrieval.fidelity"])
    assert "fidelity is undefined" in verdict.reason
    (fidelity,) = [output for output in evaluator.outputs() if output.criterion.endswith("fidelity")]
    assert fidelity.verdict_of(verdict.scores[fidelity.criterion])[1] is False


# -- options ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        ({"ground_truth_label_min": -1}, "ground_truth_label_min", "shift the labels"),
        ({"ground_truth_label_min": 4}, "ground_truth_label_max", "greater than"),
        ({"ground_truth_label_min": 3, "ground_truth_label_max": 1}, "ground_truth_label_max", "greater than"),
        ({"ground_truth_label_max": 101}, "ground_truth_label_max", "at most 100"),
        ({"ground_truth_label_min": True}, "ground_truth_label_min", "integer"),
        ({"ground_truth_label_max": 4.0}, "ground_truth_label_max", "integer"),
        ({"ground_truth_label_max": "4"}, "ground_truth_label_max", "integer"),
        ({"k": 0}, "k", "greater than"),
        ({"thresholds": {"recall": 0.5}}, "thresholds", "no metric 'recall'"),
        ({"k": 5, "thresholds": {"ndcg@3": 0.5}}, "thresholds", "no metric 'ndcg@3'"),
        ({"thresholds": {"fidelity": "0.3"}}, "thresholds.fidelity", "number"),
        ({"thresholds": {"fidelity": True}}, "thresholds.fidelity", "number"),
        ({"thresholds": {"fidelity": float("nan")}}, "thresholds.fidelity", "finite"),
        ({"data_mapping": {"query": "{{item.q}}"}}, "data_mapping.query", "no input 'query'"),
    ],
)
def test_bad_options_name_their_field(options: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(EvaluatorConfigError) as info:
        build(**options)
    assert info.value.field == f"evaluators.0.{field}"
    assert message in info.value.message


def test_only_deriving_the_ranking_needs_a_rag_system() -> None:
    with pytest.raises(EvaluatorConfigError) as info:
        build(rag=False)
    assert info.value.field == "evaluators.0.type"
    assert build(rag=False, data_mapping={RD: "{{item.ranking}}"}).needs_retrieval is False
    assert build(data_mapping={GT: "{{item.labels}}"}).needs_retrieval is True


# -- validation -------------------------------------------------------------------


def _with(items: list[dict[str, Any]], index: int, **change: Any) -> list[dict[str, Any]]:
    return [{**item, **change} if position == index else item for position, item in enumerate(items)]


@pytest.mark.parametrize(
    ("truth", "ranking", "field"),
    [
        ([], RANKING, GT),
        ("1", RANKING, GT),
        (None, RANKING, GT),
        (TRUTH, None, RD),
        (TRUTH, {"document_id": "1", "relevance_score": 1.0}, RD),
        ([*TRUTH[:2], "3"], RANKING, f"{GT}[2]"),
        (TRUTH, [*RANKING[:3], None], f"{RD}[3]"),
        (_with(TRUTH, 1, query_relevance_label="2"), RANKING, f"{GT}[1].query_relevance_label"),
        (_with(TRUTH, 1, query_relevance_label=2.0), RANKING, f"{GT}[1].query_relevance_label"),
        (_with(TRUTH, 1, query_relevance_label=True), RANKING, f"{GT}[1].query_relevance_label"),
        (_with(TRUTH, 1, query_relevance_label=None), RANKING, f"{GT}[1].query_relevance_label"),
        (_with(TRUTH, 4, query_relevance_label=5), RANKING, f"{GT}[4].query_relevance_label"),
        (_with(TRUTH, 4, query_relevance_label=-1), RANKING, f"{GT}[4].query_relevance_label"),
        (_with(TRUTH, 0, document_id=None), RANKING, f"{GT}[0].document_id"),
        (_with(TRUTH, 0, document_id=""), RANKING, f"{GT}[0].document_id"),
        (_with(TRUTH, 0, document_id=1.0), RANKING, f"{GT}[0].document_id"),
        (_with(TRUTH, 0, document_id=False), RANKING, f"{GT}[0].document_id"),
        (_with(TRUTH, 2, document_id=3), RANKING, f"{GT}[2].document_id"),
        (TRUTH, _with(RANKING, 3, relevance_score="25.4"), f"{RD}[3].relevance_score"),
        (TRUTH, _with(RANKING, 3, relevance_score=True), f"{RD}[3].relevance_score"),
        (TRUTH, _with(RANKING, 3, relevance_score=float("nan")), f"{RD}[3].relevance_score"),
        (TRUTH, _with(RANKING, 3, relevance_score=float("inf")), f"{RD}[3].relevance_score"),
        (TRUTH, _with(RANKING, 3, relevance_score=None), f"{RD}[3].relevance_score"),
        (TRUTH, _with(RANKING, 3, document_id=5), f"{RD}[3].document_id"),
        ([{"document_id": 1, "query_relevance_label": 1}], RANKING, f"{RD}[0].document_id"),
        ([{"document_id": f"d{i}", "query_relevance_label": 1} for i in range(10_001)], RANKING, GT),
        (TRUTH, [{"document_id": f"d{i}", "relevance_score": 1} for i in range(10_001)], RD),
    ],
)
def test_invalid_rows_are_refused_before_anything_runs(truth: Any, ranking: Any, field: str) -> None:
    evaluator = build()
    with pytest.raises(DatasetError) as info:
        evaluator.check_case(recorded({GT: truth, RD: ranking}))
    assert info.value.field == field


def test_ten_thousand_documents_and_integer_ids_are_fine() -> None:
    truth = [{"document_id": i, "query_relevance_label": i % 5} for i in range(10_000)]
    ranking = [{"document_id": i, "relevance_score": -i} for i in range(0, 20_000, 2)]
    result = score(truth, ranking)
    assert (result["total_ground_truth_documents"], result["total_retrieved_documents"]) == (10_000, 10_000)
    assert result["holes"] == 5_000


def test_a_mapped_input_is_checked_under_its_input_name() -> None:
    evaluator = build(data_mapping={GT: "{{item.labels}}", RD: "{{item.ranking}}"})
    bad = {"labels": _with(TRUTH, 3, query_relevance_label=1.5), "ranking": RANKING}
    with pytest.raises(DatasetError) as info:
        evaluator.check_case(recorded(bad))
    assert info.value.field == f"{GT}[3].query_relevance_label"
    assert metrics(run(evaluator, recorded({"labels": TRUTH, "ranking": RANKING}))) == score()


def test_a_row_without_the_mapped_field_is_excluded() -> None:
    evaluator = build(data_mapping={GT: "{{item.labels}}", RD: "{{item.ranking}}"})
    assert run(evaluator, recorded({"ranking": RANKING})) == Verdict.excluded(f"missing_field:{GT}")
    assert run(evaluator, recorded({"labels": TRUTH})) == Verdict.excluded(f"missing_field:{RD}")
    assert run(build(), recorded({GT: TRUTH})) == Verdict.excluded(f"missing_field:{RD}")


def test_a_malformed_system_output_is_an_error_of_the_case_not_of_the_run() -> None:
    evaluator = build(data_mapping={RD: "{{sample.output.ranking}}"})
    broken = {"ranking": _with(RANKING, 1, relevance_score="high")}
    case = staged(None, [{"doc_id": "2", "grade": 2.0}], output=broken)
    evaluator.check_case(staged(None, [{"doc_id": "2", "grade": 2.0}]))  # the output is not known yet
    verdict = run(evaluator, case)
    assert verdict.status == "error"
    assert verdict.reason.startswith(f"{RD}[1].relevance_score:")
    good = staged(None, [{"doc_id": "2", "grade": 2.0}], output={"ranking": RANKING})
    assert metrics(run(evaluator, good))["top1_relevance"] == 2


# -- departures from the library --------------------------------------------------


def test_fidelity_weighs_two_digit_labels_by_their_value() -> None:
    truth = [{"document_id": "a", "query_relevance_label": 10}, {"document_id": "b", "query_relevance_label": 2},
             {"document_id": "c", "query_relevance_label": 3}]  # fmt: skip
    ranking = [{"document_id": "b", "relevance_score": 1.0}]
    result = score(truth, ranking, ground_truth_label_max=10)
    assert result["fidelity"] == pytest.approx((2**3 - 1) / (2**11 - 1 + 2**3 - 1 + 2**4 - 1))


def test_a_document_listed_twice_counts_once() -> None:
    truth = [*TRUTH, {"document_id": "4", "query_relevance_label": 3}]  # "4" again, with a higher label
    ranking = [*RANKING, {"document_id": "6", "relevance_score": 50.0}, {"document_id": "4", "relevance_score": 1}]
    result = score(truth, ranking)
    # "6" (a hole) ranks first at its best score; "4" counts with label 3.
    assert result["holes"] == 2
    assert result["total_retrieved_documents"] == 6 and result["holes_ratio"] == pytest.approx(2 / 6)
    assert result["total_ground_truth_documents"] == 5
    assert result["top1_relevance"] == 0
    unique_truth = [item if item["document_id"] != "4" else {**item, "query_relevance_label": 3} for item in TRUTH]
    unique_ranking = [{"document_id": "6", "relevance_score": 50.0}, *(item for item in RANKING if item["document_id"] != "6"),
                      {"document_id": "4", "relevance_score": 1}]  # fmt: skip
    assert score(unique_truth, unique_ranking) == result


def test_ties_keep_input_order() -> None:
    truth = [{"document_id": "a", "query_relevance_label": 1}, {"document_id": "b", "query_relevance_label": 4}]
    tied = [{"document_id": "a", "relevance_score": 1}, {"document_id": "b", "relevance_score": 1.0}]
    assert score(truth, tied)["top1_relevance"] == 1
    assert score(truth, tied[::-1])["top1_relevance"] == 4
    # Integers beyond 2**53 are compared exactly, not as floats.
    big = [{"document_id": "a", "relevance_score": 2**53}, {"document_id": "b", "relevance_score": 2**53 + 1}]
    assert score(truth, big)["top1_relevance"] == 4


# -- a staged RAG run -------------------------------------------------------------


def test_a_staged_case_ranks_by_position_and_reads_the_grades() -> None:
    relevant = [{"doc_id": d["document_id"], "grade": float(d["query_relevance_label"])} for d in TRUTH]
    candidates = [passage(d["document_id"]) for d in RANKING]
    assert metrics(run(build(), staged(candidates, relevant))) == score()


def test_a_staged_case_counts_a_document_once_at_its_first_chunk() -> None:
    relevant = [{"doc_id": "a", "chunk_id": "1", "grade": 1.0}, {"doc_id": "a", "chunk_id": "2", "grade": 3.0},
                {"doc_id": "b", "grade": 2.0}]  # fmt: skip
    candidates = [passage("x"), passage("a", "2"), passage("b"), passage("a", "1")]
    result = metrics(run(build(), staged(candidates, relevant)))
    assert (result["total_retrieved_documents"], result["total_ground_truth_documents"]) == (3, 2)
    assert (result["top1_relevance"], result["top3_max_relevance"], result["holes"]) == (0, 3, 1)
    fields = build().read(staged(candidates, relevant))
    assert fields[RD] == [["x", 4], ["a", 3], ["b", 2], ["a", 1]]
    assert fields[GT] == [["a", 1], ["a", 3], ["b", 2]]


@pytest.mark.parametrize(
    ("grade", "message"), [(1.5, "whole numbers"), (float("inf"), "whole numbers"), (5.0, "outside")]
)
def test_a_staged_case_needs_whole_grades_in_the_range(grade: float, message: str) -> None:
    with pytest.raises(DatasetError) as info:
        build().check_case(staged(None, [{"doc_id": "a", "grade": 1.0}, {"doc_id": "b", "grade": grade}]))
    assert info.value.field == "expected.relevant[1].grade"
    assert message in info.value.message


def test_a_staged_case_without_labels_or_retrieval_is_excluded() -> None:
    assert run(build(), staged([passage("a")], None)) == Verdict.excluded("no_relevance_labels")
    assert run(build(), staged([passage("a")], [])) == Verdict.excluded("no_relevance_labels")
    assert run(build(), staged(None, [{"doc_id": "a", "grade": 1.0}])) == Verdict.excluded("no_retrieval")


def test_mapped_ground_truth_with_a_staged_ranking() -> None:
    evaluator = build(data_mapping={GT: "{{item.expected.labels}}"})
    case = staged([passage(d["document_id"]) for d in RANKING], None)
    item = {**case.item, "expected": {"labels": TRUTH}}
    view = CaseView(case_id="c1", input="q", expected={"labels": TRUTH}, metadata={}, output=None,
                    candidates=case.candidates, item=item)  # fmt: skip
    assert metrics(run(evaluator, view)) == score()


def test_one_judgment_row_per_metric() -> None:
    from dataclasses import asdict
    from types import SimpleNamespace

    from oloproof.records import JudgeRecord
    from oloproof.tasks._judge import _judged_rows

    evaluator = build(thresholds={"fidelity": 0.3})
    verdict = run(evaluator, recorded({GT: TRUTH, RD: RANKING}))
    record = JudgeRecord.model_validate(asdict(verdict))
    rows = _judged_rows(SimpleNamespace(run_id="r1"), evaluator, "c1", record, key="k", hit=False)
    by_metric = {row.criterion.removeprefix("document_retrieval."): row for row in rows}
    assert list(by_metric) == list(METRICS)
    assert (by_metric["fidelity"].threshold, by_metric["fidelity"].passed) == (0.3, True)
    assert (by_metric["holes"].score, by_metric["holes"].passed, by_metric["holes"].label) == (2.0, False, "fail")
    assert by_metric["ndcg@3"].score == pytest.approx(score()["ndcg@3"])


# -- many cases at once -----------------------------------------------------------


def test_judging_many_cases_at_once_gives_each_its_own_verdict() -> None:
    evaluator = build(ground_truth_label_min=1, data_mapping={RD: "{{sample.output.ranking}}"})
    truth = [{"doc_id": doc, "grade": float(grade)} for doc, grade in (("1", 4), ("2", 2), ("3", 3), ("4", 1))]
    low_only = [{"doc_id": "4", "grade": 1.0}]
    cases = [
        (truth, {"ranking": RANKING}),
        (truth, {"ranking": []}),  # empty: all zero
        (truth, {"ranking": _with(RANKING, 0, relevance_score="high")}),  # invalid: the case's error
        (low_only, {"ranking": [{"document_id": "4", "relevance_score": 1}]}),  # nothing above the minimum
        (truth, {"ranking": [{"document_id": f"x{i}", "relevance_score": i} for i in range(12)]}),  # holes only
    ]
    fields = [evaluator.read(staged(None, labels, output=output)) for labels, output in cases]
    assert not any(isinstance(one, Verdict) for one in fields)
    together = evaluator.judge_many(fields, JudgeContext())  # type: ignore[arg-type]
    alone = [evaluator.judge(one, JudgeContext()) for one in fields]  # type: ignore[arg-type]
    assert [v.status for v in together] == ["observed", "observed", "error", "observed", "observed"]
    for many, one in zip(together, alone, strict=True):
        assert (many.status, many.reason, many.detail) == (one.status, one.reason, one.detail)
        if one.status == "observed":
            assert many.scores == pytest.approx(one.scores, nan_ok=True)
            assert many.score == pytest.approx(one.score)
    assert math.isnan(metrics(together[3])["fidelity"])
    assert len(together[4].detail["unlabelled"]) == 10
