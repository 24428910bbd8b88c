"""Object I/O over fsspec: atomic writes, reads, existence and listings."""

from __future__ import annotations

import os
import uuid

import pytest

from oloproof._exceptions import NotFoundError, StoreError
from oloproof.store import ObjectStore, StoreLocation, _objects


@pytest.fixture(params=["local", "memory"])
def objects(request, tmp_path) -> ObjectStore:
    """Objects in a fresh local directory or in-memory filesystem."""
    if request.param == "local":
        url = str(tmp_path / "results")
    else:
        url = f"memory://oloproof-{uuid.uuid4().hex}/results"
    return ObjectStore(StoreLocation(url))


def test_bytes_round_trip_and_overwrite(objects):
    objects.write_bytes("a/b.bin", b"one")
    objects.write_bytes("a/b.bin", bytearray(b"two"))
    assert objects.read_bytes("a/b.bin") == b"two"
    assert objects.exists("a/b.bin") and objects.exists("a")
    assert not objects.exists("a/c.bin")


def test_missing_objects_are_not_found(objects):
    with pytest.raises(NotFoundError) as caught:
        objects.read_bytes("nope/x.json")
    assert caught.value.path == objects.location.url_for("nope/x.json")


def test_read_many_returns_what_exists(objects):
    objects.write_bytes("x/1", b"1")
    objects.write_bytes("x/2", b"2")
    assert objects.read_many(["x/1", "x/2", "x/3"]) == {"x/1": b"1", "x/2": b"2"}
    assert objects.read_many(["x/2"]) == {"x/2": b"2"}
    assert objects.read_many(["x/3"]) == {}
    assert objects.read_many([]) == {}


def test_list_paths_is_sorted_relative_and_recursive(objects):
    for path in ["runs/r2/run.json", "runs/r1/cases.parquet", "cache/s/ab/abc.json"]:
        objects.write_bytes(path, b"{}")
    assert objects.list_paths() == ["cache/s/ab/abc.json", "runs/r1/cases.parquet", "runs/r2/run.json"]
    assert objects.list_paths("runs/") == ["runs/r1/cases.parquet", "runs/r2/run.json"]
    assert objects.list_paths("runs/r1") == ["runs/r1/cases.parquet"]
    assert objects.list_paths("comparisons") == []


def test_list_paths_leaves_out_writes_in_progress(tmp_path):
    objects = ObjectStore(StoreLocation(str(tmp_path)))
    objects.write_bytes("a/done.json", b"{}")
    (tmp_path / "a" / ".next.json.0123abcd.tmp").write_bytes(b"partial")
    (tmp_path / "a" / ".kept").write_bytes(b"a dot file that is not a write")
    assert objects.list_paths("a") == ["a/.kept", "a/done.json"]


def test_json_is_canonical_utf8(objects):
    objects.write_json("doc.json", {"z": 1, "a": "é"})
    assert objects.read_bytes("doc.json") == '{"a":"é","z":1}'.encode()
    assert objects.read_json("doc.json") == {"a": "é", "z": 1}


def test_invalid_json_names_the_object(objects):
    objects.write_bytes("bad.json", b"\xff{")
    with pytest.raises(StoreError, match="invalid JSON") as caught:
        objects.read_json("bad.json")
    assert caught.value.path == objects.location.url_for("bad.json")


def test_parse_json_says_what_the_content_is():
    with pytest.raises(StoreError, match="^u: invalid manifest JSON: "):
        _objects.parse_json(b"{", "u", what="manifest JSON")


def test_values_that_are_not_json_are_not_written(objects):
    with pytest.raises(StoreError, match="not JSON-serialisable"):
        objects.write_json("x.json", {"x": object()})
    assert not objects.exists("x.json")


@pytest.mark.parametrize("durable, synced", [(True, 1), (False, 0)])
def test_only_durable_local_writes_are_flushed_to_disk(tmp_path, monkeypatch, durable, synced):
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd)))
    objects = ObjectStore(StoreLocation(str(tmp_path)))
    objects.write_json("r.json", {"a": 1}, durable=durable)
    assert len(calls) == synced
    assert objects.read_json("r.json") == {"a": 1}


def test_an_unreadable_local_object_is_a_store_error(tmp_path):
    objects = ObjectStore(StoreLocation(str(tmp_path)))
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(StoreError) as caught:
        objects.read_many(["dir.json"])
    assert not isinstance(caught.value, NotFoundError)
    assert "dir.json" in str(caught.value)
