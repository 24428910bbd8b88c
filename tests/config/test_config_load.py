"""oloproof.yaml loading, --set overrides and error locations."""

from __future__ import annotations

import pytest

from oloproof._exceptions import ConfigError
from oloproof.config import apply_settings, load_project, parse_override, parse_overrides

YAML = """\
system:
  name: demo
  version: 1
  rag:
    object: app:Rag
    depth: 6
    top_k: 2
    index_version: 2026-09-16
dataset: cases.jsonl
evaluators:
  - {type: contains}
  - type: hit_rate
    k: 2
"""


def write(tmp_path, text: str = YAML):
    (tmp_path / "oloproof.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def test_load_reads_the_file_and_resolves_paths(tmp_path):
    project = load_project(write(tmp_path))
    config = project.config
    assert config.system.name == "demo"
    assert config.system.version == "1"  # YAML int read as a version string
    assert config.system.rag.index_version == "2026-09-16"  # YAML date read as text
    assert (config.system.rag.depth, config.system.rag.top_k, config.system.rag.token_budget) == (6, 2, None)
    assert config.evaluators == [{"type": "contains"}, {"type": "hit_rate", "k": 2}]
    assert project.directory == tmp_path.resolve()
    assert project.dataset_url == str((tmp_path / "cases.jsonl").resolve())
    assert project.results_url == str((tmp_path / ".oloproof" / "results").resolve())
    assert (config.max_concurrency, config.confidence, config.min_slice_support) == (8, 0.95, 4)


def test_load_accepts_the_file_path_itself(tmp_path):
    write(tmp_path)
    assert load_project(tmp_path / "oloproof.yaml").config.dataset == "cases.jsonl"


def test_remote_urls_are_kept(tmp_path):
    write(tmp_path, YAML + "results: s3://bucket/prefix\n")
    project = load_project(tmp_path, parse_overrides(["dataset=s3://bucket/cases.jsonl"]))
    assert project.results_url == "s3://bucket/prefix"
    assert project.dataset_url == "s3://bucket/cases.jsonl"


def test_overrides_are_yaml_typed_and_win(tmp_path):
    project = load_project(
        write(tmp_path),
        parse_overrides(["system.rag.token_budget=120", "system.rag.index_version=kb-2", "system.version=v2", "confidence=0.9"]),
    )
    rag = project.config.system.rag
    assert (rag.token_budget, rag.index_version) == (120, "kb-2")
    assert project.config.system.version == "v2"
    assert project.config.confidence == 0.9
    assert project.overridden == frozenset(
        {"system.rag.token_budget", "system.rag.index_version", "system.version", "confidence"}
    )


def test_parse_override():
    assert parse_override("a.b=3") == (["a", "b"], 3)
    assert parse_override("a=[1, 2]") == (["a"], [1, 2])
    assert parse_override("a=") == (["a"], None)
    assert parse_override("a=x: y: z") == (["a"], "x: y: z")  # not YAML: kept as text
    for bad in ("novalue", "=3", "a..b=1", ".a=1"):
        with pytest.raises(ConfigError) as raised:
            parse_override(bad)
        assert raised.value.path == "--set"
        assert raised.value.message == f"invalid override {bad!r}: expected key.path=value"


def test_parse_overrides_keeps_the_last_value_of_a_repeated_key():
    assert parse_overrides(["a.b=1", "c=x", "a.b=2"]) == {"c": "x", "a.b": 2}
    assert list(parse_overrides(["a.b=1", "c=x", "a.b=2"])) == ["c", "a.b"]


def test_settings_are_values_never_parsed_again(tmp_path):
    # A value given as a value stays the value: text that looks like YAML is not read.
    project = load_project(write(tmp_path), {"system.version": "[1, 2]", "results": "s3://b/p?x=1"})
    assert project.config.system.version == "[1, 2]"
    assert project.results_url == "s3://b/p?x=1"


def test_a_results_url_replaces_the_files_as_given(tmp_path):
    project = load_project(write(tmp_path, YAML + "results: s3://bucket/prefix\n"), results="s3://other/x: y")
    assert project.results_url == "s3://other/x: y"


def test_apply_settings_creates_mappings_and_refuses_scalars():
    data = {"system": {"name": "x"}, "dataset": "c.jsonl"}
    result, touched = apply_settings(data, {"system.rag.top_k": 3})
    assert result["system"] == {"name": "x", "rag": {"top_k": 3}}
    assert data == {"system": {"name": "x"}, "dataset": "c.jsonl"}  # the input is not changed
    assert touched == {"system.rag.top_k"}
    with pytest.raises(ConfigError) as raised:
        apply_settings(data, {"dataset.path": "x"})
    assert str(raised.value) == "--set: field 'dataset.path': cannot set dataset.path: dataset is not a mapping"


def test_a_bad_override_value_names_set_and_the_field(tmp_path):
    with pytest.raises(ConfigError) as raised:
        load_project(write(tmp_path), parse_overrides(["system.rag.top_k=abc"]))
    assert str(raised.value) == (
        "--set: field 'system.rag.top_k': Input should be a valid integer (got 'abc')"
    )


@pytest.mark.parametrize("value, shown", [("true", "True"), ("2.0", "2.0"), ("'2'", "'2'")])
def test_an_integer_setting_takes_integers_only(tmp_path, value, shown):
    # YAML's true is not 1: a boolean, a float or a quoted number is refused, not coerced.
    write(tmp_path, YAML.replace("top_k: 2", f"top_k: {value}"))
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path)
    assert raised.value.field == "system.rag.top_k" and raised.value.line is not None
    assert f"Input should be a valid integer (got {shown})" in str(raised.value)


NUMBERS = {  # every numeric setting of oloproof.yaml, and where it goes in the file
    "timeouts.generate": "timeouts: {generate: %s}",
    "timeouts.judge": "timeouts: {judge: %s}",
    "confidence": "confidence: %s",
    "max_concurrency": "max_concurrency: %s",
    "min_slice_support": "min_slice_support: %s",
    "batch_size": "batch_size: %s",
    "task_runner.n_workers": "task_runner: {type: dask, n_workers: %s}",
    "system.rag.token_budget": "system: {name: s, rag: {token_budget: %s}}",
    "providers.p.timeout_s": "providers: {p: {type: openai, base_url: 'http://h/v1', timeout_s: %s}}",
    "providers.p.max_retries": "providers: {p: {type: openai, base_url: 'http://h/v1', max_retries: %s}}",
    "providers.p.rate_window_s": "providers: {p: {type: openai, base_url: 'http://h/v1', rate_window_s: %s}}",
    "providers.p.prices.input_per_mtok":
        "providers: {p: {type: openai, base_url: 'http://h/v1', prices: {input_per_mtok: %s, output_per_mtok: 1}}}",
}  # fmt: skip


@pytest.mark.parametrize("field", sorted(NUMBERS))
@pytest.mark.parametrize("where", ["file", "set"])
def test_a_number_given_as_text_is_refused_never_coerced(tmp_path, field, where):
    # `timeouts: {generate: '10'}` was read as 10 seconds.
    setting = NUMBERS[field] % ("'0.75'" if field == "confidence" else "'3'")
    if where == "file":
        write(tmp_path, "dataset: cases.jsonl\n" + setting + "\n")
        with pytest.raises(ConfigError) as raised:
            load_project(tmp_path)
        assert raised.value.line == 2
    else:
        write(tmp_path, "dataset: cases.jsonl\n" + setting.replace("'0.75'", "0.75").replace("'3'", "3") + "\n")
        load_project(tmp_path)  # the same setting as a number loads
        with pytest.raises(ConfigError) as raised:
            load_project(tmp_path, parse_overrides([f"{field}='{'0.75' if field == 'confidence' else '3'}'"]))
        assert raised.value.path == "--set"
    assert raised.value.field == field
    assert "write the number unquoted" in raised.value.message or field.startswith("providers.")


def test_an_exponent_yaml_reads_as_text_says_how_to_write_it(tmp_path):
    write(tmp_path, "dataset: cases.jsonl\ntimeouts: {generate: 1e3}\n")
    with pytest.raises(ConfigError, match="only with a '.' and a sign, e.g. 1.0e\\+3"):
        load_project(tmp_path)
    write(tmp_path, "dataset: cases.jsonl\ntimeouts: {generate: 1.0e+3, judge: 5}\n")
    assert load_project(tmp_path).config.timeouts.seconds()["generate"] == 1000.0  # an integer is a number too


@pytest.mark.parametrize("field", ["system.name", "system.version", "system.rag.index_version",
                                   "system.rag.retriever_version"])  # fmt: skip
def test_a_name_holds_at_most_256_characters(tmp_path, field):
    # A 10 MB system.name was accepted, and hashed into every stage identity.
    settings = {"system.name": "s", "system.version": "v", field: "x" * 256}
    value = load_project(write(tmp_path, "dataset: cases.jsonl\n"), settings).config
    for part in field.split("."):
        value = getattr(value, part)
    assert value == "x" * 256
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path, {**settings, field: "x" * 10_000_000})
    assert raised.value.field == field and "at most 256 characters" in raised.value.message
    assert len(str(raised.value)) < 200


def test_a_provider_name_holds_at_most_256_characters(tmp_path):
    write(tmp_path, "dataset: cases.jsonl\nproviders:\n  " + "p" * 257 + ": {type: openai, base_url: 'http://h/v1'}\n")
    with pytest.raises(ConfigError, match="a provider name holds at most 256 characters") as raised:
        load_project(tmp_path)
    assert (raised.value.field, raised.value.line) == ("providers", 2)


@pytest.mark.parametrize("value", ["[1, 2]", "{a: 1}", "true"])
def test_a_name_is_text_never_a_list_or_mapping_written_out(tmp_path, value):
    write(tmp_path, YAML.replace("name: demo", f"name: {value}"))
    with pytest.raises(ConfigError, match="expected text") as raised:
        load_project(tmp_path)
    assert (raised.value.field, raised.value.line) == ("system.name", 2)


@pytest.mark.parametrize("override, field, message", [
    ("evaluators=" + "[" * 5_000 + "]" * 5_000, "evaluators", "nested more than 64 levels deep"),
    ("storage_options={a: 1, a: 2}", "storage_options.a", "duplicate key 'a'"),
    ("system.name=s\udcff", "system.name", "lone surrogate .udcff"),  # argv's undecodable byte
    ("storage_options." + ".".join(["a"] * 100) + "=1", None, "a key path of more than 64 parts"),
])  # fmt: skip
def test_a_set_value_is_held_to_the_files_limits(tmp_path, override, field, message):
    with pytest.raises(ConfigError, match=message) as raised:
        parse_overrides([override])
    assert raised.value.path == "--set" and "\n" not in str(raised.value)
    if field is not None:
        assert raised.value.field == field


def test_a_bad_file_value_names_file_line_and_field(tmp_path):
    write(tmp_path, YAML.replace("depth: 6", "depth: 0"))
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path)
    error = raised.value
    assert (error.path, error.line, error.field) == (str(tmp_path / "oloproof.yaml"), 6, "system.rag.depth")
    assert error.message == "Input should be greater than or equal to 1 (got 0)"


def test_unknown_and_missing_fields(tmp_path):
    write(tmp_path, YAML.replace("dataset: cases.jsonl\n", "datasets: cases.jsonl\n"))
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path)
    # A missing top-level field has no line of its own: the document's first line.
    assert str(raised.value) == f"{tmp_path / 'oloproof.yaml'}:1: field 'dataset': required field is missing"
    write(tmp_path, YAML + "colour: blue\n")
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path)
    assert str(raised.value) == f"{tmp_path / 'oloproof.yaml'}:14: field 'colour': unknown field"


def test_unknown_slice_is_rejected(tmp_path):
    write(tmp_path, YAML + "slices: [metadata.topic, topic]\n")
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path)
    assert raised.value.field == "slices"
    assert raised.value.line == 14
    assert raised.value.message == (
        "unknown slice 'topic': expected metadata.<field>, relevant_position or context_truncated"
    )


def test_invalid_yaml_names_the_line(tmp_path):
    write(tmp_path, YAML.replace("dataset: cases.jsonl", "dataset: cases.jsonl: extra"))
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path)
    assert str(raised.value) == (
        f"{tmp_path / 'oloproof.yaml'}:9: invalid YAML: mapping values are not allowed here"
    )


def test_missing_file_and_non_mapping(tmp_path):
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path)
    assert str(raised.value) == f"{tmp_path / 'oloproof.yaml'}: no oloproof.yaml found (expected a project folder)"
    write(tmp_path, "- a\n- b\n")
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path)
    assert str(raised.value) == f"{tmp_path / 'oloproof.yaml'}:1: expected a mapping at the top level"


def test_an_empty_file_reports_the_missing_fields(tmp_path):
    # Without a system the rows are recorded data, but a dataset is always needed.
    write(tmp_path, "")
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path)
    assert str(raised.value) == f"{tmp_path / 'oloproof.yaml'}: field 'dataset': required field is missing"


def test_a_folder_without_oloproof_yaml_is_a_project_when_the_dataset_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    project = load_project(tmp_path, {"dataset": str(tmp_path / "rows.jsonl")})
    assert project.config.system is None
    assert project.config.dataset == str(tmp_path / "rows.jsonl")
    assert {name: c.base_url for name, c in project.config.providers.items()} == {"openai": "http://127.0.0.1:9/v1"}
    with pytest.raises(ConfigError, match="no oloproof.yaml found"):
        load_project(tmp_path)


def test_error_points_at_set_only_for_overridden_fields(tmp_path):
    project = load_project(write(tmp_path), parse_overrides(["system.rag.top_k=1"]))
    assert str(project.error("bad", ("system", "rag", "top_k"))) == "--set: field 'system.rag.top_k': bad"
    assert str(project.error("bad", ("system", "rag", "depth"))) == (
        f"{tmp_path / 'oloproof.yaml'}:6: field 'system.rag.depth': bad"
    )
    # A location below an overridden key is the override's too.
    project = load_project(tmp_path, parse_overrides(["system.rag={object: app:Rag, depth: 3, top_k: 1, index_version: i}"]))
    assert str(project.error("bad", ("system", "rag", "depth"))) == "--set: field 'system.rag.depth': bad"


@pytest.mark.parametrize("where", ["file", "set"])
def test_an_empty_results_is_refused_not_read_as_the_default(tmp_path, where):
    if where == "file":
        write(tmp_path, YAML + 'results: ""\n')
        overrides = None
    else:
        write(tmp_path)
        overrides = parse_overrides(["results="])
    with pytest.raises(ConfigError) as raised:
        load_project(tmp_path, overrides)
    assert raised.value.field == "results"
    assert "must not be empty (leave the setting out for the default)" in str(raised.value)
