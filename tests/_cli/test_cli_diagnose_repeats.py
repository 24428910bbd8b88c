"""Diagnosing a run with repeats: each re-execution samples a case as often as the run,
UNSTABLE by a stated test, recovery only in every repeat, and the same labels under fresh draws."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# A RAG system whose generator answers right with a probability that depends on whether the
# relevant passage ("rel") is in its context, drawn from a seeded sequence per case; the seed
# ($SAMPLED_RAG_SEED) is read at call time so a test can draw afresh.
SYSTEM = '''
import os
import random
import threading
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

_LOCK = threading.Lock()
_CALLS = {}
_LOG = Path(__file__).with_name("generate.log")


@rag_system(name="sampled-rag", version="1", depth=6, top_k=2, token_budget=100, index_version="kb-1")
class SampledRag:
    def retrieve(self, input, depth):
        ranked = input["ranking"][:depth]
        return Retrieval(query=input["case"], depth=depth, candidates=tuple(
            Passage(doc_id=doc, score=float(len(ranked) - i), text="passage " + doc) for i, doc in enumerate(ranked)))

    def generate(self, input, context):
        with _LOCK:
            n = _CALLS[input["case"]] = _CALLS.get(input["case"], -1) + 1
            with _LOG.open("a", encoding="utf-8") as log:
                log.write(input["case"] + "\\n")
        p = input["p_with"] if any(passage.doc_id == "rel" for passage in context) else input["p_without"]
        if n < input.get("fail_first", 0):
            p = 0.0
        seed = os.environ.get("SAMPLED_RAG_SEED", "0")
        return {"answer": "yes" if random.Random(f"{seed}:{input['case']}:{n}").random() < p else "no"}

    def count_tokens(self, passage):
        return 1
'''

GOLD = [{"doc_id": "rel", "text": "passage rel"}]
CASES = {
    # case: (ranking, p with "rel" in the context, p without, calls that fail first)
    "miss": (["f1", "f2", "f3"], 1.0, 0.0, 0),
    "ranked": (["f1", "f2", "f3", "rel"], 1.0, 0.0, 0),
    "generation": (["rel", "f1"], 0.0, 0.0, 0),
    "partial": (["f1", "f2"], 0.6, 0.0, 0),
    "unstable": (["f1"], 1.0, 1.0, 5),  # fails its five repeats in the run, passes ever after
    "passes": (["rel"], 1.0, 1.0, 0),
}


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "sampled"
    project.mkdir()
    (project / "sampled_app.py").write_text(SYSTEM, encoding="utf-8")
    (project / "cases.jsonl").write_text("".join(json.dumps({
        "id": case, "input": {"case": case, "ranking": ranking, "p_with": p_with, "p_without": p_without,
                              "fail_first": fail_first},
        "expected": {"answer": "yes", "relevant": [{"doc_id": "rel"}], "gold_context": GOLD}}) + "\n"
        for case, (ranking, p_with, p_without, fail_first) in CASES.items()), encoding="utf-8")  # fmt: skip
    (project / "oloproof.yaml").write_text(
        "system:\n  rag:\n    object: sampled_app:SampledRag\n    depth: 6\n    top_k: 2\n    token_budget: 100\n"
        "    index_version: kb-1\ndataset: cases.jsonl\n"
        "evaluators:\n  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}\n"
        "repeats: 5\nmax_concurrency: 4\n", encoding="utf-8")  # fmt: skip
    return project


def _generations(project: Path) -> dict[str, int]:
    lines = (project / "generate.log").read_text(encoding="utf-8").split()
    return {case: lines.count(case) for case in CASES}


def _diagnose(run_cli, project: Path, run_id: str, *extra: str) -> dict:
    code, out, err = run_cli("diagnose", run_id, "--intervention", "gold-context", "--criterion", "answer_correct",
                             "--project", str(project), "--json", *extra)  # fmt: skip
    assert code == 0, err
    return json.loads(out)


def test_a_diagnosis_with_repeats_labels_by_every_repeat_and_again_under_fresh_draws(run_cli, tmp_path, monkeypatch):
    project = _project(tmp_path)
    code, out, err = run_cli("run", str(project), "--json")
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    before = _generations(project)

    first = _diagnose(run_cli, project, run_id)
    labels = {case["case_id"]: case for case in first["cases"]}
    assert "passes" not in labels  # passed in every repeat: not a failure
    assert (labels["miss"]["label"], labels["ranked"]["label"]) == ("RETRIEVAL_MISS", "RANKED_OUT")
    assert labels["generation"]["label"] == "GENERATION_FAILURE"
    assert labels["unstable"]["label"] == "UNSTABLE"
    assert labels["partial"]["label"] == "PARTIAL_RECOVERY"
    assert {key: labels["miss"][key] for key in ("repeats", "original_passes", "control_passes",
                                                 "intervention_passes")} == {
        "repeats": 5, "original_passes": 0, "control_passes": 0, "intervention_passes": 5}
    assert (labels["unstable"]["original_passes"], labels["unstable"]["control_passes"]) == (0, 5)
    assert 0 < labels["partial"]["intervention_passes"] < 5
    assert first["recovered"] == 2  # miss and ranked: recovered in every repeat
    assert first["implicated"] == {"factor": "top-k cut-off", "count": 1, "among": 2}
    # Both re-executions (gold context, control) sampled every selected case five times.
    after = _generations(project)
    assert {case: after[case] - before[case] for case in labels} == dict.fromkeys(labels, 10)

    # The same request is recalled; a fresh draw re-executes and labels the diagnosed cases alike.
    assert _diagnose(run_cli, project, run_id)["diagnosis_id"] == first["diagnosis_id"]
    assert _generations(project) == after
    monkeypatch.setenv("SAMPLED_RAG_SEED", "fresh")
    second = _diagnose(run_cli, project, run_id, "--resample", "1")
    assert second["diagnosis_id"] != first["diagnosis_id"]
    again = {case["case_id"]: case for case in second["cases"]}
    diagnosed = [c for c in labels if labels[c]["label"] not in ("UNSTABLE", "PARTIAL_RECOVERY")
                 and again[c]["label"] not in ("UNSTABLE", "PARTIAL_RECOVERY")]  # fmt: skip
    assert sorted(diagnosed) == ["generation", "miss", "ranked"]
    assert {c: again[c]["label"] for c in diagnosed} == {c: labels[c]["label"] for c in diagnosed}

    code, out, err = run_cli("diagnose", run_id, "--intervention", "gold-context", "--criterion", "answer_correct",
                             "--project", str(project))  # fmt: skip
    assert code == 0, err
    assert "Recovered under gold context: 2 of 5 (in every one of 5 repeats)" in out
    assert "PARTIAL_RECOVERY: 1 of 5, recovered in some repeats only; not diagnosed" in out
    code, out, err = run_cli("inspect", first["diagnosis_id"], "--project", str(project))
    assert code == 0, err
    assert "miss: RETRIEVAL_MISS" in out and "recovered in 5 of 5 repeats with the gold context" in out


def test_a_replay_with_repeats_recovers_only_in_every_repeat(run_cli, tmp_path):
    project = _project(tmp_path)
    code, out, err = run_cli("run", str(project), "--json")
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    code, out, err = run_cli("diagnose", run_id, "--intervention", "top-k", "--top-k", "4", "--criterion",
                             "answer_correct", "--project", str(project), "--json")  # fmt: skip
    assert code == 0, err
    cases = {case["case_id"]: case for case in json.loads(out)["cases"]}
    assert cases["ranked"]["intervention_recovered"] is True
    assert cases["ranked"]["replay_intervention_passes"] == 5
    assert not any(cases[c]["intervention_recovered"] for c in ("miss", "generation", "partial"))


@pytest.mark.parametrize("value", ["-1"])
def test_a_negative_resample_is_one_line(run_cli, tmp_path, value):
    project = _project(tmp_path)
    code, _, err = run_cli("diagnose", "run_01ARZ3NDEKTSV4RRFFQ69G5FAV", "--intervention", "gold-context",
                             "--criterion", "answer_correct", "--project", str(project), "--resample", value)
    assert code == 2
    assert err.strip().count("\n") == 0 and "--resample must be 0 or more" in err
