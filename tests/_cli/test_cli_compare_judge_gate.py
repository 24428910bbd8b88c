"""An LLM-judge metric gates only once its judge has a passing validation record.

The runs are written into a store by hand (manifest, cases and judgments in the
store's own schemas), with an evaluator entry marked ``"llm_judge": true`` and the
judge's id, and compared through the CLI (``--results``). The judge is validated by
``oloproof judge validate`` on a third run of the same judge, with labels that agree
with it (or that do not): a validation is the judge's, whichever run it was made on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CASES = 40
JUDGE_HASH = "grounded-judge-spec-1"
JUDGE_ID = "0f" * 32
VALIDATED_ON = "run_01JUDGEVALIDATION00000000"


def _write_run(store, run_id: str, grounded: float, correct: float) -> None:
    from oloproof.store import CASES as CASES_SCHEMA
    from oloproof.store import JUDGMENTS, run_manifest, run_table

    evaluators = [
        {"criterion": "grounded", "kind": "proportion", "llm_judge": True, "spec_hash": JUDGE_HASH,
         "spec": {"type": "llm_judge"}, "judge_id": JUDGE_ID, "judge": {"type": "groundedness", "threshold": 3}},
        {"criterion": "answer_correct", "kind": "proportion", "llm_judge": False, "spec_hash": "contains-1",
         "spec": {"type": "contains"}},
    ]
    case_ids = [f"case-{i:03d}" for i in range(CASES)]
    store.write_table(run_table(run_id, "cases"),
                      [{"run_id": run_id, "case_id": c, "status": "ok", "metadata": {}} for c in case_ids],
                      CASES_SCHEMA)
    store.write_table(run_table(run_id, "judgments"), [
        {"run_id": run_id, "case_id": c, "criterion": criterion, "spec_hash": spec, "status": "observed",
         "value": value, "passed": bool(value)}
        for c in case_ids
        for criterion, spec, value in (("grounded", JUDGE_HASH, grounded), ("answer_correct", "contains-1", correct))
    ], JUDGMENTS)
    from judged_runs import complete_manifest

    store.write_json(run_manifest(run_id), complete_manifest(
        run_id, dataset_sha256="same-dataset", case_count=CASES, evaluators=evaluators,
    ))


@pytest.fixture
def judged_store(tmp_path, prefect_api):
    from oloproof.store import ResultsStore

    url = str(tmp_path / "store")
    store = ResultsStore(url)
    _write_run(store, "run_01JUDGEBASELINE0000000000", grounded=0.0, correct=0.0)
    _write_run(store, "run_01JUDGECANDIDATE000000000", grounded=1.0, correct=1.0)
    policy = tmp_path / "compare.yaml"
    policy.write_text(
        "rules:\n"
        "  - {name: grounded-not-worse, metric: grounded, kind: non-inferiority, margin: 2}\n"
        "  - {name: answers-not-worse, metric: answer_correct, kind: non-inferiority, margin: 2}\n",
        encoding="utf-8",
    )
    return {"store": store, "url": url, "policy": str(policy)}


def _compare(run_cli, judged_store) -> tuple[int, str]:
    code, out, err = run_cli("compare", "run_01JUDGECANDIDATE000000000", "run_01JUDGEBASELINE0000000000",
                             "--policy", judged_store["policy"], "--results", judged_store["url"])
    assert code in (0, 3), err
    return code, out


def _validate(run_cli, judged_store, *, agree: bool = True) -> int:
    """``oloproof judge validate`` on a third run of the judge, with 60 given labels."""
    from judged_runs import judged_run, write_run

    scores = [5, 1, 4, 2] * 15
    run = judged_run(VALIDATED_ON, scores, criterion="grounded", judge_id=JUDGE_ID)
    write_run(judged_store["store"], run)
    labels = judged_store["policy"].replace("compare.yaml", "labels.jsonl")
    with open(labels, "w", encoding="utf-8") as out:
        for case, score in zip(run["cases"], scores):
            verdict = "pass" if (score >= 3) == agree else "fail"
            out.write(json.dumps({"case_id": case["case_id"], "criterion": "grounded", "label": verdict}) + "\n")
    code, out, err = run_cli("judge", "validate", "--labels", labels, "--run", VALIDATED_ON, "--criterion", "grounded",
                             "--results", judged_store["url"])  # fmt: skip
    assert code in (0, 3), err
    return code


def test_an_unvalidated_judge_blocks_the_gate(run_cli, judged_store):
    # A failed validation of the judge does not count.
    assert _validate(run_cli, judged_store, agree=False) == 3
    code, out = _compare(run_cli, judged_store)
    assert code == 3
    assert out.splitlines()[-3:] == [
        "  grounded-not-worse  grounded  non-inferiority, margin 2.0 points  INSUFFICIENT_EVIDENCE  judge_not_validated",
        "  answers-not-worse  answer_correct  non-inferiority, margin 2.0 points  PASS  interval_above_margin",
        "Gate: BLOCK (exit 3)",
    ]


def test_a_validated_judge_gates(run_cli, judged_store):
    assert _validate(run_cli, judged_store) == 0
    code, out = _compare(run_cli, judged_store)
    assert code == 0, out
    assert out.splitlines()[-3:] == [
        "  grounded-not-worse  grounded  non-inferiority, margin 2.0 points  PASS  interval_above_margin",
        "  answers-not-worse  answer_correct  non-inferiority, margin 2.0 points  PASS  interval_above_margin",
        "Gate: PASS (exit 0)",
    ]


def test_validating_the_judge_later_changes_the_decision(run_cli, judged_store):
    code, _ = _compare(run_cli, judged_store)
    assert code == 3
    assert _validate(run_cli, judged_store) == 0
    code, out = _compare(run_cli, judged_store)
    assert "judge_not_validated" not in out
    assert code == 0
    assert out.splitlines()[-1] == "Gate: PASS (exit 0)"


def test_a_stricter_policy_is_not_met_by_a_laxer_validation(run_cli, judged_store, tmp_path):
    assert _validate(run_cli, judged_store) == 0  # 60 labels: the defaults' 50 are met
    strict = tmp_path / "strict.yaml"
    strict.write_text(Path(judged_store["policy"]).read_text() + "judges: {min_labels: 100}\n", encoding="utf-8")
    code, out = _compare(run_cli, {**judged_store, "policy": str(strict)})
    assert code == 3
    assert "judge_not_validated" in out
