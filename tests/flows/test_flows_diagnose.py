"""The diagnose flow's parts that run without Prefect.

Covers ``parent_overrides`` (the exact ``--set`` list that reproduces a parent run,
each value surviving the override parser unchanged), ``check_request``'s refusals
(non-RAG runs, a bad or too large ``--top-k``, a missing or unimportable
``--reranker``), the request identity the flow looks a diagnosis up by (a stray
option of another intervention never takes part), its refusal of an unknown
intervention, and how a child run and a replay are put together (the child run
flow and the store replaced by stand-ins, so no flow runs).
"""

from __future__ import annotations

import sys
import uuid
from types import SimpleNamespace

import pytest

from oloproof._exceptions import ConfigError, UsageError
from oloproof.config._load import parse_override
from oloproof.flows import INTERVENTIONS
from oloproof.flows import _diagnose
from oloproof.flows._diagnose import check_request, diagnose, parent_overrides
from oloproof.store import run_table
from oloproof.tasks._identity import content_hash

SYSTEM = {"kind": "rag", "name": "support-rag", "version": "slice-b-example", "depth": 6, "top_k": 2,
          "token_budget": 40, "index_version": "kb-2026-09-16"}


def _manifest(tmp_path=None, **system):
    return {"run_id": "run_PARENT", "project": str(tmp_path or "/projects/support_rag"),
            "dataset": "/projects/support_rag/cases.jsonl", "system": {**SYSTEM, **system}}


def _parent(tmp_path=None, **system):
    return {"manifest": _manifest(tmp_path, **system), "judgments": [], "cases": []}


# -- parent_overrides ---------------------------------------------------------------------


def test_parent_overrides_reproduce_system_dataset_and_store():
    assert parent_overrides(_manifest(), "/stores/results") == [
        'system.name="support-rag"',
        'system.version="slice-b-example"',
        "system.rag.depth=6",
        "system.rag.top_k=2",
        "system.rag.token_budget=40",
        'system.rag.index_version="kb-2026-09-16"',
        "system.rag.retriever_version=null",
        'dataset="/projects/support_rag/cases.jsonl"',
        'results="/stores/results"',
    ]


def test_parent_overrides_carry_a_retriever_version_and_a_null_budget():
    overrides = parent_overrides(_manifest(token_budget=None, retriever_version="r-7"), "s3://bucket/results")
    assert "system.rag.token_budget=null" in overrides
    assert 'system.rag.retriever_version="r-7"' in overrides
    assert overrides[-1] == 'results="s3://bucket/results"'


@pytest.mark.parametrize("text", ["1.10", "010", "yes", "null", "2026-09-16", "a #b", "x: y", "[1]", "café"])
def test_every_parent_value_survives_the_override_parser(text):
    manifest = {**_manifest(name=text, version=text, index_version=text), "dataset": text}
    parsed = {".".join(keys): value for keys, value in map(parse_override, parent_overrides(manifest, text))}
    for key in ("system.name", "system.version", "system.rag.index_version", "dataset", "results"):
        assert parsed[key] == text


# -- check_request ------------------------------------------------------------------------


def test_a_plain_system_run_cannot_be_diagnosed():
    with pytest.raises(UsageError, match="it needs a @rag_system run"):
        check_request(_parent(kind="plain"), "gold-context", None, None)


def test_gold_context_on_a_rag_run_is_accepted():
    assert check_request(_parent(), "gold-context", None, None) is None


def test_gold_context_ignores_top_k_and_reranker():
    assert check_request(_parent(), "gold-context", 99, "not a spec") is None


@pytest.mark.parametrize("top_k", [None, 0, -1])
def test_top_k_must_be_at_least_one(top_k):
    with pytest.raises(UsageError) as caught:
        check_request(_parent(), "top-k", top_k, None)
    assert caught.value.message == "--top-k must be an integer of at least 1"
    assert caught.value.field == "--top-k"


def test_top_k_cannot_exceed_the_run_depth():
    with pytest.raises(UsageError) as caught:
        check_request(_parent(depth=6), "top-k", 7, None)
    assert str(caught.value) == "field '--top-k': --top-k 7 exceeds the run's depth (6)"


@pytest.mark.parametrize("top_k", [1, 6])
def test_top_k_within_the_depth_is_accepted(top_k):
    assert check_request(_parent(depth=6), "top-k", top_k, None) is None


@pytest.mark.parametrize("reranker", [None, ""])
def test_reranker_intervention_needs_a_reranker(reranker):
    with pytest.raises(UsageError) as caught:
        check_request(_parent(), "reranker", None, reranker)
    assert caught.value.message == "--intervention reranker needs --reranker module:function"
    assert caught.value.field == "--reranker"


@pytest.fixture
def reranker_module(tmp_path, monkeypatch):
    """A module in a project folder with one function and one non-callable attribute."""
    name = f"rerank_{uuid.uuid4().hex[:12]}"
    (tmp_path / f"{name}.py").write_text("def rerank(query, candidates):\n    return candidates\n\nLIMIT = 3\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield name
    sys.modules.pop(name, None)


def test_an_importable_reranker_is_accepted(tmp_path, reranker_module):
    assert check_request(_parent(tmp_path), "reranker", None, f"{reranker_module}:rerank") is None
    assert reranker_module in sys.modules


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "expected module:function, got 'no_colon'"),
        ("{module}:missing", "module '{module}' has no attribute 'missing'"),
        ("{module}:LIMIT", "{module}:LIMIT is not callable"),
        ("absent_module_xyz:fn", "cannot import 'absent_module_xyz': ModuleNotFoundError"),
    ],
    ids=["no-colon", "no-attribute", "not-callable", "no-module"],
)
def test_an_unusable_reranker_is_refused_naming_the_option(tmp_path, reranker_module, spec, message):
    with pytest.raises(ConfigError) as caught:
        check_request(_parent(tmp_path), "reranker", None, spec.format(module=reranker_module))
    assert caught.value.path == "--reranker"
    assert caught.value.message.startswith(message.format(module=reranker_module))


def test_the_three_interventions():
    assert INTERVENTIONS == ("gold-context", "top-k", "reranker")


# -- the diagnose flow's request ------------------------------------------------------------


class _Store:
    url = "/stores/results"

    def __init__(self, tables=None):
        self.tables = tables or {}
        self.read = []

    def read_table(self, path):
        self.read.append(path)
        return self.tables.get(path, [])


@pytest.fixture
def requests(monkeypatch):
    """The requests ``diagnose`` looks up (each finds an existing diagnosis) and the stores it opens."""
    seen = SimpleNamespace(requests=[], located=[])

    def locate(results, project):
        seen.located.append((results, project))
        return _Store()

    def find(store, request):
        seen.requests.append(request)
        return {"diagnosis_id": "sha256:existing", "request": request}

    monkeypatch.setattr(_diagnose, "locate_store", locate)
    monkeypatch.setattr(_diagnose, "find_diagnosis", find)
    return seen


def _request(intervention, settings, threshold=None, criterion="answer_correct", parent="run_PARENT"):
    return content_hash({"parent": parent, "criterion": criterion, "threshold": threshold,
                         "intervention": intervention, "settings": settings})


def test_an_unknown_intervention_is_refused_before_the_store_is_opened(requests):
    with pytest.raises(UsageError) as caught:
        diagnose.fn("run_PARENT", "shuffle", "answer_correct")
    assert caught.value.message == "unknown intervention 'shuffle' (known: gold-context, top-k, reranker)"
    assert requests.requests == [] and requests.located == []


def test_an_existing_diagnosis_is_returned_as_recorded(requests):
    record = diagnose.fn("run_PARENT", "gold-context", "answer_correct", results="/r", project="/p")
    assert record == {"diagnosis_id": "sha256:existing", "request": _request("gold-context", {})}
    assert requests.located == [("/r", "/p")]


def test_stray_options_of_other_interventions_take_no_part_in_the_request(requests):
    diagnose.fn("run_PARENT", "gold-context", "answer_correct")
    diagnose.fn("run_PARENT", "gold-context", "answer_correct", top_k=4, reranker="m:f")
    diagnose.fn("run_PARENT", "top-k", "answer_correct", top_k=4, reranker="m:f")
    diagnose.fn("run_PARENT", "reranker", "answer_correct", top_k=4, reranker="m:f")
    assert requests.requests == [
        _request("gold-context", {}),
        _request("gold-context", {}),
        _request("top-k", {"top_k": 4}),
        _request("reranker", {"reranker": "m:f"}),
    ]


def test_the_request_tells_settings_criteria_thresholds_and_parents_apart(requests):
    diagnose.fn("run_PARENT", "top-k", "answer_correct", top_k=3)
    diagnose.fn("run_PARENT", "top-k", "answer_correct", top_k=4)
    diagnose.fn("run_PARENT", "gold-context", "ndcg_at_6", threshold=0.5)
    diagnose.fn("run_OTHER", "gold-context", "ndcg_at_6", threshold=0.5)
    assert requests.requests[2] == _request("gold-context", {}, threshold=0.5, criterion="ndcg_at_6")
    assert len(set(requests.requests)) == 4


# -- child runs and replays ---------------------------------------------------------------


class _Flow:
    """Stands in for the run flow: records how it was called."""

    def __init__(self):
        self.options = []
        self.calls = []

    def with_options(self, **options):
        self.options.append(options)
        return self

    def __call__(self, **kwargs):
        self.calls.append(kwargs)
        return {"run_id": f"run_CHILD{len(self.calls)}", "status": "complete"}


def test_a_child_run_reruns_the_parent_cases_bypassing_the_generation_cache(monkeypatch):
    flow = _Flow()
    monkeypatch.setattr(_diagnose, "evaluate", flow)
    rows = [{"case_id": "a", "criterion": "answer_correct", "status": "observed", "passed": True}]
    store = _Store({run_table("run_CHILD1", "judgments"): rows})
    parent = _parent()
    child = _diagnose._child(parent, store, ["a", "b"], "gold context", "req-1", context_source="gold")
    assert flow.options == [{"flow_run_name": "diagnose gold context · 2 cases"}]
    assert flow.calls == [{
        "project": "/projects/support_rag",
        "overrides": parent_overrides(parent["manifest"], "/stores/results"),
        "case_ids": ["a", "b"],
        "bypass_generation_cache": True,
        "parent": {"run_id": "run_PARENT", "diagnosis_request": "req-1", "role": "gold context"},
        "context_source": "gold",
    }]
    assert child == {"run_id": "run_CHILD1", "status": "complete", "judgments": rows}


def test_a_child_run_puts_its_own_overrides_after_the_parent_ones(monkeypatch):
    flow = _Flow()
    monkeypatch.setattr(_diagnose, "evaluate", flow)
    parent = _parent()
    _diagnose._child(parent, _Store(), ["a"], "top-k 4", "req-1", replay_from="run_PARENT",
                     overrides=["system.rag.top_k=4"])
    call = flow.calls[0]
    assert call["overrides"] == parent_overrides(parent["manifest"], "/stores/results") + ["system.rag.top_k=4"]
    assert call["replay_from"] == "run_PARENT"
    assert flow.options == [{"flow_run_name": "diagnose top-k 4 · 1 cases"}]


GOLD = {
    "diagnosis_id": "sha256:gold",
    "cases": [{"case_id": c, "label": "CONTEXT_ASSEMBLY_LOSS"} for c in ("a", "b", "c")],
    "child_runs": {"gold_context": "run_GOLD", "control": "run_CONTROL"},
}


def _verdicts(**passed):
    return [{"case_id": c, "criterion": "answer_correct", "status": "observed", "passed": p, "value": float(p)}
            for c, p in passed.items()]


@pytest.fixture
def children(monkeypatch):
    """``_child`` replaced: each role's judgments are set by the test, each call is recorded."""
    seen = SimpleNamespace(calls=[], judgments={})

    def child(parent, store, cases, role, request, **options):
        seen.calls.append({"cases": cases, "role": role, "request": request, **options})
        key = "replay control" if role == "replay control" else "intervention"
        return {"run_id": f"run_{key.replace(' ', '_').upper()}", "judgments": seen.judgments[key]}

    monkeypatch.setattr(_diagnose, "_child", child)
    return seen


def test_a_top_k_replay_recovers_what_passes_only_under_the_intervention(children):
    children.judgments["intervention"] = _verdicts(a=True, b=True, c=False)
    children.judgments["replay control"] = _verdicts(a=False, b=True, c=False)
    result = _diagnose._replay(_parent(), _Store(), ["a", "b", "c"], "req-2", GOLD, "answer_correct",
                               None, 4, None)
    assert children.calls == [
        {"cases": ["a", "b", "c"], "role": "top-k 4", "request": "req-2", "reranker": None,
         "replay_from": "run_PARENT", "overrides": ["system.rag.top_k=4"]},
        {"cases": ["a", "b", "c"], "role": "replay control", "request": "req-2", "replay_from": "run_PARENT"},
    ]
    assert [(c["case_id"], c["replay_control_passed"], c["intervention_recovered"]) for c in result["cases"]] == [
        ("a", False, True), ("b", True, False), ("c", False, False),
    ]
    assert result["cases"][0]["label"] == "CONTEXT_ASSEMBLY_LOSS"
    assert result["recovered"] == 1
    assert result["labels_from"] == "sha256:gold"
    assert result["child_runs"] == {"gold_context": "run_GOLD", "control": "run_CONTROL",
                                    "intervention": "run_INTERVENTION", "replay_control": "run_REPLAY_CONTROL"}


def test_a_reranker_replay_names_the_reranker_and_sets_no_top_k(children):
    children.judgments["intervention"] = _verdicts(a=True)
    children.judgments["replay control"] = _verdicts(a=False)
    gold = {**GOLD, "cases": GOLD["cases"][:1]}
    result = _diagnose._replay(_parent(), _Store(), ["a"], "req-3", gold, "answer_correct", None, None, "m:f")
    assert children.calls[0] == {"cases": ["a"], "role": "reranker m:f", "request": "req-3", "reranker": "m:f",
                           "replay_from": "run_PARENT"}
    assert result["recovered"] == 1


def test_a_case_unobserved_in_a_replay_neither_passes_nor_recovers(children):
    children.judgments["intervention"] = _verdicts(a=True)  # b is missing from the intervention run
    children.judgments["replay control"] = _verdicts(b=False)  # a is missing from the control run
    gold = {**GOLD, "cases": GOLD["cases"][:2]}
    result = _diagnose._replay(_parent(), _Store(), ["a", "b"], "r", gold, "answer_correct", None, 4, None)
    assert [(c["replay_control_passed"], c["intervention_recovered"]) for c in result["cases"]] == [
        (False, True), (False, False),
    ]


def test_a_replay_of_no_cases_runs_nothing_and_keeps_the_gold_runs(children):
    result = _diagnose._replay(_parent(), _Store(), [], "r", {**GOLD, "cases": []}, "answer_correct", None, 4, None)
    assert children.calls == []
    assert result == {"cases": [], "recovered": 0, "labels_from": "sha256:gold", "child_runs": GOLD["child_runs"]}
