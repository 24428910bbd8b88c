"""The run flow's parts that run without Prefect.

Covers the flow-run name and tags a run is labelled with, how the flow's
parameters become the picklable ``RunContext`` every task receives, the flow's
own declaration (name, parameters, thread runner) and the argument wrappers,
which leave values alone outside a flow run.
"""

from __future__ import annotations

from types import SimpleNamespace

from prefect.task_runners import ThreadPoolTaskRunner

from oloproof.flows import evaluate
from oloproof.flows import _run
from oloproof.flows._run import run_name, run_tags
from oloproof.flows._runner import THREAD_WORKERS
from oloproof.tasks import RunContext


def _env(name="support-rag", version="slice-b-example", index_version="kb-2026-09-16", cases=13):
    config = SimpleNamespace(name=name, version=version, index_version=index_version)
    return SimpleNamespace(system=SimpleNamespace(config=config), cases={f"c{i}": object() for i in range(cases)})


# -- name and tags ------------------------------------------------------------------------


def test_run_name_names_system_version_and_case_count():
    assert run_name(_env()) == "run support-rag slice-b-example · 13 cases"


def test_run_name_of_a_single_case_run():
    assert run_name(_env(name="faq", version="v2", cases=1)) == "run faq v2 · 1 cases"


def test_run_tags_carry_system_version_and_index_version():
    assert run_tags(_env()) == [
        "oloproof", "system:support-rag", "version:slice-b-example", "index_version:kb-2026-09-16",
    ]


def test_run_tags_without_an_index_version():
    assert run_tags(_env(name="faq", version="v2", index_version=None)) == ["oloproof", "system:faq", "version:v2"]


# -- the run context ------------------------------------------------------------------------


def test_defaults_give_a_plain_context_in_the_current_folder():
    assert _run._context({}) == RunContext(run_id="", project_dir=".")


def test_every_parameter_reaches_the_context():
    context = _run._context({
        "project": "/projects/support_rag", "overrides": ["top_k=3"], "run_id": "run_X",
        "replay_from": "run_PARENT", "context_source": "gold", "reranker": "m:f",
        "bypass_generation_cache": True, "case_ids": ["b", "a"], "parent": {"role": "control"},
    })
    assert context.run_id == "run_X"
    assert context.project_dir == "/projects/support_rag"
    assert context.overrides == ("top_k=3",)
    assert context.replay_from == "run_PARENT"
    assert context.context_source == "gold"
    assert context.reranker == "m:f"
    assert context.bypass_generation_cache is True
    assert context.case_ids == ("b", "a")
    assert context.parent == {"role": "control"}


def test_index_version_becomes_the_last_override():
    context = _run._context({"overrides": ["top_k=3"], "index_version": "kb-2026-10-01"})
    assert context.overrides == ("top_k=3", "system.rag.index_version=kb-2026-10-01")


def test_an_empty_index_version_sets_nothing():
    assert _run._context({"index_version": ""}).overrides == ()


def test_an_empty_case_list_is_kept_apart_from_all_cases():
    assert _run._context({"case_ids": []}).case_ids == ()
    assert _run._context({"case_ids": None}).case_ids is None


def test_null_parameters_fall_back_to_their_defaults():
    context = _run._context({"project": None, "context_source": None, "bypass_generation_cache": None,
                             "overrides": None, "run_id": None})
    assert (context.project_dir, context.context_source, context.bypass_generation_cache) == (".", "assembled", False)
    assert (context.overrides, context.run_id) == ((), "")


def test_equal_parameters_give_equal_contexts():
    first = _run._context({"project": "p", "case_ids": ["a"]})
    assert first == _run._context({"project": "p", "case_ids": ["a"]})
    assert first != _run._context({"project": "p", "case_ids": ["b"]})


def test_the_results_store_is_given_to_the_context_not_as_an_override():
    context = _run._context({"results": "/stores/results", "overrides": ["top_k=3"]})
    assert context.results == "/stores/results"
    assert context.overrides == ("top_k=3",)
    assert _run._context({"results": ""}).results is None


# -- the flow's declaration -------------------------------------------------------------------


def test_the_run_flow_declaration():
    assert evaluate.name == "oloproof-run"
    assert evaluate.flow_run_name == "run {project}"
    assert evaluate.should_validate_parameters is False
    assert list(evaluate.parameters.properties) == [
        "project", "overrides", "index_version", "results", "run_id", "replay_from", "context_source",
        "reranker", "bypass_generation_cache", "case_ids", "parent",
    ]


def test_the_run_flow_runs_batches_on_threads():
    assert isinstance(evaluate.task_runner, ThreadPoolTaskRunner)
    assert evaluate.task_runner._max_workers == THREAD_WORKERS


# -- argument wrappers outside a flow run ---------------------------------------------------------


def test_outside_a_flow_run_there_is_no_thread_runner():
    assert _run._threads() is False


def test_outside_a_flow_run_values_pass_unwrapped():
    value = {"a": [1, 2]}
    assert _run._quote(value) is value
    assert _run._opaque(value) is value
    assert _run._opaque(None) is None
