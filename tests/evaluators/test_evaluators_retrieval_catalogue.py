"""The rest of the retrieval catalogue: precision, map, r_precision, relevance levels,
exponential nDCG, stable identities, and judging many cases at once."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof._exceptions import EvaluatorConfigError
from oloproof._json import content_hash
from oloproof.evaluators import (
    CaseView,
    JudgeContext,
    Map,
    Precision,
    RPrecision,
    Verdict,
    build_evaluators,
    registered_evaluators,
)
from oloproof.tasks._judge import _Batched

RANK_TYPES = ("hit_rate", "recall", "precision", "mrr", "map", "r_precision", "ndcg")
BINARY_TYPES = ("hit_rate", "recall", "precision", "mrr", "map", "r_precision")


def passage(doc_id: str, chunk_id: str | None = None) -> dict:
    return {"doc_id": doc_id, "chunk_id": chunk_id, "score": None, "text": doc_id}


def view(candidates, relevant=None) -> CaseView:
    expected = {} if relevant is None else {"relevant": relevant}
    return CaseView(case_id="c1", input="q", expected=expected, metadata={}, output={"answer": "x"},
                    context=[], candidates=candidates)  # fmt: skip


def build(entry: dict):
    (evaluator,) = build_evaluators([entry], rag=True)
    return evaluator


def entry(kind: str, **options) -> dict:
    return {"type": kind, **({} if kind == "r_precision" else {"k": 4}), **options}


def score(entry: dict, case: CaseView) -> float:
    evaluator = build(entry)
    fields = evaluator.read(case)
    assert not isinstance(fields, Verdict), fields
    result = evaluator.judge(fields, JudgeContext())
    assert result.status == "observed"
    return result.score


# d3 (0), d1 (1), d4 (unjudged), d2 (3), d5 (2); d9 (2) is never retrieved.
RANKING = [passage("d3"), passage("d1"), passage("d4"), passage("d2"), passage("d5")]
LABELS = [{"doc_id": "d3", "grade": 0}, {"doc_id": "d1", "grade": 1}, {"doc_id": "d2", "grade": 3},
          {"doc_id": "d5", "grade": 2}, {"doc_id": "d9", "grade": 2}]  # fmt: skip


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"type": "precision", "k": 2}, 1 / 2),
        ({"type": "precision", "k": 5}, 3 / 5),
        ({"type": "precision", "k": 8}, 3 / 8),
        ({"type": "map", "k": 2}, (1 / 2) / 4),
        ({"type": "map", "k": 5}, (1 / 2 + 2 / 4 + 3 / 5) / 4),
        ({"type": "r_precision"}, 2 / 4),
        # relevance_level 2: d2, d5, d9 are relevant (R = 3), d1 is not.
        ({"type": "hit_rate", "k": 2, "relevance_level": 2}, 0.0),
        ({"type": "hit_rate", "k": 4, "relevance_level": 2}, 1.0),
        ({"type": "recall", "k": 5, "relevance_level": 2}, 2 / 3),
        ({"type": "precision", "k": 5, "relevance_level": 2}, 2 / 5),
        ({"type": "mrr", "k": 5, "relevance_level": 2}, 1 / 4),
        ({"type": "map", "k": 5, "relevance_level": 2}, (1 / 4 + 2 / 5) / 3),
        ({"type": "r_precision", "relevance_level": 2}, 0.0),
        ({"type": "r_precision", "relevance_level": 3}, 0.0),
        ({"type": "mrr", "k": 5, "relevance_level": 3}, 1 / 4),
    ],
)
def test_hand_computed_values(entry, expected) -> None:
    assert score(entry, view(RANKING, LABELS)) == pytest.approx(expected, abs=1e-12)


def test_exponential_ndcg() -> None:
    dcg = 1 / math.log2(3) + 7 / math.log2(5) + 3 / math.log2(6)
    idcg = 7 + 3 / math.log2(3) + 3 / 2 + 1 / math.log2(5)
    assert score({"type": "ndcg", "k": 5, "gain": "exponential"}, view(RANKING, LABELS)) == pytest.approx(dcg / idcg)
    linear = (1 / math.log2(3) + 3 / math.log2(5) + 2 / math.log2(6)) / (3 + 2 / math.log2(3) + 2 / 2 + 1 / math.log2(5))
    assert score({"type": "ndcg", "k": 5}, view(RANKING, LABELS)) == pytest.approx(linear)
    assert score({"type": "ndcg", "k": 5, "gain": "linear"}, view(RANKING, LABELS)) == pytest.approx(linear)


def test_types_criteria_and_kinds() -> None:
    registry = registered_evaluators()
    assert (registry["precision"], registry["map"], registry["r_precision"]) == (Precision, Map, RPrecision)
    assert [build(entry(t)).criterion for t in RANK_TYPES] == [
        "hit_rate_at_4", "recall_at_4", "precision_at_4", "mrr_at_4", "map_at_4", "r_precision", "ndcg_at_4",
    ]  # fmt: skip
    assert all(build(entry(t)).kind == "mean" for t in RANK_TYPES)
    assert build({"type": "map", "k": 3, "criterion": "ap"}).criterion == "ap"


def test_r_precision_reads_the_top_r_candidates() -> None:
    evaluator = build({"type": "r_precision"})
    fields = evaluator.read(view(RANKING, LABELS))
    assert fields["retrieved"] == ["d3", "d1", "d4", "d2"]  # R = 4
    assert evaluator.read(view(RANKING[:4] + [passage("d7")], LABELS)) == fields
    at_level = build({"type": "r_precision", "relevance_level": 3}).read(view(RANKING, LABELS))
    assert at_level["retrieved"] == ["d3"]  # R = 1


def test_a_case_with_no_unit_at_the_level_is_excluded() -> None:
    labels = [{"doc_id": "d1", "grade": 1}, {"doc_id": "d2", "grade": 2}]
    for kind in BINARY_TYPES:
        assert build(entry(kind, relevance_level=3)).read(view(RANKING, labels)) == Verdict.excluded(
            "no_relevant_units"
        )
        assert build(entry(kind, relevance_level=2)).read(view(RANKING, labels)) != Verdict.excluded(
            "no_relevant_units"
        )
        assert build(entry(kind)).read(view(RANKING, None)) == Verdict.excluded("no_relevance_labels")


def test_fractional_grades_are_relevant_unless_a_level_says_otherwise() -> None:
    labels = [{"doc_id": "d1", "grade": 0.5}, {"doc_id": "d2", "grade": 1}]
    assert score({"type": "recall", "k": 2}, view(RANKING, labels)) == 0.5
    assert score({"type": "recall", "k": 2, "relevance_level": 1}, view(RANKING, labels)) == 0.0
    assert score({"type": "recall", "k": 2, "relevance_level": 0.5}, view(RANKING, labels)) == 0.5


@pytest.mark.parametrize(
    ("bad", "field", "message"),
    [
        ({"type": "ndcg", "k": 3, "relevance_level": 2}, "evaluators.0.relevance_level", "unknown option for ndcg"),
        ({"type": "recall", "k": 3, "gain": "exponential"}, "evaluators.0.gain", "unknown option for recall"),
        ({"type": "r_precision", "k": 3}, "evaluators.0.k", "unknown option for r_precision"),
        ({"type": "map"}, "evaluators.0.k", "required option of map is missing"),
        ({"type": "precision", "k": 3, "relevance_level": 0}, "evaluators.0.relevance_level", None),
        ({"type": "precision", "k": 3, "relevance_level": True}, "evaluators.0.relevance_level", None),
        ({"type": "ndcg", "k": 3, "gain": "cubic"}, "evaluators.0.gain", None),
    ],
)
def test_bad_options(bad, field, message) -> None:
    with pytest.raises(EvaluatorConfigError) as raised:
        build_evaluators([bad], rag=True)
    assert raised.value.field == field
    if message is not None:
        assert raised.value.message == message


# identity ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["hit_rate", "recall", "mrr", "ndcg"])
@pytest.mark.parametrize("extra", [{}, {"relevance_unit": "chunk"}, {"criterion": "x"}])
def test_existing_evaluators_keep_their_spec_and_identity_at_default_options(kind, extra) -> None:
    """The spec is the one from before the new options existed: cached judgments stay valid."""
    config = {"type": kind, "k": 3, **extra}
    evaluator = build(config)
    options = {"type": kind, "criterion": None, "k": 3, "relevance_unit": "document", **extra}
    before = {"type": kind, "version": "1", "options": options}
    assert evaluator.spec() == before
    assert evaluator.identity() == before
    assert evaluator.spec_hash == content_hash(before)
    # Writing the default out changes nothing either.
    default = {"gain": "linear"} if kind == "ndcg" else {"relevance_level": None}
    assert build({**config, **default}).spec_hash == evaluator.spec_hash


@pytest.mark.parametrize(
    ("config", "changed"),
    [
        ({"type": "recall", "k": 3, "relevance_level": 2}, {"relevance_level": 2.0}),
        ({"type": "recall", "k": 3, "relevance_level": 1}, {"relevance_level": 1.0}),
        ({"type": "ndcg", "k": 3, "gain": "exponential"}, {"gain": "exponential"}),
    ],
)
def test_a_set_option_is_part_of_the_identity(config, changed) -> None:
    evaluator = build(config)
    assert evaluator.identity()["options"].items() >= changed.items()
    assert evaluator.spec_hash != build({"type": config["type"], "k": 3}).spec_hash


# many at once -------------------------------------------------------------------------


def _random_cases(seed: int, n: int) -> list[CaseView]:
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        docs = [f"d{i}" for i in rng.choice(30, size=int(rng.integers(0, 15)), replace=True)]
        candidates = [passage(d, f"c{int(rng.integers(0, 3))}") for d in docs]
        labels = [{"doc_id": f"d{d}", "chunk_id": f"c{int(rng.integers(0, 3))}", "grade": float(rng.choice([0, 0.5, 1, 2, 3]))}
                  for d in rng.choice(30, size=int(rng.integers(1, 10)), replace=False)]  # fmt: skip
        cases.append(view(candidates, labels))
    return cases


@pytest.mark.parametrize(
    "config",
    [
        *[entry(kind) for kind in RANK_TYPES],
        *[entry(kind, relevance_level=2) for kind in BINARY_TYPES],
        *[entry(kind, relevance_unit="chunk") for kind in RANK_TYPES],
        {"type": "ndcg", "k": 7, "gain": "exponential"},
        {"type": "map", "k": 1},
    ],
)
def test_judge_many_equals_judge_case_by_case(config) -> None:
    evaluator = build(config)
    fields = [f for f in (evaluator.read(c) for c in _random_cases(11, 300)) if not isinstance(f, Verdict)]
    assert len(fields) > 100
    one_by_one = [evaluator.judge(f, JudgeContext()) for f in fields]
    assert evaluator.judge_many(fields, JudgeContext()) == one_by_one
    assert evaluator.judge_many([], JudgeContext()) == []


def test_the_judge_stage_judges_a_group_in_one_call_from_the_first_case_asked() -> None:
    evaluator = build({"type": "recall", "k": 4})
    fields = [f for f in (evaluator.read(c) for c in _random_cases(5, 40)) if not isinstance(f, Verdict)]
    calls = []
    judge_many = evaluator.judge_many

    def counting(batch, ctx):
        calls.append(len(batch))
        return judge_many(batch, ctx)

    evaluator.judge_many = counting  # type: ignore[method-assign]
    group = _Batched(evaluator, JudgeContext())
    indices = [group.add(f) for f in fields]
    # The first cases were cache hits: judging starts at case 3, with every case after it.
    assert [group.judge(i) for i in indices[3:]] == [evaluator.judge(f, JudgeContext()) for f in fields[3:]]
    assert calls == [len(fields) - 3]
    # A case asked out of order is judged then, with the unjudged cases after it.
    assert group.judge(indices[1]) == evaluator.judge(fields[1], JudgeContext())
    assert group.judge(indices[2]) == evaluator.judge(fields[2], JudgeContext())
    assert calls == [len(fields) - 3, 2]


def test_the_judge_stage_keeps_a_failing_case_its_own() -> None:
    evaluator = build({"type": "precision", "k": 2})
    good = evaluator.read(view(RANKING, LABELS))
    broken = {"retrieved": "d1", "grades": {"d1": 1.0}}  # a string, not a ranking
    group = _Batched(evaluator, JudgeContext())
    indices = [group.add(good), group.add(broken), group.add(good)]
    assert group.judge(indices[0]) == evaluator.judge(good, JudgeContext())
    with pytest.raises(Exception) as raised:
        group.judge(indices[1])
    with pytest.raises(type(raised.value)):
        evaluator.judge(broken, JudgeContext())
    assert group.judge(indices[2]) == Verdict(score=0.5)
