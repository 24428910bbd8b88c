"""PPI++ for a mean: agreement with ppi-python, fallbacks, order, and coverage."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import numpy as np
import pytest

from oloproof._exceptions import StatsError
from oloproof.stats import (
    CLOPPER_PEARSON_METHOD,
    DEFAULT_MIN_LABELS,
    MEAN_METHOD,
    PPI_FALLBACKS,
    PPI_METHOD,
    PPIEstimate,
    clopper_pearson,
    mean_interval,
    ppi_mean_interval,
)

FIXTURE = Path(__file__).parent / "fixtures" / "ppi_reference.json"
GRID = 4096

FORCE = {"min_labels": 1, "min_disagreements": 0}
"""PPI++ whatever the labels: no floor, no guard."""


def _decode(field: dict[str, str]) -> np.ndarray:
    """Values as ``scripts/reference/ppi_fixture.py`` encoded them."""
    if "bits" in field:
        return np.array([1.0 if c == "1" else 0.0 for c in field["bits"]], dtype=float)
    return np.frombuffer(base64.b64decode(field["u16_4096"]), dtype="<u2").astype(float) / GRID


def _fixture_cases() -> list[dict]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]


def _inputs(case: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _decode(case["human"]), _decode(case["judge_labelled"]), _decode(case["judge_unlabelled"])


# -- agreement with ppi-python ---------------------------------------------------


def test_fixture_spans_what_it_claims() -> None:
    cases = _fixture_cases()
    assert FIXTURE.stat().st_size < 300_000
    sizes = [(c["n"], c["N"]) for c in cases]
    assert min(n for n, _ in sizes) == 10 and max(n for n, _ in sizes) == 500
    assert min(big for _, big in sizes) == 0 and max(big for _, big in sizes) == 5000
    lams = [c["reference"]["lam"] for c in cases if "lam" in c["reference"]]
    assert 0.0 in lams and 1.0 in lams and any(0.0 < lam < 1.0 for lam in lams)
    assert {c["kind"] for c in cases} >= {"binary", "graded", "scored", "degenerate"}
    for case in cases:
        human, labelled, unlabelled = _inputs(case)
        assert (human.size, labelled.size, unlabelled.size) == (case["n"], case["n"], case["N"])


@pytest.mark.parametrize("case", _fixture_cases(), ids=lambda c: c["id"])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_agrees_with_ppi_python(case: dict, confidence: float) -> None:
    human, labelled, unlabelled = _inputs(case)
    reference = case["reference"]
    result = ppi_mean_interval(human, labelled, unlabelled, confidence=confidence, **FORCE)
    if unlabelled.size == 0:
        assert reference == {"error": "ZeroDivisionError"}
        assert result.fallback == "no_unlabelled"
        return
    if np.ptp(np.concatenate([labelled, unlabelled])) == 0.0:
        assert reference == {"error": "nan"}
        assert result.fallback == "judge_constant"
        return
    if np.ptp(human) == 0.0:
        # ppi-python returns a point: lam = 0 and no variance left.
        bounds = reference[str(confidence)]
        assert reference["lam"] == 0.0 and bounds["low"] == bounds["high"]
        assert result.fallback == "human_constant"
        return
    bounds = reference[str(confidence)]
    assert result.fallback is None and result.method == PPI_METHOD
    assert result.lam == pytest.approx(reference["lam"], abs=1e-9)
    assert result.raw_estimate == pytest.approx(reference["estimate"], abs=1e-9)
    assert result.raw_low == pytest.approx(bounds["low"], abs=1e-9)
    assert result.raw_high == pytest.approx(bounds["high"], abs=1e-9)
    # The reported numbers are the raw ones clipped to [0, 1].
    assert result.interval.low == min(max(result.raw_low, 0.0), 1.0)
    assert result.interval.high == min(max(result.raw_high, 0.0), 1.0)
    assert result.estimate == min(max(result.raw_estimate, 0.0), 1.0)


# -- the result's rows and fallbacks ---------------------------------------------


def _binary_sample(seed: int, n: int, big_n: int, rate: float = 0.7, fp: float = 0.35, fn: float = 0.05):
    rng = np.random.default_rng(seed)
    human = (rng.random(n + big_n) < rate).astype(float)
    u = rng.random(n + big_n)
    judge = np.where(human == 1.0, u >= fn, u < fp).astype(float)
    return human[:n], judge[:n], judge[n:]


def test_rows_side_by_side() -> None:
    human, labelled, unlabelled = _binary_sample(1, 400, 1600)
    result = ppi_mean_interval(human, labelled, unlabelled)
    assert isinstance(result, PPIEstimate)
    assert result.fallback is None and result.method == PPI_METHOD and 0.0 <= result.lam <= 1.0
    assert (result.n_labels, result.n_unlabelled) == (400, 1600)
    assert result.human_only == clopper_pearson(int(human.sum()), 400)
    assert result.human_only_estimate == pytest.approx(human.mean())
    everything = np.concatenate([labelled, unlabelled])
    assert result.judge_only == clopper_pearson(int(everything.sum()), 2000)
    assert result.judge_only_estimate == pytest.approx(everything.mean())
    assert result.interval.low <= result.estimate <= result.interval.high
    assert result.interval.width < result.human_only.width


def test_scores_that_are_not_pass_fail_use_gaffke() -> None:
    rng = np.random.default_rng(2)
    human = rng.beta(2, 2, 50)
    judge = np.clip(human + 0.1 * rng.standard_normal(50), 0, 1)
    unlabelled = rng.beta(2, 2, 500)
    result = ppi_mean_interval(human, judge, unlabelled, min_labels=10, seed=3)
    assert result.human_only == mean_interval(human, seed=3)
    assert result.judge_only == mean_interval(np.concatenate([judge, unlabelled]), seed=3)
    assert result.human_only.method == result.judge_only.method == MEAN_METHOD


def test_fallbacks() -> None:
    human, labelled, unlabelled = _binary_sample(4, 400, 1600)
    assert int((human != labelled).sum()) >= 30 and int((1 - human).sum()) >= 30
    assert ppi_mean_interval(human, labelled, unlabelled).fallback is None  # pass/fail: the guard decides
    few = ppi_mean_interval(human, labelled, unlabelled, min_labels=401)
    assert few.fallback == "too_few_labels"
    assert few.interval == few.human_only and few.estimate == few.human_only_estimate
    assert few.method == CLOPPER_PEARSON_METHOD and few.lam is None
    assert few.raw_estimate is few.raw_low is few.raw_high is None
    # Fewer than 30 disagreements, or 30 human failures, in the labelled sample.
    agree = ppi_mean_interval(human, human, unlabelled)
    assert agree.fallback == "too_few_disagreements"
    passes = np.r_[np.zeros(29), np.ones(371)]
    assert ppi_mean_interval(passes, 1 - passes[::-1], unlabelled).fallback == "too_few_human_failures"
    assert ppi_mean_interval(1 - passes, passes[::-1], unlabelled).fallback == "too_few_human_passes"
    # Scores other than 0/1 keep the floor of DEFAULT_MIN_LABELS.
    assert DEFAULT_MIN_LABELS > 60
    assert ppi_mean_interval(human[:100] * 0.5 + 0.25, labelled[:100], unlabelled).fallback == "too_few_labels"
    assert ppi_mean_interval(human, labelled, [], **FORCE).fallback == "no_unlabelled"
    assert ppi_mean_interval(human, labelled, np.array([]), **FORCE).n_unlabelled == 0
    ones = np.ones(400)
    assert ppi_mean_interval(human, ones, np.ones(10), **FORCE).fallback == "judge_constant"
    # Constant in the labelled part only is not constant.
    assert ppi_mean_interval(human, ones, np.r_[0.0, np.ones(9)], **FORCE).fallback is None
    assert ppi_mean_interval(ones, labelled, unlabelled, **FORCE).fallback == "human_constant"
    # An exact fit with a constant unlabelled part leaves no variance at all.
    exact = ppi_mean_interval([0.0, 1.0] * 5, [0.0, 1.0] * 5, [1.0] * 1000, **FORCE)
    assert exact.fallback == "zero_standard_error"
    reasons = {few.fallback, agree.fallback, "too_few_human_failures", "too_few_human_passes",
               "no_unlabelled", "judge_constant", "human_constant", exact.fallback}
    assert reasons == set(PPI_FALLBACKS)


def test_clipping_binds_and_keeps_the_raw_bounds() -> None:
    # 19 of 20 labels pass, the judge agrees and passes 28 of 30 others: the
    # normal interval crosses 1.
    human = np.r_[np.ones(19), 0.0]
    result = ppi_mean_interval(human, human, np.r_[np.ones(28), 0.0, 0.0], **FORCE)
    assert result.fallback is None
    assert result.raw_high > 1.0 and result.interval.high == 1.0
    assert result.interval.low == result.raw_low


def test_input_checks() -> None:
    human, labelled, unlabelled = _binary_sample(4, 50, 100)
    bad_calls = [
        (human[:-1], labelled, unlabelled, {}),
        ([], [], unlabelled, {}),
        (human + 0.5, labelled, unlabelled, {}),
        (human, labelled, unlabelled + 2.0, {}),
        (human, labelled, [0.5, float("nan")], {}),
        (human, labelled, "0.5", {}),
        (human, labelled, unlabelled, {"confidence": 1.5}),
        (human, labelled, unlabelled, {"min_labels": 0}),
        (human, labelled, unlabelled, {"seed": -1}),
    ]
    for h, jl, ju, kwargs in bad_calls:
        with pytest.raises(StatsError):
            ppi_mean_interval(h, jl, ju, **kwargs)


def _bits(result: PPIEstimate) -> tuple:
    numbers = (result.estimate, result.interval.low, result.interval.high, result.lam, result.raw_low)
    rows = (result.human_only.low, result.human_only.high, result.judge_only.low, result.judge_only.high)
    return tuple(float(x).hex() for x in numbers + rows)


@pytest.mark.parametrize("kind", ["binary", "scores"])
def test_order_of_items_changes_no_bit(kind: str) -> None:
    rng = np.random.default_rng(5)
    if kind == "binary":
        human, labelled, unlabelled = _binary_sample(5, 80, 700)
    else:
        human = rng.beta(2, 2, 80)
        labelled = np.clip(human + 0.2 * rng.standard_normal(80), 0, 1)
        unlabelled = rng.beta(2, 2, 700)
    reference = _bits(ppi_mean_interval(human, labelled, unlabelled, **FORCE))
    for _ in range(3):
        pairs, rest = rng.permutation(80), rng.permutation(700)
        rest_list = unlabelled[rest].tolist()
        shuffled = ppi_mean_interval(human[pairs], labelled[pairs], rest_list, **FORCE)
        assert _bits(shuffled) == reference


# -- coverage with a biased judge ------------------------------------------------

POPULATION = 2000
PASS_RATE = 0.7


def _floor(replications: int) -> float:
    """Nominal 95% less two Monte Carlo standard errors."""
    return 0.95 - 2.0 * math.sqrt(0.95 * 0.05 / replications)


def _simulate(n: int, fp: float, fn: float, replications: int, seed: int, **kwargs) -> dict[str, float]:
    """Coverage and mean width of each row of ``ppi_mean_interval``.

    Each replication draws a population of 2,000 pass/fail items at the pass
    rate, a judge that passes a human failure with probability ``fp`` and
    fails a human pass with probability ``fn``, and human labels on a uniform
    sample of ``n`` items. The target is the pass rate itself.
    """
    rng = np.random.default_rng(seed)
    human = (rng.random((replications, POPULATION)) < PASS_RATE).astype(float)
    u = rng.random((replications, POPULATION))
    judge = np.where(human == 1.0, u >= fn, u < fp).astype(float)
    samples = np.argsort(rng.random((replications, POPULATION)), axis=1)
    tally = dict.fromkeys(("ppi", "human", "judge", "ppi_width", "human_width", "fallbacks"), 0.0)
    for r in range(replications):
        labelled, rest = samples[r, :n], samples[r, n:]
        result = ppi_mean_interval(human[r, labelled], judge[r, labelled], judge[r, rest], **kwargs)
        rows = (("ppi", result.interval), ("human", result.human_only), ("judge", result.judge_only))
        for row, interval in rows:
            tally[row] += interval.low <= PASS_RATE <= interval.high
        tally["ppi_width"] += result.interval.width
        tally["human_width"] += result.human_only.width
        tally["fallbacks"] += result.fallback is not None
    return {key: value / replications for key, value in tally.items()}


@pytest.mark.parametrize("n", [60, 100])
def test_biased_judge_at_few_labels(n: int) -> None:
    # The judge passes 35% of human failures and fails 5% of human passes: its
    # mean is 0.77 against 0.7, so the judge-only interval misses.
    reported = _simulate(n, 0.35, 0.05, 1000, seed=n)
    assert reported["judge"] < 0.5
    # Fewer than 30 disagreements or 30 failures in the labelled sample: what is
    # reported is the human-only interval, and it holds.
    assert reported["fallbacks"] > 0.9
    assert reported["ppi"] >= _floor(1000) and reported["human"] >= _floor(1000)


def test_biased_judge_at_300_labels_uses_ppi_and_holds() -> None:
    reported = _simulate(300, 0.35, 0.05, 1000, seed=300)
    assert reported["judge"] < 0.5
    assert reported["fallbacks"] < 0.05
    assert reported["ppi"] >= _floor(1000)
    assert reported["ppi_width"] < 0.85 * reported["human_width"]


def test_a_good_judge_falls_back() -> None:
    # A judge that errs 3% of the time shows fewer than 30 disagreements in 300
    # labels, where PPI++'s interval under-covers: the human-only one is reported.
    reported = _simulate(300, 0.03, 0.03, 300, seed=5)
    assert reported["fallbacks"] == 1.0 and reported["ppi"] >= _floor(300)


def test_raw_ppi_under_covers_at_60_labels() -> None:
    # Why min_labels is not 60: PPI++ itself (forced with **FORCE) covers
    # about 92.5% there (the module docstring's table).
    raw = _simulate(60, 0.35, 0.05, 2000, seed=61, **FORCE)
    assert raw["fallbacks"] == 0.0
    assert raw["ppi"] < _floor(2000)
    assert raw["ppi_width"] < raw["human_width"]


@pytest.mark.parametrize(("judge", "fp", "fn"), [("biased", 0.35, 0.05), ("good", 0.03, 0.03)])
def test_at_the_default_min_labels_ppi_holds_and_is_narrower(judge: str, fp: float, fn: float) -> None:
    result = _simulate(DEFAULT_MIN_LABELS, fp, fn, 1000, seed=len(judge), min_labels=DEFAULT_MIN_LABELS,
                       min_disagreements=0)
    assert result["fallbacks"] == 0.0
    assert result["ppi"] >= _floor(1000), f"{judge}: PPI++ coverage {result['ppi']:.3f}"
    assert result["human"] >= _floor(1000)
    # A good judge halves the human-only width; even the biased one narrows it.
    ratio = result["ppi_width"] / result["human_width"]
    assert ratio < (0.6 if judge == "good" else 0.95), f"{judge}: width ratio {ratio:.3f}"
    if judge == "biased":
        assert result["judge"] < 0.5
