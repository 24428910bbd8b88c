"""``--grid`` axes: their values typed as ``--set`` values are, their product, their labels."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import oloproof.sweep
from oloproof._exceptions import ConfigError
from oloproof.config import parse_override
from oloproof.sweep import (
    DEFAULT_GRID_LIMIT,
    PROJECT_SETTINGS_LABEL,
    GridAxis,
    expand_grid,
    parse_grid,
    setting_label,
)


def grid_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_grid(text)
    assert caught.value.path == "--grid"
    assert "\n" not in str(caught.value)
    return caught.value


def test_the_public_names_are_sorted_and_importable():
    names = oloproof.sweep.__all__
    assert names == sorted(names, key=lambda name: (not name.isupper(), name))
    assert all(hasattr(oloproof.sweep, name) for name in names)


def test_a_grid_gives_its_key_and_values_in_order():
    axis = parse_grid("system.rag.top_k=1,2,3")
    assert axis == GridAxis(key="system.rag.top_k", values=(1, 2, 3))
    assert [type(value) for value in axis.values] == [int, int, int]


def test_values_are_typed_as_set_values_are():
    axis = parse_grid(" system.rag.mode = keyword, 0.5 ,true,null,'4',\"a b\",[1] ")
    assert axis.key == "system.rag.mode"
    assert axis.values == ("keyword", 0.5, True, None, "4", "a b", [1])
    for text, value in zip(["keyword", "0.5", "true", "null", "'4'"], axis.values, strict=False):
        assert parse_override(f"system.rag.mode={text}")[1] == value
    assert type(axis.values[1]) is float and type(axis.values[2]) is bool


def test_a_value_json_cannot_hold_is_kept_as_its_text_or_refused():
    assert parse_grid("run.date=2024-01-01,2024-02-01").values == ("2024-01-01", "2024-02-01")
    error = grid_error("a=1,.nan")
    assert error.field == "a" and "not a finite number" in error.message
    assert grid_error("a=.inf").field == "a"


def test_values_that_python_finds_equal_but_configure_different_things_are_both_kept():
    assert parse_grid("a=1,true").values == (1, True)
    assert parse_grid("a=0,false,null,''").values == (0, False, None, "")


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        pytest.param("system.rag.top_k", "system.rag.top_k", "expected key.path=value1,value2", id="no-equals"),
        pytest.param("=1,2", "=1,2", "expected key.path=value1,value2", id="empty-key"),
        pytest.param("  =1", "  =1", "expected key.path=value1,value2", id="blank-key"),
        pytest.param("top_k=", "top_k", "no values", id="no-values"),
        pytest.param("top_k=  ", "top_k", "no values", id="blank-values"),
        pytest.param("top_k=1,,2", "top_k", "an empty value", id="empty-value"),
        pytest.param("top_k=1,2,", "top_k", "an empty value", id="trailing-comma"),
        pytest.param("top_k=1, ,2", "top_k", "an empty value", id="blank-value"),
        pytest.param("top_k=1,2,1", "top_k", "the value 1 is repeated", id="repeated"),
        pytest.param("top_k=1,1.0", "top_k", "the value 1.0 is repeated", id="repeated-as-float"),
        pytest.param("mode=keyword,'keyword'", "mode", "the value keyword is repeated", id="repeated-quoted"),
        pytest.param("a..b=1", "a..b", "invalid grid 'a..b=1': expected key.path=value1", id="empty-key-part"),
        pytest.param(".a=1", ".a", "expected key.path=value1", id="leading-dot"),
    ],
)
def test_a_bad_grid_is_one_error_naming_the_key(text, field, words):
    error = grid_error(text)
    assert error.field == field
    assert words in error.message


def test_a_key_too_deep_is_refused_as_set_refuses_it():
    error = grid_error(".".join(["a"] * 80) + "=1,2")
    assert "more than 64 parts" in error.message


def test_the_product_runs_in_the_axes_order_first_axis_slowest():
    axes = [parse_grid("system.rag.top_k=1,2"), parse_grid("system.rag.token_budget=120,200,400")]
    settings_ = expand_grid(axes)
    assert settings_ == [
        {"system.rag.top_k": 1, "system.rag.token_budget": 120},
        {"system.rag.top_k": 1, "system.rag.token_budget": 200},
        {"system.rag.top_k": 1, "system.rag.token_budget": 400},
        {"system.rag.top_k": 2, "system.rag.token_budget": 120},
        {"system.rag.top_k": 2, "system.rag.token_budget": 200},
        {"system.rag.top_k": 2, "system.rag.token_budget": 400},
    ]
    assert all(list(setting) == ["system.rag.top_k", "system.rag.token_budget"] for setting in settings_)


def test_settings_do_not_share_a_container_value():
    first, second = expand_grid([parse_grid("a=[1],[2]"), parse_grid("b=x,y")])[:2]
    first["a"].append(9)  # type: ignore[union-attr]
    assert second["a"] == [1]


def test_no_axes_is_an_error():
    with pytest.raises(ConfigError, match="no grid") as caught:
        expand_grid([])
    assert caught.value.path == "--grid"


def test_a_key_named_by_two_axes_is_an_error():
    with pytest.raises(ConfigError, match="named by two --grid axes") as caught:
        expand_grid([parse_grid("system.rag.top_k=1,2"), parse_grid("x=1"), parse_grid("system.rag.top_k=3")])
    assert (caught.value.path, caught.value.field) == ("--grid", "system.rag.top_k")


def test_a_key_inside_another_axis_key_is_an_error():
    for axes in (["system.rag={top_k: 1}", "system.rag.top_k=2"], ["system.rag.top_k=2", "system.rag={top_k: 1}"]):
        with pytest.raises(ConfigError, match="inside system.rag") as caught:
            expand_grid([parse_grid(text) for text in axes])
        assert caught.value.field == "system.rag.top_k"
    # A shared prefix that is not a whole key part is no conflict.
    assert len(expand_grid([parse_grid("system.rag=1,2"), parse_grid("system.ragged=3")])) == 2


def test_more_settings_than_the_limit_need_yes():
    axes = [parse_grid(f"k{index}=1,2") for index in range(9)]  # 512 settings
    with pytest.raises(ConfigError) as caught:
        expand_grid(axes)
    assert caught.value.path == "--grid"
    assert "512 settings" in caught.value.message and f"more than {DEFAULT_GRID_LIMIT}" in caught.value.message
    assert "--yes" in caught.value.message
    assert len(expand_grid(axes, allow_more=True)) == 512
    assert len(expand_grid(axes[:8])) == 256 == DEFAULT_GRID_LIMIT
    with pytest.raises(ConfigError, match="4 settings, more than 3"):
        expand_grid(axes[:2], limit=3)


def test_an_axis_built_by_hand_is_held_to_the_same_rules():
    with pytest.raises(ConfigError, match="no values") as caught:
        expand_grid([GridAxis(key="a", values=())])
    assert caught.value.field == "a"
    with pytest.raises(ConfigError, match="repeated"):
        expand_grid([GridAxis(key="a", values=(1, 2, 1))])


def test_an_axis_is_frozen_and_strict():
    axis = parse_grid("a=1")
    with pytest.raises(ValidationError):
        axis.key = "b"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        GridAxis(key="a", values=(1,), other=2)  # type: ignore[call-arg]
    assert GridAxis.model_fields["values"].description


def test_a_label_names_each_key_by_its_last_part():
    assert setting_label({"system.rag.top_k": 4, "system.rag.token_budget": 120}) == "top_k=4 token_budget=120"
    assert setting_label({"mode": "keyword"}) == "mode=keyword"


def test_a_label_names_keys_in_full_where_their_last_parts_clash():
    setting = {"system.rag.top_k": 4, "judges.rerank.top_k": 2, "system.rag.token_budget": 120}
    assert setting_label(setting) == "system.rag.top_k=4 judges.rerank.top_k=2 token_budget=120"


def test_a_label_shows_values_as_compact_json_and_plain_text_as_it_is():
    setting = {"a": 0.5, "b": True, "c": None, "d": [1, "x"], "e": {"k": 1}, "f": "gpt-4o-mini", "g": "café"}
    assert setting_label(setting) == 'a=0.5 b=true c=null d=[1,"x"] e={"k":1} f=gpt-4o-mini g=café'


@pytest.mark.parametrize(
    ("value", "shown"),
    [("4", '"4"'), ("true", '"true"'), ("null", '"null"'), ("a b", '"a b"'), ("", '""'), ("1e-05", '"1e-05"'),
     ("2024-01-01", '"2024-01-01"'), ("a,b", '"a,b"'), ("line\nbreak", '"line\\nbreak"'), ("[1]", '"[1]"')],
)  # fmt: skip
def test_text_that_would_read_as_another_value_is_quoted(value, shown):
    assert setting_label({"a": value}) == f"a={shown}"


def test_the_empty_setting_is_the_project_s_own():
    assert setting_label({}) == PROJECT_SETTINGS_LABEL == "(project settings)"


KEYS = st.lists(st.sampled_from(["a", "b", "top_k"]), min_size=1, max_size=3).map(".".join)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)


def _same(value: object) -> tuple[str, object]:
    # Values a grid refuses as repeats: 1 and 1.0 are one; True and 1 are two.
    if isinstance(value, bool) or value is None:
        return ("constant", value)
    return (type(value).__name__ if isinstance(value, str) else "number", value)


AXES = st.lists(
    st.tuples(KEYS, st.lists(SCALARS, min_size=1, max_size=4, unique_by=_same)),
    min_size=1, max_size=4, unique_by=lambda axis: axis[0],
).filter(lambda axes: not any(a != b and b.startswith(a + ".") for a, _ in axes for b, _ in axes))  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(axes=AXES)
def test_the_product_has_every_setting_once_each_with_its_own_label(axes):
    grid = [GridAxis(key=key, values=tuple(values)) for key, values in axes]
    settings_ = expand_grid(grid)
    assert len(settings_) == math.prod(len(values) for _, values in axes)
    labels = [setting_label(setting) for setting in settings_]
    assert len(set(labels)) == len(labels)
    assert all("\n" not in label for label in labels)
