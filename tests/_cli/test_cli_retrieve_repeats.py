"""``retrieve_repeats: true``: each repeat retrieves afresh, cached on its own; by default
a case is retrieved once and its repeats generate from that one context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# A retriever that samples: the relevant passage ("rel") comes first or last, by a seeded
# draw per call; the generator answers right when "rel" is in its context (top_k 1).
SYSTEM = '''
import random
import threading
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

_LOCK = threading.Lock()
_CALLS = {}
_LOG = Path(__file__).with_name("calls.log")


def _count(stage, case):
    with _LOCK:
        n = _CALLS[stage, case] = _CALLS.get((stage, case), -1) + 1
        with _LOG.open("a", encoding="utf-8") as log:
            log.write(f"{stage} {case}\\n")
    return n


@rag_system(name="sampled-retriever", version="1", depth=3, top_k=1, token_budget=100, index_version="kb-1")
class SampledRetriever:
    def retrieve(self, input, depth):
        n = _count("retrieve", input["case"])
        ranked = ["rel", "f1", "f2"] if random.Random(f"{input['case']}:{n}").random() < 0.5 else ["f1", "f2", "rel"]
        return Retrieval(query=input["case"], depth=depth, candidates=tuple(
            Passage(doc_id=doc, score=float(3 - i), text="passage " + doc) for i, doc in enumerate(ranked)))

    def generate(self, input, context):
        _count("generate", input["case"])
        return {"answer": "yes" if any(p.doc_id == "rel" for p in context) else "no"}

    def count_tokens(self, passage):
        return 1
'''
CASES = ("a", "b", "c")


def _project(tmp_path: Path, extra: str) -> Path:
    project = tmp_path / "sampled"
    project.mkdir(exist_ok=True)
    (project / "sampled_app.py").write_text(SYSTEM, encoding="utf-8")
    (project / "cases.jsonl").write_text("".join(
        json.dumps({"id": case, "input": {"case": case},
                    "expected": {"answer": "yes", "relevant": [{"doc_id": "rel"}]}}) + "\n"
        for case in CASES), encoding="utf-8")  # fmt: skip
    (project / "oloproof.yaml").write_text(
        "system:\n  rag:\n    object: sampled_app:SampledRetriever\n    depth: 3\n    top_k: 1\n"
        "    token_budget: 100\n    index_version: kb-1\ndataset: cases.jsonl\n"
        "evaluators:\n  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}\n"
        "  - {type: recall, k: 1}\n" + extra, encoding="utf-8")  # fmt: skip
    return project


def _calls(project: Path, stage: str) -> int:
    return sum(1 for line in (project / "calls.log").read_text(encoding="utf-8").splitlines()
               if line.startswith(stage + " "))  # fmt: skip


def _table(project: Path, run_id: str, table: str) -> list[dict]:
    from oloproof.store import ResultsStore, run_table

    return ResultsStore(str(project / ".oloproof" / "results")).read_table(run_table(run_id, table))


def test_each_repeat_retrieves_afresh_and_each_retrieval_is_cached_on_its_own(run_cli, tmp_path):
    project = _project(tmp_path, "repeats: 4\nretrieve_repeats: true\n")
    code, out, err = run_cli("run", str(project), "--json")
    assert code == 0, err
    run = json.loads(out)
    assert (_calls(project, "retrieve"), _calls(project, "generate")) == (12, 12)
    assert run["cache"]["retrieve"] == {"hit": 0, "miss": 12}
    assert run["retrieve_repeats"] is True
    retrievals = _table(project, run["run_id"], "retrievals")
    assert sorted({(row["case_id"], row["repeat"]) for row in retrievals}) == [
        (case, r) for case in CASES for r in range(4)]
    # Each repeat's row, its retrieval's facts and its verdicts agree with its own draw.
    cases = _table(project, run["run_id"], "cases")
    first = {(row["case_id"], row["repeat"]): row["doc_id"] for row in retrievals if row["position"] == 1}
    for row in cases:
        expected_position = 1 if first[row["case_id"], row["repeat"]] == "rel" else 3
        assert row["best_relevant_position"] == expected_position
    verdicts = {(row["case_id"], row["repeat"]): row["passed"] for row in _table(project, run["run_id"], "judgments")
                if row["criterion"] == "answer_correct"}  # fmt: skip
    assert verdicts == {key: doc == "rel" for key, doc in first.items()}

    # Again: every retrieval and generation is cached.
    code, out, err = run_cli("run", str(project), "--json")
    assert code == 0, err
    assert (_calls(project, "retrieve"), _calls(project, "generate")) == (12, 12)

    # Without retrieve_repeats the repeats share repeat 0's retrieval: nothing is retrieved
    # again, and repeats 1-3 generate from that context (their own identities).
    (project / "oloproof.yaml").write_text((project / "oloproof.yaml").read_text(encoding="utf-8").replace(
        "retrieve_repeats: true\n", ""), encoding="utf-8")  # fmt: skip
    code, out, err = run_cli("run", str(project), "--json")
    assert code == 0, err
    shared = json.loads(out)
    assert _calls(project, "retrieve") == 12
    assert "retrieve_repeats" not in shared
    rows = _table(project, shared["run_id"], "retrievals")
    assert {row["repeat"] for row in rows} == {0}
    positions = {row["case_id"]: row["best_relevant_position"] for row in _table(project, shared["run_id"], "cases")}
    assert all(row["best_relevant_position"] == positions[row["case_id"]]
               for row in _table(project, shared["run_id"], "cases"))  # fmt: skip

    # A run with repeats whose retrieval was repeated is not diagnosed: its labels read one retrieval.
    code, _, err = run_cli("diagnose", run["run_id"], "--intervention", "gold-context", "--criterion",
                           "answer_correct", "--project", str(project))  # fmt: skip
    assert code == 2 and "retrieved each case afresh in every repeat" in err


@pytest.mark.parametrize(("extra", "message"), [
    ("repeats: 3\nretrieve_repeats: yes please\n", "retrieve_repeats"),
])  # fmt: skip
def test_a_retrieve_repeats_that_is_not_true_or_false_is_one_line(run_cli, tmp_path, extra, message):
    project = _project(tmp_path, extra)
    code, _, err = run_cli("run", str(project))
    assert code == 2
    assert err.strip().count("\n") == 0 and message in err and "oloproof.yaml" in err


def test_retrieve_repeats_on_a_system_without_retrieval_is_one_line(run_cli, tmp_path):
    project = tmp_path / "plain"
    project.mkdir()
    (project / "plain_app.py").write_text(
        "from oloproof import system\n\n\n@system(name='plain', version='1')\ndef answer(input):\n"
        "    return {'answer': 'yes'}\n", encoding="utf-8")  # fmt: skip
    (project / "cases.jsonl").write_text('{"id": "a", "input": {}, "expected": {"answer": "yes"}}\n', encoding="utf-8")
    (project / "oloproof.yaml").write_text(
        "system:\n  object: plain_app:answer\ndataset: cases.jsonl\nrepeats: 2\nretrieve_repeats: true\n"
        "evaluators:\n  - {type: contains, criterion: ok, field: answer, expected_field: answer}\n",
        encoding="utf-8")  # fmt: skip
    code, _, err = run_cli("run", str(project))
    assert code == 2
    assert err.strip().count("\n") == 0 and "retrieve_repeats: true but the system is a plain system" in err
