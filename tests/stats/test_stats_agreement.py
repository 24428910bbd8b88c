"""Cohen's kappa and its BCa interval: values, undefined cases, order, coverage."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from oloproof._exceptions import StatsError
from oloproof.stats import (
    KAPPA_METHOD,
    KAPPA_NO_DISAGREEMENT_METHOD,
    agreement_table,
    cohen_kappa,
    kappa_interval,
)

SCALE = [1, 2, 3, 4, 5]


def _pairs(table: list[list[int]], categories: list) -> tuple[list, list]:
    """Items laid out from a table of counts (rows: judge, columns: human)."""
    judge, human = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            judge += [categories[i]] * count
            human += [categories[j]] * count
    return judge, human


def _exact_kappa(judge: list, human: list, categories: list, weights: str | None) -> Fraction:
    """Kappa in exact arithmetic, item by item, as written in Cohen (1968)."""
    k, n = len(categories), len(judge)
    position = {c: i for i, c in enumerate(categories)}

    def agree(a: int, b: int) -> Fraction:
        if weights is None:
            return Fraction(int(a == b))
        d = Fraction(abs(a - b), k - 1)
        return 1 - d if weights == "linear" else 1 - d * d

    observed = sum(agree(position[a], position[b]) for a, b in zip(judge, human)) / n
    rows = [Fraction(sum(position[a] == i for a in judge), n) for i in range(k)]
    cols = [Fraction(sum(position[b] == j for b in human), n) for j in range(k)]
    chance = sum(agree(i, j) * rows[i] * cols[j] for i in range(k) for j in range(k))
    return (observed - chance) / (1 - chance)


def test_binary_example() -> None:
    # p_o = 0.7, p_e = (25 * 30 + 25 * 20) / 50^2 = 0.5, so kappa = 0.4.
    judge, human = _pairs([[20, 5], [10, 15]], [0, 1])
    assert cohen_kappa(judge, human, categories=[0, 1]) == pytest.approx(0.4, abs=1e-15)
    # With two categories every weighting is the same.
    for weights in ("linear", "quadratic"):
        value = cohen_kappa(judge, human, categories=[0, 1], weights=weights)
        assert value == pytest.approx(0.4, abs=1e-15)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_weighted_kappa_matches_exact_arithmetic(weights: str | None) -> None:
    rng = np.random.default_rng(3)
    for n in (7, 40, 200):
        judge = rng.integers(1, 6, n).tolist()
        human = [min(5, max(1, j + int(d))) for j, d in zip(judge, rng.integers(-1, 2, n))]
        exact = _exact_kappa(judge, human, SCALE, weights)
        value = cohen_kappa(judge, human, categories=SCALE, weights=weights)
        assert value == pytest.approx(float(exact), abs=1e-12)


def test_category_order_matters_only_when_weighted() -> None:
    judge, human = [1, 2, 3, 3, 5, 4], [1, 3, 3, 2, 4, 5]
    shuffled = [3, 1, 5, 2, 4]
    unweighted = cohen_kappa(judge, human, categories=SCALE)
    assert cohen_kappa(judge, human, categories=shuffled) == pytest.approx(unweighted)
    assert cohen_kappa(judge, human, categories=shuffled, weights="linear") != pytest.approx(
        cohen_kappa(judge, human, categories=SCALE, weights="linear")
    )


def test_boundary_values() -> None:
    assert cohen_kappa([0, 1, 1, 0], [0, 1, 1, 0], categories=[0, 1]) == 1.0
    assert cohen_kappa([0, 1, 1, 0], [1, 0, 0, 1], categories=[0, 1]) == -1.0
    # One rater constant: observed agreement equals chance agreement.
    assert cohen_kappa([1, 1, 1, 1], [1, 0, 1, 1], categories=[0, 1]) == 0.0
    assert cohen_kappa([1, 1], [0, 0], categories=[0, 1]) == 0.0


def test_kappa_is_nan_exactly_when_undefined() -> None:
    for weights in (None, "linear", "quadratic"):
        value = cohen_kappa([3, 3, 3], [3, 3, 3], categories=SCALE, weights=weights)
        assert math.isnan(value)
    assert not math.isnan(cohen_kappa([3, 3, 3], [3, 3, 4], categories=SCALE))


def test_table_and_label_checks() -> None:
    table = agreement_table(["a", "b", "b"], ["a", "a", "b"], categories=["a", "b"])
    assert table.tolist() == [[1, 0], [1, 1]]
    assert cohen_kappa(np.array([0, 1, 1]), np.array([0, 1, 0]), categories=[0, 1]) == pytest.approx(
        cohen_kappa([0, 1, 1], [0, 1, 0], categories=[0, 1])
    )
    bad_calls = [
        {"judge": [0, 1], "human": [0], "categories": [0, 1]},
        {"judge": [], "human": [], "categories": [0, 1]},
        {"judge": [0, 2], "human": [0, 1], "categories": [0, 1]},
        {"judge": [0, float("nan")], "human": [0, 1], "categories": [0, 1]},
        {"judge": [0, [1]], "human": [0, 1], "categories": [0, 1]},
        {"judge": [0, 1], "human": [0, 1], "categories": [0]},
        {"judge": [0, 1], "human": [0, 1], "categories": [0, 1, 1]},
        {"judge": "01", "human": [0, 1], "categories": ["0", "1"]},
        {"judge": [0, 1], "human": [0, 1], "categories": "01"},
        {"judge": [0, 1], "human": [0, 1], "categories": [0, 1], "weights": "cubic"},
    ]
    for kwargs in bad_calls:
        with pytest.raises(StatsError):
            cohen_kappa(**kwargs)  # type: ignore[arg-type]


def test_interval_checks() -> None:
    judge, human = _pairs([[20, 5], [10, 15]], [0, 1])
    for kwargs in ({"confidence": 1.0}, {"seed": -1}, {"resamples": 10}, {"resamples": 1.5}):
        with pytest.raises(StatsError):
            kappa_interval(judge, human, categories=[0, 1], **kwargs)  # type: ignore[arg-type]
    # A constant rater leaves kappa nothing to vary over: refused, not a point.
    for judge_c, human_c in (([1] * 10, [0, 1] * 5), ([0, 1] * 5, [1] * 10), ([1] * 10, [1] * 10)):
        with pytest.raises(StatsError, match="at least two categories"):
            kappa_interval(judge_c, human_c, categories=[0, 1])


def test_interval_is_seeded_and_contains_the_estimate() -> None:
    judge, human = _pairs([[20, 5], [10, 15]], [0, 1])
    interval = kappa_interval(judge, human, categories=[0, 1])
    assert interval.method == KAPPA_METHOD
    assert interval.confidence == 0.95
    assert -1.0 <= interval.low < 0.4 < interval.high <= 1.0
    assert kappa_interval(judge, human, categories=[0, 1]) == interval
    other = kappa_interval(judge, human, categories=[0, 1], seed=1)
    assert other != interval
    assert abs(other.low - interval.low) < 0.05 and abs(other.high - interval.high) < 0.05
    assert kappa_interval(judge, human, categories=[0, 1], confidence=0.8).width < interval.width


def test_interval_ignores_the_order_of_items() -> None:
    rng = np.random.default_rng(8)
    for weights, categories in ((None, [0, 1]), ("quadratic", SCALE), ("linear", SCALE)):
        judge = rng.choice(categories, 60)
        human = np.where(rng.random(60) < 0.6, judge, rng.choice(categories, 60))
        options = {"categories": categories, "weights": weights, "seed": 5}
        reference = kappa_interval(judge.tolist(), human.tolist(), **options)
        for _ in range(3):
            order = rng.permutation(60)
            shuffled = kappa_interval(judge[order].tolist(), human[order].tolist(), **options)
            assert (shuffled.low.hex(), shuffled.high.hex()) == (reference.low.hex(), reference.high.hex())


def test_no_disagreement_prices_the_unseen_at_the_worst_weight() -> None:
    judge = human = [0] * 15 + [1] * 35
    interval = kappa_interval(judge, human, categories=[0, 1])
    assert interval.method == KAPPA_NO_DISAGREEMENT_METHOD
    # q = 1 - 0.025^(1/50) disagreement at most; chance disagreement 2 (0.3)(0.7).
    q = 1.0 - 0.025 ** (1.0 / 50.0)
    assert interval.high == 1.0
    assert interval.low == pytest.approx(1.0 - q / 0.42, abs=1e-12)
    # One disagreement more: the bootstrap takes over, at about the same bound.
    near = kappa_interval(judge + [0], human + [1], categories=[0, 1])
    assert near.method == KAPPA_METHOD
    assert abs(near.low - interval.low) < 0.1
    # Weighted: the worst disagreement (1 against 5) is what is not ruled out.
    graded = [1] * 10 + [2] * 10 + [3] * 10 + [4] * 10 + [5] * 10
    quadratic = kappa_interval(graded, graded, categories=SCALE, weights="quadratic")
    assert quadratic.low == pytest.approx(1.0 - q / 0.25, abs=1e-12)  # E[(i - j)^2] / 16 = 4 / 16


# -- coverage ----------------------------------------------------------------------

REPLICATIONS = 1000
# Nominal 95% less two Monte Carlo standard errors of REPLICATIONS replications.
FLOOR = 0.95 - 2.0 * math.sqrt(0.95 * 0.05 / REPLICATIONS)


def _binary_cells(judge_rate: float, human_rate: float, kappa: float) -> np.ndarray:
    """Joint probabilities (rows: judge 0/1, columns: human 0/1) with the given kappa."""
    chance = judge_rate * human_rate + (1 - judge_rate) * (1 - human_rate)
    both = (chance + kappa * (1 - chance) + judge_rate + human_rate - 1) / 2
    cells = np.array([[both - (judge_rate + human_rate - 1), human_rate - both], [judge_rate - both, both]])
    assert (cells >= 0).all()
    return cells


def _graded_cells() -> np.ndarray:
    """1-5 scale: the judge agrees on 60%, is off by one on 32% and by two on 8%."""
    human = [0.10, 0.15, 0.25, 0.30, 0.20]
    cells = np.zeros((5, 5))
    for h, share in enumerate(human):
        for offset, p in ((0, 0.6), (1, 0.2), (-1, 0.12), (2, 0.05), (-2, 0.03)):
            cells[min(max(h + offset, 0), 4), h] += p * share
    return cells


def _population_kappa(cells: np.ndarray, weights: str | None) -> float:
    """Kappa of the joint distribution itself, from its cell probabilities."""
    k = cells.shape[0]
    i = np.arange(k)
    d = np.abs(i[:, None] - i[None, :]) / (k - 1)
    agree = {None: np.eye(k), "linear": 1 - d, "quadratic": 1 - d * d}[weights]
    observed = float((cells * agree).sum())
    chance = float(cells.sum(1) @ agree @ cells.sum(0))
    return (observed - chance) / (1 - chance)


COVERAGE_CELLS = {
    "binary-kappa-0.5": (_binary_cells(0.75, 0.65, 0.5), None),
    "binary-kappa-0.8": (_binary_cells(0.75, 0.70, 0.8), None),
    "scale-quadratic": (_graded_cells(), "quadratic"),
    "scale-linear": (_graded_cells(), "linear"),
}


def test_population_kappas() -> None:
    assert _population_kappa(COVERAGE_CELLS["binary-kappa-0.5"][0], None) == pytest.approx(0.5)
    assert _population_kappa(COVERAGE_CELLS["binary-kappa-0.8"][0], None) == pytest.approx(0.8)
    cells = COVERAGE_CELLS["binary-kappa-0.5"][0]
    assert cells.sum(1)[1] == pytest.approx(0.75) and cells.sum(0)[1] == pytest.approx(0.65)
    assert _population_kappa(_graded_cells(), "quadratic") == pytest.approx(0.852, abs=5e-4)
    assert _population_kappa(_graded_cells(), "linear") == pytest.approx(0.730, abs=5e-4)


def _coverage(name: str, n: int) -> tuple[float, float]:
    cells, weights = COVERAGE_CELLS[name]
    k = cells.shape[0]
    truth = _population_kappa(cells, weights)
    rng = np.random.default_rng(1000 + n + 7 * len(name))
    draws = rng.choice(k * k, size=(REPLICATIONS, n), p=cells.ravel())
    hits, widths = 0, 0.0
    for r, items in enumerate(draws):
        interval = kappa_interval(items // k, items % k, categories=list(range(k)), weights=weights, seed=r)
        hits += interval.low <= truth <= interval.high
        widths += interval.width
    return hits / REPLICATIONS, widths / REPLICATIONS


# The 5-by-5 tables take 3-5 s a cell, the binary ones about 2 s.
CELL_PARAMS = [
    pytest.param(name, marks=pytest.mark.slow) if name.startswith("scale") else name
    for name in COVERAGE_CELLS
]


@pytest.mark.slow
@pytest.mark.parametrize("n", [50, 100])
@pytest.mark.parametrize("name", CELL_PARAMS)
def test_coverage(name: str, n: int) -> None:
    coverage, width = _coverage(name, n)
    assert coverage >= FLOOR, f"{name}, n={n}: coverage {coverage:.3f} < {FLOOR:.3f} (width {width:.3f})"
