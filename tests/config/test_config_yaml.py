"""YAML loading: line maps; aliases that expand past any sane size, nesting past the
limit, repeated keys and text that is not valid Unicode refused in one line."""

from __future__ import annotations

import pytest

from oloproof._exceptions import ConfigError
from oloproof._limits import MAX_DEPTH
from oloproof.comparison import load_policy
from oloproof.config import load_project
from oloproof.config._criteria import load_criteria
from oloproof.config._yaml import MAX_VALUES, load_yaml_with_lines


def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        aliases = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_in_one_line_naming_the_file(tmp_path):
    project = tmp_path / "oloproof.yaml"
    project.write_text("dataset: cases.jsonl\nunknown_section:\n" + "".join(
        "  " + line + "\n" for line in _laughs().splitlines()), encoding="utf-8")  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        load_project(tmp_path)
    error = caught.value
    assert error.path == str(project) and error.line is not None
    assert f"expands to more than {MAX_VALUES:,} values" in str(error)
    assert "\n" not in str(error)


def test_modest_aliases_still_load():
    text = "defaults: &d {top_k: 2, depth: 6}\nrag:\n  <<: *d\n  token_budget: 40\nagain: [*d, *d]\n"
    data, lines = load_yaml_with_lines(text, path="x.yaml")
    assert data["rag"] == {"top_k": 2, "depth": 6, "token_budget": 40}
    assert lines[("rag", "token_budget")] == 4 and lines[("again",)] == 5


def test_the_bound_counts_expanded_values():
    # Six levels of nine: 9**6 = 531,441 values, past the bound; five levels pass.
    data, _ = load_yaml_with_lines(_laughs(5), path="x.yaml")
    assert len(data["a4"]) == 9
    with pytest.raises(ConfigError, match="expands to more than"):
        load_yaml_with_lines(_laughs(6), path="x.yaml")


@pytest.mark.parametrize("name, loader", [
    ("oloproof.yaml", lambda path: load_project(path.parent)),
    ("compare.yaml", lambda path: __import__("oloproof.comparison", fromlist=["load_policy"]).load_policy(path)),
])
def test_a_file_that_is_not_utf8_is_one_line_naming_its_line(tmp_path, name, loader):
    path = tmp_path / name
    path.write_bytes(b"# settings\nconfidence: 0.95\nnote: caf\xe9\n")
    with pytest.raises(ConfigError) as caught:
        loader(path)
    assert (caught.value.path, caught.value.line) == (str(path), 3)
    assert str(caught.value) == f"{path}:3: not UTF-8 text (byte 0xe9): save the file as UTF-8"


LOADERS = [
    ("oloproof.yaml", lambda path: load_project(path.parent)),
    ("compare.yaml", lambda path: load_policy(path)),
    ("criteria.yaml", lambda path: load_criteria(path.name, directory=path.parent, config_path="oloproof.yaml",
                                                config_lines={}, providers={})),
]  # fmt: skip


def _refused(tmp_path, name, loader, text: str) -> ConfigError:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        loader(path)
    assert caught.value.path == str(path) and "\n" not in str(caught.value)
    return caught.value


@pytest.mark.parametrize("name, loader", LOADERS)
@pytest.mark.parametrize("nested", ["[" * 5_000 + "]" * 5_000, "{a: " * 100_000 + "1" + "}" * 100_000,
                                    "\n" + "".join("  " * level + f"k{level}:\n" for level in range(2_000)) + "  " * 2_000 + "x"],
                         ids=["flow list", "flow mapping", "block mapping"])  # fmt: skip
def test_deep_nesting_is_one_line_naming_the_line_not_a_recursion_error(tmp_path, name, loader, nested):
    error = _refused(tmp_path, name, loader, "dataset: cases.jsonl\nx: " + nested + "\n")
    assert f"nested more than {MAX_DEPTH} levels deep" in error.message and error.line is not None


def test_nesting_through_aliases_is_counted_as_expanded():
    lines = ["a0: &a0 [1]"] + [f"a{level}: &a{level} [*a{level - 1}]" for level in range(1, MAX_DEPTH + 1)]
    with pytest.raises(ConfigError, match=f"nested more than {MAX_DEPTH} levels deep \\(aliases expanded\\)"):
        load_yaml_with_lines("\n".join(lines), path="x.yaml")
    data, _ = load_yaml_with_lines("\n".join(lines[:10]), path="x.yaml")
    assert data["a9"] == [[[[[[[[[[1]]]]]]]]]]
    with pytest.raises(ConfigError, match="nested more than"):  # an alias of its own mapping: no end to it
        load_yaml_with_lines("a: &a {b: *a}\n", path="x.yaml")


@pytest.mark.parametrize("name, loader", LOADERS)
def test_a_repeated_key_is_refused_never_the_last_one_kept(tmp_path, name, loader):
    error = _refused(tmp_path, name, loader, "dataset: a.jsonl\nmax_concurrency: 2\ndataset: b.jsonl\n")
    assert (error.line, error.field) == (3, "dataset") and "duplicate key 'dataset'" in error.message


def test_keys_are_compared_as_the_mapping_holds_them():
    for text, line in (("m:\n  1: a\n  0x1: b\n", 3), ("m: {x: 1, 'x': 2}\n", 1), ("m: {1: a, true: b}\n", 1)):
        with pytest.raises(ConfigError, match="duplicate key") as caught:
            load_yaml_with_lines(text, path="x.yaml")
        assert caught.value.line == line and caught.value.field.startswith("m.")
    data, _ = load_yaml_with_lines("m: {1: a, '1': b}\n", path="x.yaml")  # an int and a string: two keys
    assert data == {"m": {1: "a", "1": "b"}}
    # A merge's keys may be overridden: that is what a merge is for.
    data, _ = load_yaml_with_lines("d: &d {k: 1, j: 2}\nm:\n  <<: *d\n  k: 3\n", path="x.yaml")
    assert data["m"] == {"k": 3, "j": 2}


@pytest.mark.parametrize("name, loader", LOADERS)
def test_a_lone_surrogate_escape_is_refused_naming_line_and_field(tmp_path, name, loader):
    error = _refused(tmp_path, name, loader, 'dataset: cases.jsonl\nsystem:\n  name: "s\\ud800"\n')
    assert (error.line, error.field) == (3, "system.name") and "lone surrogate \\ud800" in error.message
    error = _refused(tmp_path, name, loader, 'dataset: cases.jsonl\n"\\udc00": 1\n')
    assert (error.line, error.field) == (2, "\\udc00")


def test_a_scalar_its_tag_cannot_read_is_one_line_naming_its_line():
    for text in ("a: 1\nb: !!int abc\n", "a: 1\nb: 2020-13-45\n"):
        with pytest.raises(ConfigError, match="invalid YAML: cannot read") as caught:
            load_yaml_with_lines(text, path="x.yaml")
        assert caught.value.line == 2


def test_a_surrogate_pair_escape_is_the_one_character_it_stands_for():
    # JSON, and so a JSON-minded YAML file, writes U+1F600 as "\ud83d\ude00".
    data, _ = load_yaml_with_lines('a: "\\ud83d\\ude00"\n', path="x.yaml")
    assert data == {"a": "\U0001f600"}
    with pytest.raises(ConfigError, match="lone surrogate \\\\ude00"):
        load_yaml_with_lines('a: "\\ude00\\ud83d"\n', path="x.yaml")
