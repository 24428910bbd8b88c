"""The diagnose flows' parts that run without Prefect.

Covers ``parent_settings`` (the settings that reproduce a parent run, nulls
included), ``check_request``'s refusals (non-RAG runs, a bad or too large
``--top-k``, a missing or unimportable ``--reranker``), the request
(``diagnosis_request`` and ``DiagnosisRequest``: an unknown intervention refused,
a stray option of another intervention never kept, the identity a recorded
diagnosis is found by), the deployment flow's lookup of an existing diagnosis,
how a child run's request is built and how a replay's verdicts are merged with
the gold-context labels. Child runs, environments and the store are replaced by
stand-ins, so no flow runs.
"""

from __future__ import annotations

import sys
import uuid
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from oloproof._exceptions import ConfigError, UsageError
from oloproof.flows import INTERVENTIONS, _diagnose
from oloproof.flows._diagnose import (
    DiagnosisRequest,
    PreparedDiagnosis,
    check_request,
    diagnose,
    diagnosis_request,
    parent_settings,
)
from oloproof.records import RunManifest, RunRecords
from oloproof.stages._identity import content_hash
from oloproof.store import run_table
from oloproof.tasks import RunRequest
from oloproof.tasks._diagnose import ChildRun

SYSTEM = {"kind": "rag", "name": "support-rag", "version": "slice-b-example", "depth": 6, "top_k": 2,
          "token_budget": 40, "index_version": "kb-2026-09-16"}


def _stored_manifest(project="/projects/support_rag", **system):
    return {
        "run_id": "run_PARENT", "kind": "run", "status": "complete", "created_at": "2026-05-01T12:00:00+00:00",
        "finished_at": "2026-05-01T12:01:00+00:00", "project": str(project), "system": {**SYSTEM, **system},
        "system_name": "support-rag", "system_version": "slice-b-example",
        "dataset": "/projects/support_rag/cases.jsonl", "dataset_sha256": "0" * 64, "case_count": 0,
        "evaluators": [], "slices": [], "min_slice_support": 5, "confidence": 0.95,
        "cache": {name: {"hit": 0, "miss": 0} for name in ("execution", "judgment", "retrieve", "generate")},
        "variant": {"context_source": "assembled"},
    }  # fmt: skip


def _manifest(project="/projects/support_rag", **system):
    return RunManifest.model_validate(_stored_manifest(project, **system))


def _parent(project="/projects/support_rag", **system):
    return RunRecords.of(_stored_manifest(project, **system), [], [])


class _Store:
    """Stands in for a results store: a URL and the tables it was asked for."""

    url = "/stores/results"

    def __init__(self, tables=None):
        self.tables = tables or {}
        self.read = []

    def read_table(self, path):
        self.read.append(path)
        return self.tables.get(path, [])


def _request(intervention="gold-context", **fields):
    return DiagnosisRequest(run_id="run_PARENT", intervention=intervention, criterion="answer_correct",
                            results="/stores/results", **fields)


# -- parent_settings ------------------------------------------------------------------------


def test_parent_settings_reproduce_the_system_and_dataset():
    assert parent_settings(_manifest()) == {
        "system.name": "support-rag",
        "system.version": "slice-b-example",
        "system.rag.depth": 6,
        "system.rag.top_k": 2,
        "system.rag.token_budget": 40,
        "system.rag.index_version": "kb-2026-09-16",
        "system.rag.retriever_version": None,
        # The system's own parameters too (it declares none).
        "system.rag.retriever": None,
        "system.rag.generator": None,
        "dataset": "/projects/support_rag/cases.jsonl",
    }


def test_the_parents_own_parameters_are_reproduced():
    settings = parent_settings(_manifest(retriever={"mode": "hybrid"}, generator={"temperature": 0.7}))
    assert (settings["system.rag.retriever"], settings["system.rag.generator"]) == (
        {"mode": "hybrid"}, {"temperature": 0.7}
    )


def test_a_setting_the_parent_had_switched_off_stays_off():
    settings = parent_settings(_manifest(token_budget=None, retriever_version="r-7"))
    assert settings["system.rag.token_budget"] is None
    assert settings["system.rag.retriever_version"] == "r-7"


def test_parent_values_are_kept_as_values_never_as_text():
    settings = parent_settings(_manifest(version="1.10", index_version="010"))
    assert (settings["system.version"], settings["system.rag.index_version"]) == ("1.10", "010")


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


# -- the request ----------------------------------------------------------------------------


def test_the_three_interventions():
    assert INTERVENTIONS == ("gold-context", "top-k", "reranker")


def test_an_unknown_intervention_is_refused():
    with pytest.raises(UsageError) as caught:
        diagnosis_request("run_PARENT", "shuffle", "answer_correct", _Store())
    assert caught.value.message == "unknown intervention 'shuffle' (known: gold-context, top-k, reranker)"


def test_the_request_takes_the_store_url_and_the_options():
    request = diagnosis_request("run_PARENT", "top-k", "ndcg_at_6", _Store(), project="/p", threshold=0.5, top_k=4)
    assert request == DiagnosisRequest(run_id="run_PARENT", intervention="top-k", criterion="ndcg_at_6",
                                       results="/stores/results", project="/p", threshold=0.5, top_k=4)


@pytest.mark.parametrize(
    ("intervention", "top_k", "reranker", "settings"),
    [
        ("gold-context", None, None, {}),
        ("top-k", 4, None, {"top_k": 4}),
        ("reranker", None, "m:f", {"reranker": "m:f"}),
    ],
)
def test_only_the_chosen_intervention_keeps_its_option(intervention, top_k, reranker, settings):
    request = diagnosis_request("run_PARENT", intervention, "answer_correct", _Store(), top_k=4, reranker="m:f")
    assert (request.top_k, request.reranker, request.settings) == (top_k, reranker, settings)


def test_the_identity_is_the_hash_of_parent_criterion_threshold_intervention_and_settings():
    request = _request("top-k", top_k=4, threshold=0.5, project="/ignored")
    assert request.identity == content_hash({"parent": "run_PARENT", "criterion": "answer_correct",
                                             "threshold": 0.5, "intervention": "top-k", "settings": {"top_k": 4}})


def test_store_and_project_take_no_part_in_the_identity():
    assert _request(project="/a").identity == _request(project="/b").identity
    assert _request().identity == DiagnosisRequest(run_id="run_PARENT", intervention="gold-context",
                                                   criterion="answer_correct", results="s3://x").identity


def test_different_requests_have_different_identities():
    identities = {
        _request().identity, _request(threshold=0.5).identity, _request("top-k", top_k=3).identity,
        _request("top-k", top_k=4).identity, _request("reranker", reranker="m:f").identity,
        DiagnosisRequest(run_id="run_OTHER", intervention="gold-context", criterion="answer_correct",
                         results="/stores/results").identity,
    }
    assert len(identities) == 6


def test_a_replay_finds_its_labels_in_the_gold_context_request():
    replay = _request("top-k", top_k=4, threshold=0.5, project="/p")
    gold = replay.gold_context()
    assert gold == _request(threshold=0.5, project="/p")
    assert gold.identity == _request(threshold=0.5).identity
    assert _request("reranker", reranker="m:f").gold_context() == _request()


def test_a_request_is_frozen_and_refuses_unknown_fields_and_interventions():
    request = _request()
    with pytest.raises(ValidationError):
        request.criterion = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        _request(colour="red")
    with pytest.raises(ValidationError):
        _request("shuffle")


# -- the deployment flow's lookup -------------------------------------------------------------


@pytest.fixture
def lookups(monkeypatch):
    """The stores the flow opens and the identities it looks up (each finds a diagnosis)."""
    seen = SimpleNamespace(located=[], identities=[])

    def locate(results, project):
        seen.located.append((results, project))
        return _Store()

    def find(store, identity):
        seen.identities.append(identity)
        return {"diagnosis_id": "sha256:existing"}

    monkeypatch.setattr(_diagnose, "locate_store", locate)
    monkeypatch.setattr(_diagnose, "find_diagnosis", find)
    return seen


def test_an_existing_diagnosis_is_returned_as_recorded(lookups):
    record = diagnose.fn("run_PARENT", "top-k", "answer_correct", results="/r", project="/p", top_k=4)
    assert record == {"diagnosis_id": "sha256:existing"}
    assert lookups.located == [("/r", "/p")]
    assert lookups.identities == [_request("top-k", top_k=4).identity]


def test_a_stray_option_finds_the_same_diagnosis(lookups):
    diagnose.fn("run_PARENT", "gold-context", "answer_correct", top_k=4, reranker="m:f")
    assert lookups.identities == [_request().identity]


def test_the_flow_refuses_an_unknown_intervention_before_any_lookup(lookups):
    with pytest.raises(UsageError, match="unknown intervention 'shuffle'"):
        diagnose.fn("run_PARENT", "shuffle", "answer_correct")
    assert lookups.identities == []


def test_the_diagnose_flows_declarations():
    for flow in (diagnose, PreparedDiagnosis.diagnose):
        assert flow.name == "oloproof-diagnose"
        assert flow.flow_run_name == "diagnose {run_id} {intervention}"
    assert list(diagnose.parameters.properties) == [
        "run_id", "intervention", "criterion", "results", "project", "top_k", "reranker", "threshold", "resample",
    ]


# -- child runs --------------------------------------------------------------------------------


@pytest.fixture
def child_runs(monkeypatch):
    """Environments and the prepared run flow replaced: records the requests and flow options."""
    seen = SimpleNamespace(requests=[], options=[], closed=[], fail=False)

    def prepare(request):
        seen.requests.append(request)
        return SimpleNamespace(request=request, close=lambda: seen.closed.append(request.run_id))

    class Prepared:
        def __init__(self, env):
            self.env = env

        def __call__(self, **options):
            seen.options.append(options)
            if seen.fail:
                raise RuntimeError("the child run failed")
            return {"run_id": self.env.request.run_id, "status": "complete"}

    monkeypatch.setattr(_diagnose, "prepare_environment", prepare)
    monkeypatch.setattr(_diagnose, "PreparedRun", Prepared)
    return seen


def test_a_child_run_reruns_the_parent_cases_bypassing_the_generation_cache(child_runs):
    request = _request()
    store = _Store()
    prepared = PreparedDiagnosis(request, store, _parent())
    child = _diagnose._child(prepared, ["a", "b"], "gold context", context_source="gold")
    [run_request] = child_runs.requests
    assert isinstance(run_request, RunRequest)
    assert run_request.run_id.startswith("run_")
    assert run_request.model_dump(exclude={"run_id"}) == {
        "project": "/projects/support_rag",
        "settings": parent_settings(_manifest()),
        "results": "/stores/results",
        "context_source": "gold",
        "replay_from": None,
        "reranker": None,
        "bypass_generation_cache": True,
        "case_ids": ("a", "b"),
        "parent": {"run_id": "run_PARENT", "diagnosis_request": request.identity, "role": "gold context"},
        "kind": "diagnosis_child",
        "stages": "all",
        "sweep": None,
    }
    assert child_runs.options == [{"flow_run_name": "diagnose gold context · 2 cases"}]
    assert child_runs.closed == [run_request.run_id]
    assert store.read == [run_table(run_request.run_id, "judgments")]
    assert child == ChildRun(run_id=run_request.run_id, judgments=[])


def test_a_child_run_setting_overrides_the_parent_one(child_runs):
    prepared = PreparedDiagnosis(_request("top-k", top_k=4), _Store(), _parent())
    _diagnose._child(prepared, ["a"], "top-k 4", replay_from="run_PARENT", settings={"system.rag.top_k": 4})
    [run_request] = child_runs.requests
    assert run_request.settings == {**parent_settings(_manifest()), "system.rag.top_k": 4}
    assert run_request.replay_from == "run_PARENT"
    assert child_runs.options == [{"flow_run_name": "diagnose top-k 4 · 1 case"}]


def test_each_child_run_gets_its_own_run_id(child_runs):
    prepared = PreparedDiagnosis(_request(), _Store(), _parent())
    _diagnose._child(prepared, ["a"], "gold context", context_source="gold")
    _diagnose._child(prepared, ["a"], "control")
    first, second = child_runs.requests
    assert first.run_id != second.run_id
    assert second.context_source == "assembled" and second.parent["role"] == "control"


def test_a_failed_child_run_still_closes_its_environment(child_runs):
    child_runs.fail = True
    prepared = PreparedDiagnosis(_request(), _Store(), _parent())
    with pytest.raises(RuntimeError, match="the child run failed"):
        _diagnose._child(prepared, ["a"], "control")
    assert child_runs.closed == [child_runs.requests[0].run_id]


# -- replays ----------------------------------------------------------------------------------------

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

    def child(prepared, cases, role, **variant):
        seen.calls.append({"cases": cases, "role": role, **variant})
        key = "replay control" if role == "replay control" else "intervention"
        return ChildRun(run_id=f"run_{key.replace(' ', '_').upper()}", judgments=seen.judgments[key])

    monkeypatch.setattr(_diagnose, "_child", child)
    return seen


def _prepared(**fields):
    return PreparedDiagnosis(_request(**fields), _Store(), _parent())


def test_a_top_k_replay_recovers_what_passes_only_under_the_intervention(children):
    children.judgments["intervention"] = _verdicts(a=True, b=True, c=False)
    children.judgments["replay control"] = _verdicts(a=False, b=True, c=False)
    result = _diagnose._replay(_prepared(intervention="top-k", top_k=4), ["a", "b", "c"], GOLD)
    assert children.calls == [
        {"cases": ["a", "b", "c"], "role": "top-k 4", "replay_from": "run_PARENT", "reranker": None,
         "settings": {"system.rag.top_k": 4}},
        {"cases": ["a", "b", "c"], "role": "replay control", "replay_from": "run_PARENT"},
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
    result = _diagnose._replay(_prepared(intervention="reranker", reranker="m:f"), ["a"], gold)
    assert children.calls[0] == {"cases": ["a"], "role": "reranker m:f", "replay_from": "run_PARENT",
                                 "reranker": "m:f"}
    assert result["recovered"] == 1


def test_a_case_unobserved_in_a_replay_neither_passes_nor_recovers(children):
    children.judgments["intervention"] = _verdicts(a=True)  # b is missing from the intervention run
    children.judgments["replay control"] = _verdicts(b=False)  # a is missing from the control run
    gold = {**GOLD, "cases": GOLD["cases"][:2]}
    result = _diagnose._replay(_prepared(intervention="top-k", top_k=4), ["a", "b"], gold)
    assert [(c["replay_control_passed"], c["intervention_recovered"]) for c in result["cases"]] == [
        (False, True), (False, False),
    ]


def test_a_replay_of_no_cases_runs_nothing_and_keeps_the_gold_runs(children):
    result = _diagnose._replay(_prepared(intervention="top-k", top_k=4), [], {**GOLD, "cases": []})
    assert children.calls == []
    assert result == {"cases": [], "recovered": 0, "labels_from": "sha256:gold", "child_runs": GOLD["child_runs"]}
