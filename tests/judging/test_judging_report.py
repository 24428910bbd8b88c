"""The report's judge metrics with human labels: PPI++ beside the judge-only and
human-only rows, through the commands a user runs (``judge sample``, ``judge validate``,
``show``) on a store written by hand. No Prefect: these commands only read and write
the store."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from judged_runs import judged_run, write_run
from readme_blocks import read_blocks, shown_in

from oloproof import stats
from oloproof._cli.main import main

N_CASES, N_LABELS = 2000, 300
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def biased(tmp_path):
    """2,000 cases whose judge passes 35% of what people fail and fails 5% of what they pass."""
    from oloproof.store import ResultsStore

    rng = np.random.default_rng(7)
    truth = rng.random(N_CASES) < 0.7
    judge = np.where(truth, rng.random(N_CASES) >= 0.05, rng.random(N_CASES) < 0.35)
    run = judged_run("run_BIASED", [5 if j else 1 for j in judge])
    url = str(tmp_path / "store")
    write_run(ResultsStore(url), run)
    human = {case["case_id"]: bool(t) for case, t in zip(run["cases"], truth)}
    judged = {case["case_id"]: bool(j) for case, j in zip(run["cases"], judge)}
    return {"url": url, "run": run, "human": human, "judge": judged}


def _cli(capsys, *argv):
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ppi_rows_beside_the_judge_and_the_humans(biased, capsys, tmp_path):
    file = tmp_path / "sample.jsonl"
    code, out, err = _cli(capsys, "judge", "sample", "run_BIASED", "--criterion", "relevance", "--n", str(N_LABELS),
                          "--seed", "3", "--output", str(file), "--results", biased["url"])
    assert code == 0, err
    rows = [json.loads(line) for line in file.read_text().splitlines()]
    for row in rows:
        row["label"] = "pass" if biased["human"][row["case_id"]] else "fail"
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = _cli(capsys, "judge", "validate", "--labels", str(file), "--run", "run_BIASED",
                          "--criterion", "relevance", "--results", biased["url"])
    assert code in (0, 3), err

    code, out, err = _cli(capsys, "show", "run_BIASED", "--results", biased["url"], "--json")
    assert code == 0, err
    (entry,) = json.loads(out)["judge_estimates"]
    labelled = sorted(r["case_id"] for r in rows)
    rest = sorted(set(biased["judge"]) - set(labelled))
    expected = stats.ppi_mean_interval([float(biased["human"][c]) for c in labelled],
                                       [float(biased["judge"][c]) for c in labelled],
                                       [float(biased["judge"][c]) for c in rest])  # fmt: skip
    judge_row, human_row, ppi_row = entry["rows"]
    assert (entry["labelled"], entry["judged"], entry["fallback"]) == (N_LABELS, N_CASES, None)
    assert ppi_row["estimate"] == pytest.approx(expected.estimate) and ppi_row["low"] == pytest.approx(expected.interval.low)
    assert entry["lam"] == pytest.approx(expected.lam)
    # The judge alone overstates the pass rate: its interval misses the humans' rate over all cases.
    truth = sum(biased["human"].values()) / N_CASES
    assert judge_row["low"] > truth
    assert ppi_row["low"] <= truth <= ppi_row["high"]
    assert ppi_row["high"] - ppi_row["low"] < human_row["high"] - human_row["low"]

    code, out, err = _cli(capsys, "show", "run_BIASED", "--results", biased["url"])
    assert code == 0, err
    assert f"relevance (PPI, {N_LABELS} labels of {N_CASES:,})" in out
    assert "relevance (judge only)" in out and "relevance (humans only)" in out and "λ = " in out
    # The README shows this very output.
    (shown,) = [b for b in read_blocks(REPO / "README.md") if b.marker == f"output of tests/{Path(__file__).parent.name}/{Path(__file__).name}"]
    problem = shown_in(shown, out)
    assert problem is None, problem


def test_bad_labels_write_nothing(biased, capsys, tmp_path):
    from oloproof.store import ResultsStore

    store = ResultsStore(biased["url"])
    file = tmp_path / "labels.jsonl"
    file.write_text(json.dumps({"case_id": "c0001", "criterion": "relevance", "label": "pass"}) + "\n"
                    + json.dumps({"case_id": "c0001", "criterion": "relevance", "label": "fail"}) + "\n")
    code, _out, err = _cli(capsys, "judge", "validate", "--labels", str(file), "--run", "run_BIASED",
                           "--criterion", "relevance", "--results", biased["url"])
    assert code == 2
    assert err == (f"oloproof: error: {file}:2: field 'annotator': case 'c0001' is labelled twice by the "
                   "unnamed annotator (first on line 1)\n")
    assert store.list_paths("validations") == [] and store.list_paths("samples") == []
    code, _out, err = _cli(capsys, "judge", "validate", "--labels", str(file), "--run", "run_BIASED",
                           "--criterion", "nope", "--results", biased["url"])
    assert code == 2 and "has no criterion 'nope'" in err


def test_the_judge_commands_do_not_import_prefect(biased, tmp_path):
    # They only read and write the store: a labeller's loop must not wait for Prefect.
    import subprocess
    import sys

    file = tmp_path / "sample.jsonl"
    code = (
        "import sys; from oloproof._cli.main import main; "
        f"assert main(['judge', 'sample', 'run_BIASED', '--criterion', 'relevance', '--n', '5', "
        f"'--output', {str(file)!r}, '--results', {biased['url']!r}]) == 0; "
        f"assert main(['judge', 'validations', '--results', {biased['url']!r}]) == 0; "
        "assert not [m for m in sys.modules if m == 'prefect' or m.startswith('prefect.')]; print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("ok\n")
