"""``testing_criteria`` as the catalogue writes them, translated into evaluator entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof._exceptions import ConfigError
from oloproof.config._criteria import BUILTINS, load_criteria
from oloproof.evaluators import registered_evaluators
from oloproof.providers import ProviderConfig

LOCAL = ProviderConfig(type="openai", base_url="http://127.0.0.1:9/v1")
CRITERION = {
    "type": "azure_ai_evaluator", "name": "groundedness", "evaluator_name": "builtin.groundedness",
    "initialization_parameters": {"deployment_name": "gpt-4o"}, "threshold": 4,
    "data_mapping": {"context": "{{item.context}}", "response": "{{item.response}}"},
}  # fmt: skip


def _load(value, tmp_path: Path, providers=None):
    return load_criteria(value, directory=tmp_path, config_path=str(tmp_path / "oloproof.yaml"),
                         config_lines={}, providers={"local": LOCAL} if providers is None else providers)  # fmt: skip


def test_every_builtin_is_a_registered_evaluator():
    assert set(BUILTINS.values()) <= set(registered_evaluators())


def test_a_criterion_becomes_an_evaluator_entry(tmp_path):
    criteria = _load([CRITERION], tmp_path)
    assert criteria.entries == [{
        "type": "groundedness", "criterion": "groundedness", "provider": "local", "model": "gpt-4o",
        "threshold": 4, "data_mapping": CRITERION["data_mapping"],
    }]  # fmt: skip


def test_the_deployment_selects_the_provider_listing_it(tmp_path):
    providers = {"a": LOCAL, "b": ProviderConfig(type="openai", base_url="http://127.0.0.1:9/v1", deployments=["gpt-4o"])}
    assert _load([CRITERION], tmp_path, providers).entries[0]["provider"] == "b"
    unlisted = {**CRITERION, "initialization_parameters": {"model": "other"}}
    with pytest.raises(ConfigError, match="no provider serves deployment 'other' \\(configured: a, b"):
        _load([unlisted], tmp_path, providers)


def test_errors_name_the_criteria_file_line_and_field(tmp_path):
    file = tmp_path / "criteria.json"
    file.write_text(json.dumps([CRITERION, {**CRITERION, "evaluator_name": "builtin.coherence"}], indent=2))
    with pytest.raises(ConfigError) as raised:
        _load("criteria.json", tmp_path)
    error = raised.value
    assert error.path == str(file) and error.field == "1.evaluator_name"
    assert file.read_text().splitlines()[error.line - 1].strip().startswith('"evaluator_name": "builtin.coherence"')


def test_an_evaluator_option_error_is_placed_at_the_criterion_field(tmp_path):
    file = tmp_path / "criteria.yaml"
    file.write_text(json.dumps([{**CRITERION, "threshold": 9}], indent=2))
    criteria = _load("criteria.yaml", tmp_path)
    error = criteria.error("threshold 9 is outside the score range 1-5", ("evaluators", 0, "threshold"))
    assert error.field == "0.threshold" and file.read_text().splitlines()[error.line - 1].strip() == '"threshold": 9,'
    error = criteria.error("bad", ("evaluators", 0, "model"))
    assert error.field == "0.initialization_parameters.deployment_name"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("groundedness", "expected a mapping with type 'azure_ai_evaluator'"),
        ({**CRITERION, "type": "label_model"}, "unknown criterion type 'label_model'"),
        ({**CRITERION, "name": ""}, "every criterion needs a 'name'"),
        ({**CRITERION, "graders": []}, "unknown field"),
        ({**CRITERION, "evaluator_name": ["builtin.groundedness"]}, "unknown evaluator"),
        ({**CRITERION, "initialization_parameters": ["gpt-4o"]}, "expected a mapping"),
    ],
)
def test_invalid_criteria(tmp_path, entry, message):
    with pytest.raises(ConfigError, match=message):
        _load([entry], tmp_path)


def test_a_file_that_is_not_json(tmp_path):
    (tmp_path / "criteria.json").write_text("[{\n  'type': 1\n]")
    with pytest.raises(ConfigError, match="invalid JSON") as raised:
        _load("criteria.json", tmp_path)
    assert raised.value.line == 2
    with pytest.raises(ConfigError, match="not found"):
        _load("absent.json", tmp_path)


def test_a_json_file_repeating_a_key_is_refused_at_the_repeated_key(tmp_path):
    text = json.dumps([CRITERION], indent=2).replace('"threshold": 4,', '"threshold": 4,\n    "threshold": 1,')
    (tmp_path / "criteria.json").write_text(text)
    with pytest.raises(ConfigError, match="duplicate key 'threshold'") as raised:
        _load("criteria.json", tmp_path)
    assert raised.value.field == "0.threshold"
    assert text.splitlines()[raised.value.line - 1].strip() == '"threshold": 1,'


@pytest.mark.parametrize("text, line, field, message", [
    ('[\n  {"name": "g\\ud800"}\n]', 2, "0.name", "lone surrogate \\ud800"),
    ("[\n" + "[" * 5_000 + "]" * 5_000 + "\n]", 2, None, "nested more than 64 levels deep (column 64)"),
])
def test_a_json_file_is_held_to_the_limits(tmp_path, text, line, field, message):
    (tmp_path / "criteria.json").write_text(text)
    with pytest.raises(ConfigError) as raised:
        _load("criteria.json", tmp_path)
    assert (raised.value.line, raised.value.field) == (line, field) and message in raised.value.message


def test_a_criterion_name_holds_at_most_256_characters(tmp_path):
    assert _load([{**CRITERION, "name": "n" * 256}], tmp_path).entries[0]["criterion"] == "n" * 256
    with pytest.raises(ConfigError, match="at most 256 characters") as raised:
        _load([{**CRITERION, "name": "n" * 257}], tmp_path)
    assert raised.value.field == "testing_criteria.0.name"


def test_json_that_yaml_cannot_read_still_loads_without_lines(tmp_path):
    (tmp_path / "criteria.json").write_text("[\n\t" + json.dumps(CRITERION) + "\n]")
    criteria = _load("criteria.json", tmp_path)
    assert criteria.entries[0]["criterion"] == "groundedness" and criteria.lines == {}
