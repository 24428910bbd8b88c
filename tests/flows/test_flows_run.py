"""The run flows' parts that run without Prefect.

Covers the flow-run name and tags a run is labelled with, how a deployment's
``overrides`` and an index event's ``index_version`` become settings
(``settings_of``), the two flows' declarations (names, parameters, thread
runner) and the argument wrappers, which leave values alone outside a flow run.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest
from prefect.task_runners import ThreadPoolTaskRunner

from oloproof._exceptions import ConfigError
from oloproof.flows import _batches, _run, evaluate
from oloproof.flows._run import run_name, run_tags, settings_of
from oloproof.flows._runner import THREAD_WORKERS
from oloproof.tasks import RunEnvironment


def _env(name="support-rag", version="slice-b-example", index_version="kb-2026-09-16", cases=13):
    config = SimpleNamespace(name=name, version=version, index_version=index_version)
    return SimpleNamespace(system=SimpleNamespace(config=config), cases={f"c{i}": object() for i in range(cases)},
                           run_id="run_01M8PBYFKV2K95BDT0EVP6ZH0F", config_hash="3fa2c1d0")


# -- name and tags ------------------------------------------------------------------------


def test_run_name_names_system_version_case_count_and_settings():
    assert run_name(_env()) == "run support-rag slice-b-example · 13 cases · config 3fa2c1d0"


def test_run_name_of_a_single_case_run():
    assert run_name(_env(name="faq", version="v2", cases=1)) == "run faq v2 · 1 case · config 3fa2c1d0"


def test_run_tags_carry_run_id_system_version_index_version_and_settings():
    assert run_tags(_env()) == [
        "oloproof", "run:run_01M8PBYFKV2K95BDT0EVP6ZH0F", "system:support-rag", "version:slice-b-example",
        "index_version:kb-2026-09-16", "config:3fa2c1d0",
    ]


def test_run_tags_without_an_index_version():
    assert run_tags(_env(name="faq", version="v2", index_version=None)) == [
        "oloproof", "run:run_01M8PBYFKV2K95BDT0EVP6ZH0F", "system:faq", "version:v2", "config:3fa2c1d0",
    ]


def _prepared(project, *overrides):
    from oloproof.tasks import RunRequest, prepare_environment

    request = RunRequest(run_id="run_01M8PBYFKV2K95BDT0EVP6ZH0F", project=str(project),
                         settings=settings_of(list(overrides), None))  # fmt: skip
    env = prepare_environment(request)
    env.close()
    return env


def test_the_config_hash_tells_settings_apart_and_only_settings(example_project):
    plain = _prepared(example_project)
    assert len(plain.config_hash) == 8 and int(plain.config_hash, 16) >= 0
    # Equal settings hash equally, whichever run they belong to.
    assert _prepared(example_project).config_hash == plain.config_hash
    assert _prepared(example_project, "system.rag.top_k=2").config_hash == plain.config_hash  # the file's value
    hashes = {plain.config_hash}
    for override in ("system.rag.top_k=1", "system.rag.token_budget=120", "min_slice_support=3", "system.version=v2"):
        changed = _prepared(example_project, override)
        hashes.add(changed.config_hash)
        assert run_name(changed) != run_name(plain), override
    assert len(hashes) == 5


# -- settings_of -----------------------------------------------------------------------------


def test_no_overrides_and_no_index_version_are_no_settings():
    assert settings_of(None, None) == {}
    assert settings_of([], "") == {}


def test_overrides_become_yaml_typed_settings_in_order():
    assert settings_of(["system.rag.top_k=3", "slices=[metadata.topic]", "results=s3://b/r"], None) == {
        "system.rag.top_k": 3, "slices": ["metadata.topic"], "results": "s3://b/r",
    }


def test_a_repeated_override_applies_where_it_was_last_given():
    settings = settings_of(["system.rag.top_k=3", "batch_size=8", "system.rag.top_k=4"], None)
    assert list(settings.items()) == [("batch_size", 8), ("system.rag.top_k", 4)]


def test_the_index_version_is_set_last():
    settings = settings_of(["system.rag.top_k=3"], "kb-2026-10-01")
    assert list(settings.items()) == [("system.rag.top_k", 3), ("system.rag.index_version", "kb-2026-10-01")]


def test_the_index_version_wins_over_an_override_of_it():
    assert settings_of(["system.rag.index_version=kb-old"], "kb-new") == {"system.rag.index_version": "kb-new"}


@pytest.mark.parametrize("version", ["1.10", "010", "yes", "2026-10-01", "null"])
def test_the_index_version_is_taken_as_text_never_parsed(version):
    assert settings_of(None, version) == {"system.rag.index_version": version}


def test_a_numeric_index_version_becomes_text():
    assert settings_of(None, 20261001) == {"system.rag.index_version": "20261001"}  # type: ignore[arg-type]


def test_an_override_without_a_value_separator_is_refused():
    with pytest.raises(ConfigError) as caught:
        settings_of(["system.rag.top_k"], None)
    assert caught.value.path == "--set"


# -- the flows' declarations -------------------------------------------------------------------


def test_the_deployment_flow_declaration():
    assert evaluate.name == "oloproof-run"
    # Named from its prepared run before its first log line.
    assert evaluate.flow_run_name is _run._evaluate_run_name
    assert evaluate.should_validate_parameters is False
    assert list(evaluate.parameters.properties) == ["project", "overrides", "index_version", "results", "run_id"]


def test_the_prepared_run_flow_records_the_whole_request():
    prepared = _run.prepared_flow(cast(RunEnvironment, None))
    assert prepared.name == evaluate.name == "oloproof-run"
    assert prepared.flow_run_name == "run {project}"
    assert list(prepared.parameters.properties) == [
        "run_id", "project", "settings", "results", "context_source", "replay_from", "reranker",
        "bypass_generation_cache", "case_ids", "parent", "kind", "stages", "sweep",
    ]


@pytest.mark.parametrize("flow", [evaluate, _run.prepared_flow(cast(RunEnvironment, None))], ids=["deployment", "prepared"])
def test_both_run_flows_run_batches_on_threads(flow):
    assert isinstance(flow.task_runner, ThreadPoolTaskRunner)
    assert flow.task_runner._max_workers == THREAD_WORKERS


# -- argument wrappers outside a flow run ---------------------------------------------------------


def test_outside_a_flow_run_there_is_no_thread_runner():
    assert _batches._threads() is False


def test_outside_a_flow_run_values_pass_unwrapped():
    value = {"a": [1, 2]}
    assert _batches.quoted(value) is value
    assert _batches.opaque_of(value) is value
    assert _batches.opaque_of(None) is None
