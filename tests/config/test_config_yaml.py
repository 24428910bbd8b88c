"""YAML loading: line maps, and aliases that expand past any sane size refused."""

from __future__ import annotations

import pytest

from oloproof._exceptions import ConfigError
from oloproof.config import load_project
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
