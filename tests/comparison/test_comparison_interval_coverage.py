"""The paired interval as ``oloproof compare`` computes it covers the true difference.

Coverage is simulated through the comparison's own path: judgment rows are paired
by ``pair_metric`` and the interval comes from ``paired_line_values`` (in points,
with compare's fixed seed), for binary verdicts that flip in both directions.
"""

from __future__ import annotations

import numpy as np
import pytest

from oloproof.comparison import pair_metric, paired_line_values

REPLICATIONS = 1000
FLOOR = 0.935

# name -> (baseline pass rate, P(candidate fixes a baseline failure), P(candidate breaks a baseline pass))
MODELS = {
    "improves": (0.60, 0.50, 0.05),      # +0.4*0.5 - 0.6*0.05 = +17 points
    "no-change-churn": (0.50, 0.30, 0.30),  # 0 points, 30% of cases flip
    "regresses": (0.80, 0.40, 0.20),     # +0.2*0.4 - 0.8*0.2 = -8 points
}


def true_difference(model: tuple[float, float, float]) -> float:
    rate, fix, breaks = model
    return 100.0 * ((1.0 - rate) * fix - rate * breaks)


def rows(values: np.ndarray) -> list[dict]:
    return [{"case_id": f"case-{i:03d}", "criterion": "answer_correct", "status": "observed", "value": float(v)}
            for i, v in enumerate(values)]


def sample(rng: np.random.Generator, n: int, model: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    rate, fix, breaks = model
    baseline = (rng.random(n) < rate).astype(float)
    flip = rng.random(n)
    candidate = np.where(baseline == 1.0, (flip >= breaks).astype(float), (flip < fix).astype(float))
    return candidate, baseline


@pytest.mark.slow
@pytest.mark.parametrize("n", [13, 30])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_coverage_of_the_compare_interval(name, n):
    model = MODELS[name]
    truth = true_difference(model)
    rng = np.random.default_rng([n, sorted(MODELS).index(name)])
    hits = 0
    both_directions = 0
    for _ in range(REPLICATIONS):
        candidate, baseline = sample(rng, n, model)
        both_directions += bool(np.any(candidate > baseline) and np.any(candidate < baseline))
        line = paired_line_values(pair_metric(rows(candidate), rows(baseline), "answer_correct"), 0.95)
        hits += line["low"] <= truth <= line["high"]
    coverage = hits / REPLICATIONS
    assert coverage >= FLOOR, f"{name}, n={n}: coverage {coverage:.3f} of {truth:+.2f} points"
    # The simulation exercised discordance in both directions, not just one.
    assert both_directions > REPLICATIONS // 4


@pytest.mark.parametrize("scores", [[1.0] * 13, [0.0] * 13, [1.0] * 9 + [0.0] * 4, [0.5, 0.25, 1.0, 0.0] * 3 + [0.75]])
def test_thirteen_identical_pairs_leave_a_wide_interval(scores):
    pairing = pair_metric(rows(np.array(scores)), rows(np.array(scores)), "answer_correct")
    line = paired_line_values(pairing, 0.95)
    assert line["difference"] == 0.0
    assert line["high"] - line["low"] > 0.0
    assert line["low"] == pytest.approx(-line["high"], abs=1e-5)
    assert 20.0 < line["high"] < 40.0
