"""Release gates that decide: a clearly better candidate passes, a clearly worse one fails.

The project is tests/_cli/compare_gate_project: a deterministic RAG system in two
versions (``gate_app:Baseline`` v1 and ``gate_app:Candidate`` v2) over 80 generated
cases. On those cases answer_correct goes from 60% to 85% (with one regression in
every 20 cases) and citations_valid from 85% to 100%. 80 pairs is about the fewest
at which the example's policy decides both rules with room to spare: at 60 pairs the
reversed answer_correct interval ends at -5.3 points, a hair under its 5-point margin.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from inprocess import invoke_cli as _invoke
from projects import copy_project

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "compare_gate_project"
EXAMPLE_POLICY = HERE.parents[1] / "examples" / "support_rag" / "compare.yaml"
CASES = 80


def write_cases(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for n in range(count):
            handle.write(json.dumps({
                "id": f"case-{n:03d}",
                "input": {"question": f"Is the answer to question {n} yes?", "n": n},
                "expected": {"answer": "yes"},
            }) + "\n")


@pytest.fixture(scope="module")
def gate(prefect_api, tmp_path_factory) -> dict[str, str]:
    """The project, its policy (a copy of the example's) and both runs' ids."""
    target = tmp_path_factory.mktemp("gate") / "project"
    copy_project(PROJECT, target)
    write_cases(target / "cases.jsonl", CASES)
    shutil.copy(EXAMPLE_POLICY, target / "compare.yaml")
    code, out, err = _invoke("run", str(target), "--json")
    assert code == 0, err
    baseline = json.loads(out)
    code, out, err = _invoke("run", str(target), "--json", "--set", "system.rag.object=gate_app:Candidate")
    assert code == 0, err
    candidate = json.loads(out)
    # The candidate's version comes from its decorator, so its generations are new.
    assert (baseline["system_version"], candidate["system_version"]) == ("v1", "v2")
    return {"dir": str(target), "policy": str(target / "compare.yaml"),
            "baseline": baseline["run_id"], "candidate": candidate["run_id"]}


def _metric_line(out: str, criterion: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(f"{criterion}: "))


def _interval(line: str) -> tuple[float, float, float]:
    match = re.search(r": ([+-]\d+\.\d) points \[([+-]\d+\.\d), ([+-]\d+\.\d)\]", line)
    assert match, line
    return float(match[1]), float(match[2]), float(match[3])


def test_a_clearly_better_candidate_passes_the_example_policy(run_cli, gate):
    code, out, err = run_cli("compare", gate["candidate"], gate["baseline"],
                             "--policy", gate["policy"], "--project", gate["dir"])
    assert code == 0, err
    lines = out.splitlines()
    assert re.fullmatch(
        rf"Comparison sha256:[0-9a-f]{{64}} of {gate['candidate']} against {gate['baseline']} · {CASES} paired cases",
        lines[0],
    )
    answers = _metric_line(out, "answer_correct")
    citations = _metric_line(out, "citations_valid")
    assert answers.endswith(f"· {CASES} paired · 0 missing · 0 excluded")
    assert citations.endswith(f"· {CASES} paired · 0 missing · 0 excluded")
    difference, low, high = _interval(answers)
    assert difference == 25.0 and -5.0 < low < 25.0 < high
    difference, low, high = _interval(citations)
    assert difference == 15.0 and -2.0 < low < 15.0 < high
    assert lines[-4:] == [
        "Decisions",
        "  answers-not-worse  answer_correct  non-inferiority, margin 5.0 points  PASS  interval_above_margin",
        "  citations-not-worse  citations_valid  non-inferiority, margin 2.0 points  PASS  interval_above_margin",
        "Gate: PASS (exit 0)",
    ]


def test_a_clearly_worse_candidate_fails_and_blocks(run_cli, gate):
    # The same two runs the other way round: the candidate is now 25 and 15 points worse.
    code, out, err = run_cli("compare", gate["baseline"], gate["candidate"],
                             "--policy", gate["policy"], "--project", gate["dir"])
    assert code == 3, err
    difference, low, high = _interval(_metric_line(out, "answer_correct"))
    assert difference == -25.0 and low < -25.0 < high < -5.0
    difference, low, high = _interval(_metric_line(out, "citations_valid"))
    assert difference == -15.0 and low < -15.0 < high < -2.0
    assert out.splitlines()[-4:] == [
        "Decisions",
        "  answers-not-worse  answer_correct  non-inferiority, margin 5.0 points  FAIL  interval_below_margin",
        "  citations-not-worse  citations_valid  non-inferiority, margin 2.0 points  FAIL  interval_below_margin",
        "Gate: BLOCK (exit 3)",
    ]


def test_superiority_and_equivalence_rules_end_to_end(run_cli, gate, tmp_path):
    policy = tmp_path / "kinds.yaml"
    policy.write_text(
        "rules:\n"
        "  - {name: answers-better, metric: answer_correct, kind: superiority, margin: 5}\n"
        "  - {name: answers-much-better, metric: answer_correct, kind: superiority, margin: 30}\n"
        "  - {name: citations-same, metric: citations_valid, kind: equivalence, margin: 2}\n"
        "  - {name: citations-roughly-same, metric: citations_valid, kind: equivalence, margin: 50}\n",
        encoding="utf-8",
    )
    code, out, err = run_cli("compare", gate["candidate"], gate["baseline"],
                             "--policy", str(policy), "--project", gate["dir"], "--json")
    assert code == 3, err
    record = json.loads(out)
    assert record["gate"] == "BLOCK"
    verdicts = {d["rule"]: (d["verdict"], d["reason"]) for d in record["decisions"]}
    assert verdicts == {
        "answers-better": ("PASS", "interval_above_margin"),
        # 25 points better, but 80 pairs cannot show more than 30.
        "answers-much-better": ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin"),
        "citations-same": ("FAIL", "interval_outside_margin"),
        "citations-roughly-same": ("PASS", "interval_within_margin"),
    }


def test_gate_intervals_are_recorded_as_json(run_cli, gate):
    code, out, err = run_cli("compare", gate["candidate"], gate["baseline"],
                             "--policy", gate["policy"], "--project", gate["dir"], "--json")
    assert code == 0, err
    record = json.loads(out)
    assert record["gate"] == "PASS"
    metrics = {m["criterion"]: m for m in record["metrics"]}
    assert set(metrics) == {"answer_correct", "citations_valid"}
    for criterion, difference in (("answer_correct", 25.0), ("citations_valid", 15.0)):
        m = metrics[criterion]
        assert m["difference"] == pytest.approx(difference)
        assert m["low"] < difference < m["high"]
        assert (m["paired"], m["missing"], m["excluded"], m["unpaired"]) == (CASES, 0, 0, 0)
    for decision in record["decisions"]:
        assert decision["paired"] == CASES and decision["low"] > -decision["margin"]
