"""Canonical JSON, shared by content hashes and the store's JSON documents."""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oloproof.stages._identity
import oloproof.store
import oloproof.store._schema
from oloproof._exceptions import StoreError
from oloproof._json import canonical_json

NATIVE = [
    {"b": 1, "a": [1, "é", None, True, 2.5]},
    {"nested": {"z": {"y": [], "x": {}}}, "emoji": "☃ naïve", "quote": 'say "hi"\n'},
    [3, -0.0, 1e300, "", False],
    "plain",
    42,
    None,
]


def test_one_function_serves_the_store_and_the_identities():
    assert oloproof.store.canonical_json is canonical_json
    assert oloproof.store._schema.canonical_json is canonical_json
    assert oloproof.stages._identity.canonical_json is canonical_json


@pytest.mark.parametrize("value", NATIVE)
def test_native_values_serialise_exactly_as_before(value):
    # The text hashed into every existing cache key: it must never change.
    before = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == before
    digest = hashlib.sha256(before.encode("utf-8")).hexdigest()
    assert oloproof.stages._identity.content_hash(value) == digest


def test_text_is_sorted_compact_and_keeps_non_ascii():
    assert canonical_json({"b": 1, "a": {"é": [1, 2]}}) == '{"a":{"é":[1,2]},"b":1}'


def test_known_digest_is_stable():
    assert (
        oloproof.stages._identity.content_hash({"a": 1})
        == "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
    )


def test_numpy_scalars_and_arrays_become_python_values():
    value = {"i": np.int64(3), "f": np.float32(0.5), "b": np.bool_(True), "a": np.arange(3)}
    assert canonical_json(value) == '{"a":[0,1,2],"b":true,"f":0.5,"i":3}'
    assert canonical_json(np.array([[1.5], [2.0]])) == "[[1.5],[2.0]]"


@pytest.mark.parametrize("value", [object(), {1, 2}, b"bytes", dt.date(2025, 1, 1)])
def test_values_without_a_json_form_raise(value):
    with pytest.raises(StoreError, match="not JSON-serialisable"):
        canonical_json({"x": value})


def test_a_circular_value_raises():
    loop: list = []
    loop.append(loop)
    with pytest.raises(StoreError, match="not JSON-serialisable"):
        canonical_json(loop)


_JSON = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text() | st.sampled_from(["null", "1e-5", "0.00001", "x0.0000y", "NaN"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=1500, deadline=None)
@given(_JSON)
def test_any_json_value_serialises_as_json_dumps_does(value):
    # Floats of every magnitude (those below 1e-4 included), NaN and infinities, integers
    # past 64 bits, lone surrogates and text that looks like numbers or null: the fast
    # encoder's text is the text of every existing cache key, or json's own is used.
    before = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == before


@pytest.mark.parametrize("value", [1e-05, 1.2345e-07, 6.3e-300, -2.5e-05, float("nan"), float("-inf"), 2**64, "\ud800"])
def test_values_the_fast_encoder_writes_otherwise_are_written_as_before(value):
    before = json.dumps([value], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json([value]) == before


def test_a_key_that_is_not_text_is_written_as_before():
    assert canonical_json({2: "b", 1: "a"}) == '{"1":"a","2":"b"}'
