"""The walkthrough's "Running the experiment": compare the token-budget run with the baseline.

The printed lines of ../shared/spec/walkthrough.md are the contract, except the
interval's half-width: the page prints 33.6 points on all five lines; what is
required here is that 13 agreeing pairs leave a wide interval, never a zero-width
one (22.9 points for the pass/fail metrics, the score interval's for ndcg_at_6).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from inprocess import invoke_cli as _invoke
from projects import copy_project

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_rag"
METRICS = ("answer_correct", "hit_rate_at_2", "recall_at_2", "ndcg_at_6", "citations_valid")
DECISIONS = [
    "Decisions",
    "  answers-not-worse  answer_correct  non-inferiority, margin 5.0 points  INSUFFICIENT_EVIDENCE  interval_overlaps_margin",
    "  citations-not-worse  citations_valid  non-inferiority, margin 2.0 points  INSUFFICIENT_EVIDENCE  interval_overlaps_margin",
    "Gate: BLOCK (exit 3)",
]


@pytest.fixture(scope="module")
def runs(prefect_api, tmp_path_factory) -> dict[str, str]:
    """A private copy of the example with the baseline and the token-budget run."""
    target = tmp_path_factory.mktemp("compare-example") / "support_rag"
    copy_project(EXAMPLE, target)
    code, out, err = _invoke("run", str(target), "--json")
    assert code == 0, err
    baseline = json.loads(out)["run_id"]
    code, out, err = _invoke("run", str(target), "--json", "--set", "system.rag.token_budget=120")
    assert code == 0, err
    candidate = json.loads(out)["run_id"]
    return {"dir": str(target), "policy": str(target / "compare.yaml"),
            "baseline": baseline, "candidate": candidate}


def _compare(run_cli, runs, *extra: str) -> tuple[int, str, str]:
    return run_cli("compare", runs["candidate"], runs["baseline"], *extra, "--project", runs["dir"])


def _comparisons(runs) -> dict[str, int]:
    """Every file under the store's comparisons/ with its modification time."""
    root = Path(runs["dir"]) / ".oloproof" / "results" / "comparisons"
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_compare_prints_the_page(run_cli, runs):
    code, out, err = _compare(run_cli, runs, "--policy", runs["policy"])
    assert code == 3, err
    assert err == ""
    lines = out.splitlines()
    assert re.fullmatch(
        rf"Comparison sha256:[0-9a-f]{{64}} of {runs['candidate']} against {runs['baseline']} · 13 paired cases",
        lines[0],
    ), lines[0]

    metric_lines = lines[1:6]
    widths = {}
    for criterion, line in zip(METRICS, metric_lines, strict=True):
        match = re.fullmatch(
            rf"{criterion}: \+0\.0 points \[-(\d+\.\d), \+(\d+\.\d)\] · 13 paired · 0 missing · 0 excluded", line
        )
        assert match, line
        assert match[1] == match[2]
        widths[criterion] = float(match[1])
    # Agreement on all 13 pairs is weak evidence: the interval stays wide. The
    # pass/fail metrics get the paired pass/fail interval, +-z^2/(13 + z^2) =
    # +-22.8 points rounded outward; ndcg_at_6 (a score) gets the score interval.
    assert {widths[c] for c in METRICS if c != "ndcg_at_6"} == {22.9}
    assert 20.0 < widths["ndcg_at_6"] < 40.0
    assert not any(line.startswith(METRICS) for line in lines[6:])

    probes = lines[6:-4]
    assert probes, "the example's slices give exploratory probe lines"
    assert all(line.startswith("Probe (exploratory) ") for line in probes), probes
    assert {line.split(" · ")[0].split()[-1].split("=")[0] for line in probes} == {
        "metadata.topic", "relevant_position", "context_truncated",
    }
    assert lines[-4:] == DECISIONS


def test_the_same_comparison_twice_has_one_id_and_writes_nothing_new(run_cli, runs):
    code, first, _ = _compare(run_cli, runs, "--policy", runs["policy"])
    assert code == 3
    before = _comparisons(runs)
    assert before
    code, second, _ = _compare(run_cli, runs, "--policy", runs["policy"])
    assert code == 3
    assert second == first
    assert _comparisons(runs) == before


def test_inspect_and_query_read_the_decisions_back(run_cli, runs):
    code, out, _ = _compare(run_cli, runs, "--policy", runs["policy"], "--json")
    assert code == 3
    record = json.loads(out)
    comparison_id = record["comparison_id"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", comparison_id)
    assert record["gate"] == "BLOCK"

    code, out, err = run_cli("inspect", comparison_id, "--project", runs["dir"])
    assert code == 0, err
    assert out.splitlines() == DECISIONS

    code, out, err = run_cli("query", "SELECT rule, verdict, reason FROM decisions WHERE comparison_id = $1 ORDER BY rule",
                             "--param", comparison_id, "--project", runs["dir"], "--json")
    assert code == 0, err
    assert json.loads(out) == [
        {"rule": "answers-not-worse", "verdict": "INSUFFICIENT_EVIDENCE", "reason": "interval_overlaps_margin"},
        {"rule": "citations-not-worse", "verdict": "INSUFFICIENT_EVIDENCE", "reason": "interval_overlaps_margin"},
    ]
    code, out, err = run_cli("query", "SELECT rule, verdict, reason FROM decisions", "--project", runs["dir"])
    assert code == 0, err
    body = sorted(out.splitlines()[1:])
    assert out.splitlines()[0] == "rule\tverdict\treason"
    assert set(body) == {
        "answers-not-worse\tINSUFFICIENT_EVIDENCE\tinterval_overlaps_margin",
        "citations-not-worse\tINSUFFICIENT_EVIDENCE\tinterval_overlaps_margin",
    }


def test_without_a_policy_nothing_is_gated(run_cli, runs):
    code, out, err = _compare(run_cli, runs)
    assert code == 0, err
    lines = out.splitlines()
    assert "Decisions" not in lines
    assert lines[-1] == "Gate: none (no policy given)"
    assert [line.split(":")[0] for line in lines[1:6]] == list(METRICS)
    code, out, err = _compare(run_cli, runs, "--json")
    assert code == 0, err
    record = json.loads(out)
    assert record["gate"] is None and record["decisions"] == [] and record["policy"] is None
    assert record["paired_cases"] == 13
    code, gated, _ = _compare(run_cli, runs, "--policy", runs["policy"], "--json")
    assert json.loads(gated)["comparison_id"] != record["comparison_id"]


def test_plan_needs_more_pairs_than_the_example_has(run_cli, runs):
    code, out, err = run_cli("plan", "--policy", runs["policy"], "--baseline", runs["baseline"],
                             "--project", runs["dir"])
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 2
    for line, rule in zip(lines, ("answers-not-worse  answer_correct", "citations-not-worse  citations_valid"),
                          strict=True):
        assert line.startswith(rule + "  non-inferiority, margin ")
        match = re.search(r"about (\d+) paired cases", line)
        assert match, line
        assert int(match[1]) > 13
    code, out, err = run_cli("plan", "--policy", runs["policy"], "--baseline", runs["baseline"],
                             "--project", runs["dir"], "--json")
    assert code == 0, err
    plans = json.loads(out)
    assert [p["rule"] for p in plans] == ["answers-not-worse", "citations-not-worse"]
    assert all(p["required_pairs"] > 13 and p["baseline_observed"] == 13 for p in plans)


def test_plan_states_its_assumptions_and_measures_them_on_a_pilot(run_cli, runs):
    where = ("--policy", runs["policy"], "--baseline", runs["baseline"], "--project", runs["dir"])
    code, out, err = run_cli("plan", *where)
    assert code == 0, err
    answers = out.splitlines()[0]
    assert "for 80% power with the gate's interval (Tango score interval (1998) for paired pass/fail)" in answers
    assert "10.0% of cases discordant (assumed: pass --pilot RUN or --discordance" in answers
    assert answers.endswith("and a baseline pass rate of 69.2% (13 observed)")

    # The token-budget run as a pilot: none of its 13 pairs disagree, and at zero
    # discordance the interval clears a margin m once n > z^2 (1 - m) / m.
    code, out, err = run_cli("plan", *where, "--pilot", runs["candidate"], "--json")
    assert code == 0, err
    plans = json.loads(out)
    assert [(p["discordance"], p["discordance_source"], p["pilot_pairs"], p["pilot_discordant"]) for p in plans] \
        == [(0.0, "pilot", 13, 0)] * 2
    assert [p["required_pairs"] for p in plans] == [73, 189]

    code, out, err = run_cli("plan", *where, "--pilot", runs["candidate"], "--discordance", "0.2", "--power", "0.9")
    assert code == 0, err
    first = out.splitlines()[0]
    assert "for 90% power" in first and "20.0% of cases discordant (--discordance)" in first
    need = int(re.search(r"about (\d+) paired cases", first)[1])
    assert 700 < need < 1000

    code, out, err = run_cli("plan", *where, "--power", "80")
    assert code == 2 and "--power" in err
