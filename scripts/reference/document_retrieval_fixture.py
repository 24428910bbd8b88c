"""Record the reference ``document_retrieval`` over seeded cases as a JSON fixture.

Runs ``DocumentRetrievalEvaluator`` of ``azure-ai-evaluation`` 1.18.x over a few
hundred generated cases and writes, for each, its inputs, its parameters and what
the library returned (or that it raised) to
``tests/metrics/fixtures/document_retrieval_reference.json``. The test suite reads
that file; it never needs the library.

The reference is installed in a virtual environment of its own, never in the
project's::

    python3 -m venv /tmp/azref
    /tmp/azref/bin/pip install 'azure-ai-evaluation>=1.18,<1.19'
    /tmp/azref/bin/python scripts/reference/document_retrieval_fixture.py

Cases come in groups:

* ``valid``: input the library accepts and scores correctly; Oloproof must agree
  on every metric and every pass/fail.
* ``invalid``: input the library rejects; Oloproof must reject it too, with the
  error and field recorded under ``oloproof``.
* ``stricter``: input the library scores although it is malformed (boolean
  labels, NaN scores, a ranking that is not a list ...); Oloproof rejects it.
* ``fidelity_label_strings``: label ranges reaching 10, where the library orders
  its label counts as strings and so misweighs fidelity; every other metric agrees.
* ``duplicates``: a document listed twice; Oloproof keeps each document once (its
  best rank, its highest label), so it agrees with the library run on the
  deduplicated lists, recorded under ``deduplicated``.
* ``negative_range``: ``ground_truth_label_min < 0``, which Oloproof refuses (the
  library scores them, or divides by zero).

Encoding: a float that JSON cannot write is ``{"$float": "nan"}`` (or ``"inf"``,
``"-inf"``); a long list is ``{"$sequence": {"count": n, "id_prefix": "d",
"value": v}}``, meaning ``n`` items with ids ``d0 .. d{n-1}`` and the label (ground
truth) or score (retrieved) ``v``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import math
import platform
import random
import string
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

SEED = 20250611
FIXTURE = Path(__file__).resolve().parents[2] / "tests/metrics/fixtures/document_retrieval_reference.json"
METRICS = (
    "ndcg@3", "xdcg@3", "fidelity", "top1_relevance", "top3_max_relevance", "holes",
    "holes_ratio", "total_retrieved_documents", "total_ground_truth_documents",
)  # fmt: skip
THRESHOLD_ARGUMENTS = {
    "ndcg@3": "ndcg_threshold",
    "xdcg@3": "xdcg_threshold",
    "fidelity": "fidelity_threshold",
    "top1_relevance": "top1_relevance_threshold",
    "top3_max_relevance": "top3_max_relevance_threshold",
    "total_retrieved_documents": "total_retrieved_documents_threshold",
    "total_ground_truth_documents": "total_ground_truth_documents_threshold",
}
GT, RD = "retrieval_ground_truth", "retrieved_documents"
LABEL, SCORE = "query_relevance_label", "relevance_score"
ABSENT = object()


# -- encoding ---------------------------------------------------------------------


def encode(value: Any) -> Any:
    """``value`` with non-finite floats tagged, so the fixture is plain JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": str(value)}
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [encode(item) for item in value]
    return value


def expand(value: Any, field: str) -> Any:
    """The list a ``$sequence`` stands for (``field``: the label or score key)."""
    if isinstance(value, dict) and "$sequence" in value:
        spec = value["$sequence"]
        return [{"document_id": f"{spec['id_prefix']}{i}", field: spec["value"]} for i in range(spec["count"])]
    return value


# -- the reference ----------------------------------------------------------------


def run_reference(case: dict[str, Any]) -> dict[str, Any]:
    """What the library does with ``case``: its metrics and verdicts, or what it raised."""
    from azure.ai.evaluation import DocumentRetrievalEvaluator

    parameters = dict(case["parameters"])
    thresholds = parameters.pop("thresholds", {})
    kwargs = {THRESHOLD_ARGUMENTS[name]: value for name, value in thresholds.items()}
    inputs = {}
    for name, field in ((GT, LABEL), (RD, SCORE)):
        if name in case:
            inputs[name] = expand(case[name], field)
    # The library logs (and prints) what it raises; the fixture records it instead.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            evaluator = DocumentRetrievalEvaluator(**parameters, **kwargs)
            result = evaluator(**inputs)
        except Exception as error:  # noqa: BLE001 - any failure is the observation
            return {"raised": type(error).__name__, "message": str(error).splitlines()[0][:300]}
    properties = result["document_retrieval_properties"]
    return {
        "metrics": {name: properties[name] for name in METRICS},
        "passed": [name for name in METRICS if properties[f"{name}_passed"]],
        "score": result["document_retrieval"],
    }


# -- generation -------------------------------------------------------------------


class Cases:
    """The generated cases, in order."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, group: str, note: str, gt: Any, rd: Any, *, low: Any = 0, high: Any = 4,
            thresholds: dict[str, float] | None = None, oloproof: dict[str, Any] | None = None,
            deduplicated: tuple[Any, Any] | None = None) -> None:  # fmt: skip
        parameters: dict[str, Any] = {"ground_truth_label_min": low, "ground_truth_label_max": high}
        if thresholds:
            parameters["thresholds"] = thresholds
        case: dict[str, Any] = {"id": "", "group": group, "note": note, "parameters": parameters}
        if gt is not ABSENT:
            case[GT] = gt
        if rd is not ABSENT:
            case[RD] = rd
        if oloproof is not None:
            case["oloproof"] = oloproof
        if deduplicated is not None:
            case["deduplicated"] = {GT: deduplicated[0], RD: deduplicated[1]}
        self.items.append(case)


def _ids(rng: random.Random, n: int, style: str) -> list[Any]:
    if style == "int":
        return rng.sample(range(1, 10 * n + 10), n)
    if style == "random":
        seen: dict[str, None] = {}  # insertion-ordered, so the fixture does not depend on string hashing
        while len(seen) < n:
            seen["".join(rng.choices(string.ascii_letters + string.digits + "-_./ é", k=rng.randint(1, 12)))] = None
        return list(seen)
    return [f"doc-{i}" for i in range(n)]


def _scores(rng: random.Random, n: int, style: str) -> list[Any]:
    if style == "ties":
        pool = [round(rng.uniform(0, 10), 1) for _ in range(rng.randint(1, 3))]
        return [rng.choice(pool) for _ in range(n)]
    if style == "int":
        return [rng.randint(-5, 5) for _ in range(n)]
    if style == "mixed":
        return [rng.randint(0, 3) if rng.random() < 0.5 else float(rng.randint(0, 3)) for _ in range(n)]
    if style == "negative":
        return [round(rng.uniform(-100, 0), 4) for _ in range(n)]
    if style == "equal":
        return [1.0] * n
    if style == "wide":
        return [rng.choice([1e-300, 1e300, -1e300, 0.0, -0.0, 5e-324]) for _ in range(n)]
    return [round(rng.uniform(0, 100), rng.choice([2, 4, 12])) for _ in range(n)]


def random_case(rng: random.Random, low: int, high: int, *, n_truth: int, n_found: int, n_holes: int,
                score_style: str, id_style: str, low_share: float = 0.0) -> tuple[list, list]:  # fmt: skip
    """A ground truth of ``n_truth`` documents and a ranking of ``n_found`` of them plus holes."""
    ids = _ids(rng, n_truth + n_holes, id_style)
    truth_ids, hole_ids = ids[:n_truth], ids[n_truth:]
    labels = [low if rng.random() < low_share else rng.randint(low, high) for _ in truth_ids]
    gt = [{"document_id": doc, LABEL: label} for doc, label in zip(truth_ids, labels, strict=True)]
    chosen = rng.sample(truth_ids, n_found) + hole_ids
    rng.shuffle(chosen)
    scores = _scores(rng, len(chosen), score_style)
    rd = [{"document_id": doc, SCORE: score} for doc, score in zip(chosen, scores, strict=True)]
    return gt, rd


VALID_RANGES = [(0, 4)] * 6 + [(1, 5)] * 3 + [(0, 1), (0, 2), (1, 3), (2, 9), (0, 9), (3, 4), (5, 9), (1, 2)]
SCORE_STYLES = ["distinct", "distinct", "ties", "ties", "int", "mixed", "negative", "equal", "wide"]
ID_STYLES = ["str", "str", "int", "random"]


def valid_cases(rng: random.Random, cases: Cases, count: int) -> None:
    for _ in range(count):
        low, high = rng.choice(VALID_RANGES)
        n_truth = rng.choice([1, 2, 3, 4, 5, 8, 12, 20, 30]) if rng.random() < 0.97 else rng.randint(100, 200)
        n_found = rng.randint(0, n_truth)
        n_holes = rng.choice([0, 0, 1, 2, 3, 5, 10])
        score_style, id_style = rng.choice(SCORE_STYLES), rng.choice(ID_STYLES)
        gt, rd = random_case(rng, low, high, n_truth=n_truth, n_found=n_found, n_holes=n_holes,
                             score_style=score_style, id_style=id_style,
                             low_share=rng.choice([0.0, 0.0, 0.5, 0.9]))  # fmt: skip
        thresholds = None
        if rng.random() < 0.1:
            names = rng.sample(sorted(THRESHOLD_ARGUMENTS), rng.randint(1, 3))
            thresholds = {name: round(rng.uniform(0, 1 if name in ("ndcg@3", "fidelity") else 60), 3) for name in names}
        note = f"{n_truth} judged, {n_found} found, {n_holes} holes, {score_style} scores, {id_style} ids"
        cases.add("valid", note, gt, rd, low=low, high=high, thresholds=thresholds)

    gt4 = [{"document_id": "1", LABEL: 4}, {"document_id": "2", LABEL: 2}, {"document_id": "3", LABEL: 3},
           {"document_id": "4", LABEL: 1}, {"document_id": "5", LABEL: 0}]  # fmt: skip
    sample_rd = [{"document_id": d, SCORE: s} for d, s in
                 (("2", 45.1), ("6", 35.8), ("3", 29.2), ("5", 25.4), ("7", 18.8))]  # fmt: skip
    cases.add("valid", "the library's own sample", gt4, sample_rd)
    spec_gt = [{"document_id": "1", LABEL: 4}, {"document_id": "2", LABEL: 2}]
    spec_rd = [{"document_id": "2", SCORE: 45.1}, {"document_id": "6", SCORE: 35.8}]
    cases.add("valid", "the spec's example, labels 1-5", spec_gt, spec_rd, low=1, high=5)
    cases.add("valid", "the spec's example, default labels", spec_gt, spec_rd)
    cases.add("valid", "an empty ranking", gt4, [])
    cases.add("valid", "an empty ranking, labels 1-5", spec_gt, [], low=1, high=5)
    cases.add("valid", "only holes", gt4, [{"document_id": "x", SCORE: 1.0}, {"document_id": "y", SCORE: 2}])
    cases.add("valid", "only labels at the minimum", gt4, [{"document_id": "5", SCORE: 1.0}])
    cases.add("valid", "only labels at the minimum 1", [{"document_id": "a", LABEL: 1}, {"document_id": "b", LABEL: 1}],
              [{"document_id": "a", SCORE: 1.0}, {"document_id": "z", SCORE: 0.5}], low=1, high=5)  # fmt: skip
    cases.add("valid", "no label above the minimum 1: fidelity is NaN",
              [{"document_id": "a", LABEL: 1}], [{"document_id": "a", SCORE: 0.0}], low=1, high=5)  # fmt: skip
    cases.add("valid", "every score tied", gt4, [{"document_id": d, SCORE: 0} for d in "54321"])
    cases.add("valid", "a hole first, then the best", gt4,
              [{"document_id": "h", SCORE: 9.0}, {"document_id": "1", SCORE: 8.0}])  # fmt: skip
    cases.add("valid", "extra keys are ignored", [{"document_id": "a", LABEL: 2, "note": "x"}],
              [{"document_id": "a", SCORE: 1.0, "text": "..."}])  # fmt: skip
    cases.add("valid", "integer ids", [{"document_id": 1, LABEL: 3}, {"document_id": 2, LABEL: 1}],
              [{"document_id": 2, SCORE: 0.9}, {"document_id": 7, SCORE: 0.8}])  # fmt: skip
    cases.add("valid", "labels at the maximum everywhere", [{"document_id": str(i), LABEL: 4} for i in range(6)],
              [{"document_id": str(i), SCORE: -i} for i in range(6)])  # fmt: skip
    cases.add("valid", "the most items each list may hold",
              {"$sequence": {"count": 10_000, "id_prefix": "d", "value": 2}},
              {"$sequence": {"count": 10_000, "id_prefix": "d", "value": 0.5}})  # fmt: skip
    cases.add("valid", "the most ground truth, a few found",
              {"$sequence": {"count": 10_000, "id_prefix": "d", "value": 1}},
              [{"document_id": "d9999", SCORE: 2.0}, {"document_id": "e", SCORE: 1.0}], low=0, high=1)  # fmt: skip


def invalid_cases(rng: random.Random, cases: Cases) -> None:
    def truth(n: int = 4, low: int = 0, high: int = 4) -> list[dict[str, Any]]:
        return [{"document_id": f"g{i}", LABEL: rng.randint(low, high)} for i in range(n)]

    def ranking(n: int = 4) -> list[dict[str, Any]]:
        return [{"document_id": f"g{i}", SCORE: rng.uniform(0, 1)} for i in rng.sample(range(n + 2), n)]

    def dataset(field: str) -> dict[str, Any]:
        return {"error": "DatasetError", "field": field}

    def broken(items: list[dict[str, Any]], index: int, change: dict[str, Any], remove: str | None = None) -> list:
        item = {**items[index], **change}
        if remove:
            del item[remove]
        return [*items[:index], item, *items[index + 1:]]

    cases.add("invalid", "an empty ground truth", [], ranking(), oloproof=dataset(GT))
    cases.add("invalid", "an empty ground truth and ranking", [], [], oloproof=dataset(GT))
    cases.add("invalid", "a null ground truth", None, ranking(), oloproof=dataset(GT))
    cases.add("invalid", "a null ranking", truth(), None, oloproof=dataset(RD))
    cases.add("invalid", "a ground truth that is a string", "g0", ranking(), oloproof=dataset(GT))
    cases.add("invalid", "a ground truth that is an object", {"g0": 1}, ranking(), oloproof=dataset(GT))
    cases.add("invalid", "no ranking at all", truth(), ABSENT, oloproof={"excluded": f"missing_field:{RD}"})
    cases.add("invalid", "no ground truth at all", ABSENT, ranking(), oloproof={"excluded": f"missing_field:{GT}"})
    for index in (0, 2, 3):
        gt = truth()
        cases.add("invalid", "a ground-truth item without document_id", broken(gt, index, {}, "document_id"),
                  ranking(), oloproof=dataset(f"{GT}[{index}].document_id"))  # fmt: skip
        cases.add("invalid", "a null ground-truth document_id", broken(gt, index, {"document_id": None}),
                  ranking(), oloproof=dataset(f"{GT}[{index}].document_id"))  # fmt: skip
        cases.add("invalid", "a ground-truth item without a label", broken(gt, index, {}, LABEL),
                  ranking(), oloproof=dataset(f"{GT}[{index}].{LABEL}"))  # fmt: skip
        for bad in (None, "2", 2.0, 2.5, [2], float("nan")):
            cases.add("invalid", f"a ground-truth label {bad!r}", broken(gt, index, {LABEL: bad}),
                      ranking(), oloproof=dataset(f"{GT}[{index}].{LABEL}"))  # fmt: skip
        for low, high, bad in ((0, 4, -1), (0, 4, 5), (1, 5, 0), (1, 5, 6), (2, 3, 1), (0, 1, 2)):
            cases.add("invalid", f"label {bad} outside [{low}, {high}]",
                      broken(truth(4, low, high), index, {LABEL: bad}), ranking(), low=low, high=high,
                      oloproof=dataset(f"{GT}[{index}].{LABEL}"))  # fmt: skip
        rd = ranking()
        cases.add("invalid", "a retrieved item without document_id", truth(), broken(rd, index, {}, "document_id"),
                  oloproof=dataset(f"{RD}[{index}].document_id"))  # fmt: skip
        cases.add("invalid", "a null retrieved document_id", truth(), broken(rd, index, {"document_id": None}),
                  oloproof=dataset(f"{RD}[{index}].document_id"))  # fmt: skip
        cases.add("invalid", "a retrieved item without a score", truth(), broken(rd, index, {}, SCORE),
                  oloproof=dataset(f"{RD}[{index}].{SCORE}"))  # fmt: skip
        for bad in (None, "0.5", [0.5], {"value": 1}):
            cases.add("invalid", f"a retrieved score {bad!r}", truth(), broken(rd, index, {SCORE: bad}),
                      oloproof=dataset(f"{RD}[{index}].{SCORE}"))  # fmt: skip
        for bad in ("g1", 3, ["g1"]):
            gt = truth()
            cases.add("invalid", f"a ground-truth item {bad!r}", [*gt[:index], bad, *gt[index + 1:]], ranking(),
                      oloproof=dataset(f"{GT}[{index}]"))  # fmt: skip
        for bad in ("g1", None, 1.5):
            rd = ranking()
            cases.add("invalid", f"a retrieved item {bad!r}", truth(), [*rd[:index], bad, *rd[index + 1:]],
                      oloproof=dataset(f"{RD}[{index}]"))  # fmt: skip
    cases.add("invalid", "an unhashable ground-truth id", broken(truth(), 1, {"document_id": ["g1"]}), ranking(),
              oloproof=dataset(f"{GT}[1].document_id"))  # fmt: skip
    cases.add("invalid", "one ground-truth item too many",
              {"$sequence": {"count": 10_001, "id_prefix": "d", "value": 1}}, ranking(), oloproof=dataset(GT))  # fmt: skip
    cases.add("invalid", "one retrieved item too many", truth(),
              {"$sequence": {"count": 10_001, "id_prefix": "d", "value": 1.0}}, oloproof=dataset(RD))  # fmt: skip
    for low, high, field in ((4, 4, "ground_truth_label_max"), (3, 1, "ground_truth_label_max"),
                             (0.5, 4, "ground_truth_label_min"), (0, "4", "ground_truth_label_max"),
                             (None, 4, "ground_truth_label_min"), (0, 4.0, "ground_truth_label_max")):  # fmt: skip
        cases.add("invalid", f"the label range [{low!r}, {high!r}]", truth(2, 0, 0), ranking(2), low=low, high=high,
                  oloproof={"error": "ConfigError", "field": field})  # fmt: skip


def stricter_cases(rng: random.Random, cases: Cases) -> None:
    gt = [{"document_id": f"g{i}", LABEL: label} for i, label in enumerate((3, 1, 0, 2))]
    rd = [{"document_id": f"g{i}", SCORE: score} for i, score in ((1, 0.9), (0, 0.5), (5, 0.3), (3, 0.1))]

    def dataset(field: str) -> dict[str, Any]:
        return {"error": "DatasetError", "field": field}

    for index in (0, 3):
        for bad in (True, False):
            changed = [dict(item) for item in gt]
            changed[index][LABEL] = bad
            cases.add("stricter", f"a boolean label {bad}", changed, rd, oloproof=dataset(f"{GT}[{index}].{LABEL}"))
        for bad in (True, False, float("nan"), float("inf"), float("-inf")):
            changed = [dict(item) for item in rd]
            changed[index][SCORE] = bad
            cases.add("stricter", f"a retrieved score {bad!r}", gt, changed,
                      oloproof=dataset(f"{RD}[{index}].{SCORE}"))  # fmt: skip
        for bad in (1.5, "", True, ("g", 1)):
            changed = [dict(item) for item in rd]
            changed[index]["document_id"] = list(bad) if isinstance(bad, tuple) else bad
            cases.add("stricter", f"a retrieved document_id {bad!r}", gt, changed,
                      oloproof=dataset(f"{RD}[{index}].document_id"))  # fmt: skip
            changed = [dict(item) for item in gt]
            if not isinstance(bad, tuple):  # a list id in the ground truth is unhashable there: invalid
                changed[index]["document_id"] = bad
                cases.add("stricter", f"a ground-truth document_id {bad!r}", changed, rd,
                          oloproof=dataset(f"{GT}[{index}].document_id"))  # fmt: skip
    int_gt = [{"document_id": i, LABEL: label} for i, label in enumerate((3, 1, 0, 2))]
    cases.add("stricter", "integer ids in the ground truth, strings in the ranking", int_gt, rd,
              oloproof=dataset(f"{RD}[0].document_id"))  # fmt: skip
    mixed = [dict(item) for item in gt]
    mixed[2]["document_id"] = 2
    cases.add("stricter", "a ground truth mixing string and integer ids", mixed, rd,
              oloproof=dataset(f"{GT}[2].document_id"))  # fmt: skip
    for bad in ("g0", {"document_id": "g0", SCORE: 1.0}, 3):
        cases.add("stricter", f"a ranking that is not a list: {bad!r}", gt, bad, oloproof=dataset(RD))
    cases.add("stricter", "a ranking with a null item after valid ones", gt, [*rd, None][:2] + [None],
              oloproof=dataset(f"{RD}[2]"))  # fmt: skip
    for low, high, field in ((True, 4, "ground_truth_label_min"), (0, 101, "ground_truth_label_max"),
                             (10, 250, "ground_truth_label_max")):  # fmt: skip
        labels = [{"document_id": f"g{i}", LABEL: rng.randint(int(low), int(high))} for i in range(4)]
        cases.add("stricter", f"the label range [{low!r}, {high!r}]", labels, rd, low=low, high=high,
                  oloproof={"error": "ConfigError", "field": field})  # fmt: skip


def fidelity_cases(rng: random.Random, cases: Cases, count: int) -> None:
    ranges = [(0, 10), (1, 10), (0, 12), (2, 15), (0, 20), (5, 30), (0, 100), (9, 11)]
    for _ in range(count):
        low, high = rng.choice(ranges)
        n_truth = rng.choice([2, 4, 8, 16, 30])
        gt, rd = random_case(rng, low, high, n_truth=n_truth, n_found=rng.randint(1, n_truth),
                             n_holes=rng.choice([0, 1, 3]), score_style=rng.choice(SCORE_STYLES),
                             id_style=rng.choice(ID_STYLES))  # fmt: skip
        cases.add("fidelity_label_strings", f"labels {low}-{high}", gt, rd, low=low, high=high)


def deduplicate(gt: list[dict[str, Any]], rd: list[dict[str, Any]]) -> tuple[list, list]:
    """Oloproof's rule: each document once, with its highest label and at its best rank."""
    labels: dict[Any, int] = {}
    for item in gt:
        doc = item["document_id"]
        labels[doc] = max(labels.get(doc, item[LABEL]), item[LABEL])
    ranked = sorted(rd, key=lambda item: item[SCORE], reverse=True)  # stable: ties keep input order
    kept: dict[Any, dict[str, Any]] = {}
    for item in ranked:
        kept.setdefault(item["document_id"], item)
    # Kept in rank order, so the library's own ranking of the unique lists is the same.
    return [{"document_id": doc, LABEL: label} for doc, label in labels.items()], list(kept.values())


def duplicate_cases(rng: random.Random, cases: Cases, count: int) -> None:
    for number in range(count):
        low, high = rng.choice(VALID_RANGES)
        gt, rd = random_case(rng, low, high, n_truth=rng.choice([3, 5, 8, 12]), n_found=2,
                             n_holes=rng.choice([0, 1, 2]), score_style=rng.choice(SCORE_STYLES), id_style="str")  # fmt: skip
        kind = number % 4
        if kind in (0, 3):  # a judged document twice, same or another label
            item = rng.choice(gt)
            label = item[LABEL] if rng.random() < 0.5 else rng.randint(low, high)
            gt.insert(rng.randint(0, len(gt)), {"document_id": item["document_id"], LABEL: label})
        if kind in (1, 3) and rd:  # a retrieved document twice, same or another score
            item = rng.choice(rd)
            score = item[SCORE] if rng.random() < 0.5 else rng.uniform(-1, 100)
            rd.insert(rng.randint(0, len(rd)), {"document_id": item["document_id"], SCORE: score})
        if kind == 2:  # a hole twice
            rd.append({"document_id": "hole", SCORE: rng.uniform(0, 100)})
            rd.insert(0, {"document_id": "hole", SCORE: rng.uniform(0, 100)})
        note = ["judged twice", "retrieved twice", "a hole twice", "both lists"][kind]
        cases.add("duplicates", note, gt, rd, low=low, high=high, deduplicated=deduplicate(gt, rd))


def negative_cases(rng: random.Random, cases: Cases, count: int) -> None:
    ranges = [(-1, 4), (-2, 2), (-3, 3), (-5, 0), (-1, 1)]
    for _ in range(count):
        low, high = rng.choice(ranges)
        gt, rd = random_case(rng, low, high, n_truth=rng.choice([3, 6, 10]), n_found=rng.randint(1, 3),
                             n_holes=rng.choice([0, 1, 2]), score_style="distinct", id_style="str")  # fmt: skip
        cases.add("negative_range", f"labels {low}-{high}", gt, rd, low=low, high=high,
                  oloproof={"error": "ConfigError", "field": "ground_truth_label_min"})  # fmt: skip


EXPECTED_OUTCOME = {
    "valid": "metrics", "invalid": "raised", "stricter": "metrics", "fidelity_label_strings": "metrics",
    "duplicates": "metrics", "negative_range": None,
}  # fmt: skip
"""What the library does in each group (``None``: either; with negative labels it
scores some cases and divides by zero on others)."""


def generate(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases = Cases()
    valid_cases(rng, cases, 300)
    invalid_cases(rng, cases)
    stricter_cases(rng, cases)
    fidelity_cases(rng, cases, 40)
    duplicate_cases(rng, cases, 40)
    negative_cases(rng, cases, 12)
    return cases.items


def render(fixture: dict[str, Any]) -> str:
    """The fixture as JSON text, one case a line (a regenerated fixture diffs by case)."""
    head = {key: value for key, value in fixture.items() if key != "cases"}
    lines = [json.dumps(case, ensure_ascii=False, separators=(",", ":")) for case in fixture["cases"]]
    text = json.dumps(head, ensure_ascii=False, indent=1)[:-2]
    return text + ',\n "cases": [\n' + ",\n".join(lines) + "\n ]\n}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--output", type=Path, default=FIXTURE)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    version = metadata.version("azure-ai-evaluation")
    if not version.startswith("1."):
        raise SystemExit(f"expected azure-ai-evaluation 1.x, found {version}")

    cases = generate(args.seed)
    surprises = []
    for case in cases:
        case["reference"] = run_reference(case)
        if "deduplicated" in case:
            case["deduplicated"]["reference"] = run_reference({**case["deduplicated"], "parameters": case["parameters"]})
        outcome = "raised" if "raised" in case["reference"] else "metrics"
        # A stricter case the library rejects after all is an invalid one.
        if case["group"] == "stricter" and outcome == "raised":
            case["group"] = "invalid"
        elif EXPECTED_OUTCOME[case["group"]] not in (None, outcome):
            surprises.append(f"{case['group']} case {case['note']!r}: {case['reference']}")
    groups: dict[str, int] = {}
    for case in cases:  # numbered once the library has placed each case in its group
        groups[case["group"]] = groups.get(case["group"], 0) + 1
        case["id"] = f"{case['group']}-{groups[case['group']]:03d}"
    if surprises:
        print("the library did not behave as the generator expects:", *surprises, sep="\n  ", file=sys.stderr)
        return 1

    fixture = {
        "reference": {
            "package": "azure-ai-evaluation",
            "version": version,
            "evaluator": "DocumentRetrievalEvaluator",
            "python": platform.python_version(),
        },
        "generator": {"script": "scripts/reference/document_retrieval_fixture.py", "seed": args.seed},
        "encoding": {
            "$float": "a non-finite float: {'$float': 'nan' | 'inf' | '-inf'}",
            "$sequence": "count items with ids id_prefix + 0 .. count - 1 and the label or score value",
        },
        "cases": encode(cases),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(fixture), encoding="utf-8")
    print(f"{len(cases)} cases with azure-ai-evaluation {version}: {groups} -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
