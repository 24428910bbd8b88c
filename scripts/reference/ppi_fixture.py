"""Record ppi-python's PPI++ mean estimate and interval over seeded cases as a JSON fixture.

Runs ``ppi_mean_pointestimate`` and ``ppi_mean_ci`` (``lam=None``, two-sided,
``alpha = 1 - confidence`` for confidences 0.9 and 0.95) of ``ppi-python`` 0.2.3
over generated cases and writes, for each, its inputs and what the library
returned (or that it raised, or returned NaN) to
``tests/stats/fixtures/ppi_reference.json``. The test suite
(``tests/stats/test_stats_ppi.py``) reads that file; it never needs the library,
which is not a dependency of the project.

The reference is installed in a virtual environment of its own, never in the
project's::

    python3 -m venv /tmp/ppienv
    /tmp/ppienv/bin/pip install 'ppi-python==0.2.3'
    /tmp/ppienv/bin/python scripts/reference/ppi_fixture.py

The fixture was recorded with ppi-python 0.2.3, numpy 2.4.6, scipy 1.17.1 and
statsmodels 0.15.0 on Python 3.11.

Cases (``n`` labelled items with a human value and a judge value, ``N`` items
with a judge value only):

* ``binary``: pass/fail humans at a pass rate, and a judge that passes a human
  failure with probability ``fp`` and fails a human pass with probability
  ``fn``: good, biased, noisy, anti-correlated (``lam`` clips at 0) and perfect
  (``lam`` near or clipped at 1), n from 10 to 500, N from 0 to 5,000.
* ``graded``: Beta-distributed human scores and a judge that adds noise or a
  bias, or compresses the scale (``lam`` clips at 1), or reverses it (clips
  at 0).
* ``scored``: pass/fail humans and a judge that returns a probability.
* degenerate inputs, recorded as the library's failure: ``N = 0`` (it divides
  by ``N``), a constant judge (``lam`` is NaN) and constant humans (a
  zero-width interval). Oloproof falls back to the human-only interval there.

Encoding: every value is a multiple of 1/4096 (so it is exact in binary and
decodes to the same double everywhere). A list of 0/1 values is stored as a
string of ``"0"`` and ``"1"`` (``{"bits": "0110..."}``); any other list as the
base64 of little-endian unsigned 16-bit integers ``k`` meaning ``k / 4096``
(``{"u16_4096": "..."}``).
"""

from __future__ import annotations

import base64
import json
import platform
import sys
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

SEED = 20250612
FIXTURE = Path(__file__).resolve().parents[2] / "tests/stats/fixtures/ppi_reference.json"
CONFIDENCES = (0.9, 0.95)
GRID = 4096

BINARY_JUDGES = {
    "good": (0.03, 0.03),
    "biased": (0.35, 0.05),
    "noisy": (0.3, 0.3),
    "anti": (0.8, 0.8),
    "perfect": (0.0, 0.0),
}
# (judge, n, N, pass rate)
BINARY_CASES = [
    ("good", 10, 100, 0.7), ("good", 60, 1940, 0.7), ("good", 250, 2000, 0.9),
    ("good", 500, 5000, 0.5), ("biased", 10, 5000, 0.7), ("biased", 25, 500, 0.7),
    ("biased", 60, 1940, 0.7), ("biased", 100, 1900, 0.7), ("biased", 500, 50, 0.7),
    ("biased", 60, 1, 0.6), ("noisy", 30, 300, 0.5), ("noisy", 100, 1000, 0.8),
    ("noisy", 400, 2000, 0.3), ("anti", 40, 400, 0.6), ("anti", 150, 1500, 0.5),
    ("perfect", 20, 40, 0.5), ("perfect", 80, 20, 0.6), ("perfect", 200, 3000, 0.4),
]  # fmt: skip
# (judge, n, N, beta a, beta b)
GRADED_CASES = [
    ("good", 10, 200, 2.0, 2.0), ("good", 100, 2000, 5.0, 2.0), ("good", 500, 3000, 2.0, 2.0),
    ("biased", 30, 1000, 2.0, 5.0), ("biased", 60, 1940, 5.0, 2.0), ("biased", 300, 300, 2.0, 2.0),
    ("noisy", 50, 500, 2.0, 2.0), ("noisy", 200, 5000, 0.5, 0.5),
    ("compressed", 40, 400, 2.0, 2.0), ("compressed", 120, 2000, 1.0, 1.0),
    ("anti", 60, 600, 2.0, 2.0), ("anti", 250, 100, 5.0, 2.0),
]  # fmt: skip
# (n, N, pass rate)
SCORED_CASES = [(25, 250, 0.7), (80, 800, 0.5), (300, 4000, 0.85)]


def quantise(values: np.ndarray) -> np.ndarray:
    """Values rounded to the 1/4096 grid, as exact doubles."""
    return np.round(np.clip(values, 0.0, 1.0) * GRID) / GRID


def encode(values: np.ndarray) -> dict[str, str]:
    """A list of grid values as bits (0/1 only) or base64 of 16-bit numerators."""
    if np.all((values == 0.0) | (values == 1.0)):
        return {"bits": "".join("1" if v == 1.0 else "0" for v in values)}
    numerators = np.round(values * GRID).astype("<u2")
    return {"u16_4096": base64.b64encode(numerators.tobytes()).decode("ascii")}


def decode(field: dict[str, str]) -> np.ndarray:
    """The inverse of :func:`encode` (the test has its own copy)."""
    if "bits" in field:
        return np.array([1.0 if c == "1" else 0.0 for c in field["bits"]], dtype=float)
    raw = base64.b64decode(field["u16_4096"])
    return np.frombuffer(raw, dtype="<u2").astype(float) / GRID


def binary_data(rng: np.random.Generator, n: int, big_n: int, rate: float, fp: float, fn: float):
    total = n + big_n
    human = (rng.random(total) < rate).astype(float)
    u = rng.random(total)
    judge = np.where(human == 1.0, u >= fn, u < fp).astype(float)
    return human[:n], judge[:n], judge[n:]


def graded_data(rng: np.random.Generator, n: int, big_n: int, kind: str, a: float, b: float):
    total = n + big_n
    human = quantise(rng.beta(a, b, total))
    noise = rng.standard_normal(total)
    judge = {
        "good": lambda: human + 0.05 * noise,
        "biased": lambda: human + 0.15 + 0.1 * noise,
        "noisy": lambda: human + 0.3 * noise,
        "compressed": lambda: 0.5 + 0.25 * (human - 0.5) + 0.02 * noise,
        "anti": lambda: 1.0 - human + 0.1 * noise,
    }[kind]()
    judge = quantise(judge)
    return human[:n], judge[:n], judge[n:]


def scored_data(rng: np.random.Generator, n: int, big_n: int, rate: float):
    total = n + big_n
    human = (rng.random(total) < rate).astype(float)
    judge = quantise(0.5 + 0.3 * (2.0 * human - 1.0) + 0.2 * rng.standard_normal(total))
    return human[:n], judge[:n], judge[n:]


def reference(human: np.ndarray, labelled: np.ndarray, unlabelled: np.ndarray) -> dict[str, Any]:
    """What ppi-python returns for the inputs, per confidence."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
    from ppi_py.ppi import _calc_lam_glm

    out: dict[str, Any] = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            estimate = float(np.ravel(ppi_mean_pointestimate(human, labelled, unlabelled))[0])
            # lam exactly as ppi_mean_ci computes it before its recursive call
            # (a private function: lam is not part of the library's output).
            y, yhat, yhat_u = (v.reshape(-1, 1) for v in (human, labelled, unlabelled))
            start = ppi_mean_pointestimate(y, yhat, yhat_u, lam=1)
            lam = float(_calc_lam_glm(y - start, yhat - start, yhat_u - start, np.eye(1), clip=True))
            bounds = {
                f"{c}": [
                    float(np.ravel(x)[0])
                    for x in ppi_mean_ci(human, labelled, unlabelled, alpha=1.0 - c)
                ]
                for c in CONFIDENCES
            }
        except Exception as error:  # noqa: BLE001 - the failure is what is recorded
            return {"error": type(error).__name__}
    if not np.isfinite(estimate):
        return {"error": "nan"}
    out["estimate"] = estimate
    out["lam"] = lam
    for c, (low, high) in bounds.items():
        out[c] = {"low": low, "high": high}
    return out


def case(case_id: str, kind: str, params: dict[str, Any], data: tuple[np.ndarray, ...]) -> dict[str, Any]:
    # Round-trip through the encoding so the library sees exactly what the test decodes.
    human, labelled, unlabelled = (decode(encode(v)) if v.size else v for v in data)
    return {
        "id": case_id,
        "kind": kind,
        "params": params,
        "n": int(human.size),
        "N": int(unlabelled.size),
        "human": encode(human),
        "judge_labelled": encode(labelled),
        "judge_unlabelled": encode(unlabelled) if unlabelled.size else {"bits": ""},
        "reference": reference(human, labelled, unlabelled),
    }


def build() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    cases = []
    for judge, n, big_n, rate in BINARY_CASES:
        fp, fn = BINARY_JUDGES[judge]
        params = {"judge": judge, "pass_rate": rate, "fp": fp, "fn": fn}
        data = binary_data(rng, n, big_n, rate, fp, fn)
        cases.append(case(f"binary-{judge}-n{n}-N{big_n}", "binary", params, data))
    for judge, n, big_n, a, b in GRADED_CASES:
        params = {"judge": judge, "beta": [a, b]}
        data = graded_data(rng, n, big_n, judge, a, b)
        cases.append(case(f"graded-{judge}-n{n}-N{big_n}", "graded", params, data))
    for n, big_n, rate in SCORED_CASES:
        data = scored_data(rng, n, big_n, rate)
        cases.append(case(f"scored-n{n}-N{big_n}", "scored", {"pass_rate": rate}, data))
    # Degenerate inputs.
    human, labelled, _ = binary_data(rng, 30, 0, 0.7, 0.1, 0.1)
    cases.append(case("degenerate-no-unlabelled", "degenerate", {}, (human, labelled, np.zeros(0))))
    human = (rng.random(40) < 0.6).astype(float)
    cases.append(case("degenerate-judge-constant", "degenerate", {}, (human, np.ones(40), np.ones(400))))
    _, labelled, unlabelled = binary_data(rng, 40, 400, 0.7, 0.2, 0.2)
    cases.append(case("degenerate-human-constant", "degenerate", {}, (np.ones(40), labelled, unlabelled)))
    return cases


def main() -> int:
    cases = build()
    document = {
        "generator": "scripts/reference/ppi_fixture.py",
        "seed": SEED,
        "library": {"ppi-python": metadata.version("ppi-python"), "numpy": np.__version__},
        "python": platform.python_version(),
        "confidences": [str(c) for c in CONFIDENCES],
        "encoding": "bits: '0'/'1' per value; u16_4096: base64 of little-endian uint16 k, value k/4096",
        "cases": cases,
    }
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    lams = [c["reference"].get("lam") for c in cases]
    print(
        f"wrote {len(cases)} cases, {FIXTURE.stat().st_size} bytes, to {FIXTURE}; "
        f"lam = 0 in {sum(x == 0.0 for x in lams)}, lam = 1 in {sum(x == 1.0 for x in lams)}; "
        f"errors: {[c['id'] for c in cases if 'error' in c['reference']]}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
