"""Repeats of a stochastic system: cached one by one, counted per case, flaky cases named."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# Each case passes with its own probability. A case's draws are a seeded sequence, so
# whichever repeat takes which draw, a case's draws (and so its pass count) are fixed.
SYSTEM = '''
import random
import threading
from pathlib import Path

from oloproof import system

P = {P}
_LOCK = threading.Lock()
_DRAWS = {{}}
_LOG = Path(__file__).with_name("calls.log")


@system(name="coin", version="1")
def answer(input):
    with _LOCK:
        n = _DRAWS[input["case"]] = _DRAWS.get(input["case"], -1) + 1
        with _LOG.open("a", encoding="utf-8") as log:
            log.write(input["case"] + "\\n")
    draw = random.Random(f"{{input['case']}}:{{n}}").random()
    return {{"answer": "yes" if draw < P[input["case"]] else "no"}}
'''

PROBABILITIES = {"low_1": 0.2, "low_2": 0.2, "half_1": 0.5, "half_2": 0.5, "high_1": 0.9, "high_2": 0.9}


def _draws(case: str, count: int) -> list[bool]:
    return [random.Random(f"{case}:{n}").random() < PROBABILITIES[case] for n in range(count)]


def _variance(values: list) -> float:
    mean = sum(values) / len(values)
    return sum((float(v) - mean) ** 2 for v in values) / (len(values) - 1)


def _project(tmp_path: Path, extra: str = "") -> Path:
    project = tmp_path / "coin"
    project.mkdir()
    (project / "coin_app.py").write_text(SYSTEM.format(P=PROBABILITIES), encoding="utf-8")
    (project / "cases.jsonl").write_text("".join(
        json.dumps({"id": case, "input": {"case": case}, "expected": {"answer": "yes"}}) + "\n"
        for case in PROBABILITIES), encoding="utf-8")  # fmt: skip
    (project / "oloproof.yaml").write_text(
        "system:\n  object: coin_app:answer\n" + extra + "dataset: cases.jsonl\n"
        "evaluators:\n  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}\n"
        "repeats: 5\n", encoding="utf-8")  # fmt: skip
    return project


def _calls(project: Path) -> dict[str, int]:
    lines = (project / "calls.log").read_text(encoding="utf-8").split()
    return {case: lines.count(case) for case in PROBABILITIES}


def _judgments(project: Path, run_id: str) -> list[dict]:
    from oloproof.store import ResultsStore, run_table

    return ResultsStore(str(project / ".oloproof" / "results")).read_table(run_table(run_id, "judgments"))


def test_repeats_are_cached_one_by_one_and_summarized_over_cases(run_cli, tmp_path):
    project = _project(tmp_path)
    code, out, err = run_cli("run", str(project), "--json")
    assert code == 0, err
    first = json.loads(out)
    assert _calls(project) == dict.fromkeys(PROBABILITIES, 5)  # five samples a case
    assert first["repeats"] == 5

    # Seven repeats: the first five are cached, two more a case are executed.
    code, out, err = run_cli("run", str(project), "--repeats", "7", "--json")
    assert code == 0, err
    run = json.loads(out)
    assert _calls(project) == dict.fromkeys(PROBABILITIES, 7)
    assert run["cache"]["generate"] == {"hit": 0, "miss": 12}
    assert run["cache"]["execution"] == {"hit": 30, "miss": 12}

    # Each case's pass rate is its own draws'; the case, not the sample, is the unit.
    rows = [row for row in _judgments(project, run["run_id"]) if row["criterion"] == "answer_correct"]
    assert sorted({row["repeat"] for row in rows}) == list(range(7))
    rates = {case: sum(row["value"] for row in rows if row["case_id"] == case) / 7 for case in PROBABILITIES}
    assert rates == {case: sum(_draws(case, 7)) / 7 for case in PROBABILITIES}
    for case, rate in rates.items():  # within sampling error of the truth (a 99.9% binomial band)
        assert abs(rate - PROBABILITIES[case]) < 3.3 * (PROBABILITIES[case] * (1 - PROBABILITIES[case]) / 7) ** 0.5 + 1e-9
    (metric,) = [m for m in run["metrics"] if m["criterion"] == "answer_correct" and m["slice"] is None]
    flaky = sum(1 for case in PROBABILITIES if len(set(_draws(case, 7))) > 1)
    assert (metric["observed"], metric["samples"], metric["repeats"], metric["flaky"]) == (6, 42, 7, flaky)
    assert metric["estimate"] == pytest.approx(sum(rates.values()) / 6)
    assert metric["method"].startswith("Gaffke")  # over the six per-case rates

    # The flakiest cases, by query: one row per case and criterion over its samples.
    code, out, err = run_cli("query", "SELECT case_id, samples, mean, flaky FROM case_samples WHERE run_id = "
                             f"'{run['run_id']}' AND criterion = 'answer_correct' ORDER BY case_id",
                             "--project", str(project), "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == [{"case_id": case, "samples": 7, "mean": pytest.approx(rates[case]),
                                "flaky": len(set(_draws(case, 7))) > 1} for case in sorted(PROBABILITIES)]  # fmt: skip

    code, out, err = run_cli("inspect", run["run_id"], "--project", str(project))
    assert code == 0, err
    assert out.startswith(f"Run {run['run_id']} · 6 cases · 42 samples\n")
    assert "high_2 (repeat 7): answer_correct pass" in out

    # The plan answers in cases of 7 repeats, and says where the variance lies.
    policy = project / "compare.yaml"
    policy.write_text("rules:\n  - {name: not-worse, metric: answer_correct, kind: non-inferiority, margin: 10.0}\n",
                      encoding="utf-8")  # fmt: skip
    code, out, err = run_cli("plan", "--policy", str(policy), "--baseline", run["run_id"], "--project", str(project),
                             "--json")  # fmt: skip
    assert code == 0, err
    (plan,) = json.loads(out)
    means = list(rates.values())
    within = sum(_variance(_draws(case, 7)) for case in PROBABILITIES) / 6
    assert (plan["repeats"], plan["baseline_observed"]) == (7, 6)
    assert plan["within_share"] == pytest.approx(within / (within + max(0.0, _variance(means) - within / 7)))
    assert plan["pass_fail"] is False  # the gate pairs case means: a score, not pass/fail
    # Six cases: no number of repeats narrows the interval to the margin, and the plan says so.
    assert (plan["stable_from"], plan["stable_verdict"]) == ("baseline", "INSUFFICIENT_EVIDENCE")
    code, out, err = run_cli("plan", "--policy", str(policy), "--baseline", run["run_id"], "--project", str(project))
    assert code == 0, err
    assert "cases of 7 repeats each: " in out and "per generation, one more case lowers the variance" in out
    assert "as INSUFFICIENT_EVIDENCE" in out and "this gate needs more cases, not repeats" in out

    code, out, err = run_cli("run", str(project), "--repeats", "7")
    assert code == 0, err
    assert f"Flaky: {flaky} of 6 cases disagree across 7 repeats (answer_correct)" in out
    assert "6 cases (42 samples) · 0 missing · 0 excluded" in out
    assert "flaky" in out  # the slice


def test_a_deterministic_system_is_never_repeated(run_cli, tmp_path):
    project = _project(tmp_path, extra="  deterministic: true\n")
    code, out, err = run_cli("run", str(project), "--json")
    assert code == 0, err
    assert _calls(project) == dict.fromkeys(PROBABILITIES, 1)
    assert "repeats" not in json.loads(out)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("repeats: 0", "field 'repeats'"),
        ("repeats: -2", "field 'repeats'"),
        ("repeats: 2.5", "field 'repeats'"),
        ("judge_repeats: 3", "judge_repeats: 3 but no evaluator is an LLM judge"),
    ],
)
def test_bad_repeats_are_one_line_naming_the_setting(run_cli, tmp_path, setting, message):
    project = _project(tmp_path)
    config = project / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("repeats: 5", setting), encoding="utf-8")
    code, out, err = run_cli("run", str(project))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err and "oloproof.yaml" in err
    assert not (project / ".oloproof").exists()


def test_repeats_on_the_command_line_must_be_positive(run_cli, tmp_path):
    project = _project(tmp_path)
    code, out, err = run_cli("run", str(project), "--repeats", "0")
    assert (code, out) == (2, "")
    assert err == "oloproof: error: field '--repeats': --repeats must be at least 1, got 0\n"
