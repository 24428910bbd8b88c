"""The flow an index rebuild triggers.

Covers its refusal of an event without an ``index_version`` and how the event's
fields become the run flow's arguments (the run flow replaced by a stand-in, so
no flow runs), and the flow's declaration.
"""

from __future__ import annotations

import pytest

from oloproof._exceptions import ConfigError
from oloproof.flows import _index
from oloproof.flows._index import evaluate_on_index_update


@pytest.fixture
def runs(monkeypatch):
    """The calls the flow makes to the run flow."""
    calls = []

    def evaluate(**kwargs):
        calls.append(kwargs)
        return {"run_id": "run_X", **kwargs}

    monkeypatch.setattr(_index, "evaluate", evaluate)
    return calls


@pytest.mark.parametrize("version", ["", "   ", None])
def test_an_event_without_an_index_version_is_refused(runs, version):
    with pytest.raises(ConfigError) as caught:
        evaluate_on_index_update.fn(project="/projects/support_rag", index_version=version)
    assert str(caught.value) == "event.payload: field 'index_version': the index event carries no index_version"
    assert runs == []


def test_the_event_runs_the_project_at_the_new_index_version(runs):
    result = evaluate_on_index_update.fn(project="/projects/support_rag", index_version="kb-2026-10-01",
                                         results="s3://bucket/results")
    assert runs == [{"project": "/projects/support_rag", "index_version": "kb-2026-10-01",
                     "results": "s3://bucket/results"}]
    assert result["run_id"] == "run_X"


def test_empty_fields_fall_back_to_the_current_folder_and_the_project_store(runs):
    evaluate_on_index_update.fn(project="", index_version="kb-1", results="")
    assert runs == [{"project": ".", "index_version": "kb-1", "results": None}]


def test_a_numeric_index_version_is_passed_as_text(runs):
    evaluate_on_index_update.fn(index_version=20261001)
    assert runs[0]["index_version"] == "20261001"


def test_the_index_flow_declaration():
    assert evaluate_on_index_update.name == "oloproof-index-updated"
    assert evaluate_on_index_update.flow_run_name == "index {index_version} updated"
    assert list(evaluate_on_index_update.parameters.properties) == ["project", "index_version", "results"]
