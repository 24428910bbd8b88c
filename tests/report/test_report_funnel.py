"""The failure funnel: each step's count, and its losses named by a diagnosis's labels."""

from __future__ import annotations

from oloproof.report import failure_funnel, render_funnel


def _case(case_id, position, context=(), status="ok", relevant=("rel",), repeat=0):
    return {"case_id": case_id, "status": status, "repeat": repeat, "best_relevant_position": position,
            "context": [{"doc_id": d, "position": i + 1} for i, d in enumerate(context)],
            "expected": {"relevant": [{"doc_id": r} for r in relevant]} if relevant else {}}


def _verdict(case_id, passed, repeat=0, status="observed"):
    return {"case_id": case_id, "criterion": "answer_correct", "status": status, "passed": passed,
            "value": float(passed) if passed is not None else None, "repeat": repeat}


CASES = [
    _case("ok_1", 1, ["rel"]), _case("ok_2", 2, ["x", "rel"]),
    _case("miss", None, ["x"]),                      # never retrieved
    _case("ranked", 4, ["x", "y"]),                  # below top_k 2
    _case("dropped", 2, ["x"]),                      # within top_k, left out by the budget
    _case("generation", 1, ["rel"]),                 # in context, answered wrong
    _case("failed", None, status="missing"),         # its stages failed
    _case("unlabelled", None, ["x"], relevant=()),   # no relevance labels
]
VERDICTS = [_verdict("ok_1", True), _verdict("ok_2", True), _verdict("miss", False), _verdict("ranked", False),
            _verdict("dropped", False), _verdict("generation", False), _verdict("failed", None, status="missing"),
            _verdict("unlabelled", True)]


def test_each_step_keeps_the_cases_that_reached_it_and_names_what_it_lost():
    labels = {"miss": "RETRIEVAL_MISS", "ranked": "RANKED_OUT", "dropped": "CONTEXT_ASSEMBLY_LOSS",
              "generation": "GENERATION_FAILURE"}
    funnel = failure_funnel(CASES, VERDICTS, "answer_correct", depth=6, top_k=2, labels=labels)
    assert funnel.counts == (8, 5, 4, 3, 2)
    retrieved, within, kept, answered = funnel.steps[1:]
    assert retrieved.lost == ("failed", "miss", "unlabelled")
    assert dict(retrieved.labels) == {"missing": 1, "RETRIEVAL_MISS": 1, "unlabelled": 1}
    assert (within.lost, dict(within.labels)) == (("ranked",), {"RANKED_OUT": 1})
    assert (kept.lost, dict(kept.labels)) == (("dropped",), {"CONTEXT_ASSEMBLY_LOSS": 1})
    assert (answered.lost, dict(answered.labels)) == (("generation",), {"GENERATION_FAILURE": 1})
    assert funnel.passed_elsewhere == 1  # the unlabelled case passed, outside the funnel's evidence steps


def test_without_a_diagnosis_losses_are_not_diagnosed_and_the_lines_say_so():
    funnel = failure_funnel(CASES, VERDICTS, "answer_correct", depth=6, top_k=2)
    lines = render_funnel(funnel)
    assert lines[0] == "Funnel (answer_correct): 8 → 5 → 4 → 3 → 2"
    assert "(lost 1: not diagnosed 1)" in lines[2]
    assert lines[-1] == "  and 1 passed although an earlier step lost them"


def test_a_system_without_retrieval_has_two_steps_and_no_top_k_step_without_a_cut_off():
    plain = failure_funnel(CASES, VERDICTS, "answer_correct", depth=None, top_k=None)
    assert plain.counts == (8, 3) and [s.name for s in plain.steps] == ["cases", "answered"]
    agent = failure_funnel(CASES, VERDICTS, "answer_correct", depth=6, top_k=None)
    assert [s.name for s in agent.steps] == ["cases", "retrieved", "in_context", "answered"]


def test_with_repeats_a_case_passes_by_the_majority_of_its_repeats_and_retrieves_by_its_first():
    cases = [_case("a", 1, ["rel"], repeat=r) for r in range(3)] + [_case("b", 1, ["rel"], repeat=r) for r in range(3)]
    verdicts = [_verdict("a", v, r) for r, v in enumerate([True, True, False])] + \
        [_verdict("b", v, r) for r, v in enumerate([True, False, False])]
    funnel = failure_funnel(cases, verdicts, "answer_correct", depth=6, top_k=2)
    assert funnel.counts == (2, 2, 2, 2, 1) and funnel.steps[-1].lost == ("b",)


def test_a_score_criterion_follows_the_funnel_at_a_threshold():
    scored = [{**v, "criterion": "ndcg", "passed": None, "value": 0.95 if v["passed"] else 0.2} for v in VERDICTS
              if v["status"] == "observed"]  # fmt: skip
    funnel = failure_funnel(CASES, scored, "ndcg", depth=6, top_k=2, threshold=0.9)
    assert funnel.counts == (8, 5, 4, 3, 2)
