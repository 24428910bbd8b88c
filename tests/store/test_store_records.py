"""The stage-record cache, on its own."""

from __future__ import annotations

import os

import pytest

from oloproof._exceptions import StoreError
from oloproof.store import ObjectStore, RecordCache, StoreLocation, cache_path

KEY = "cd" + "1" * 62


@pytest.fixture
def records(tmp_path) -> RecordCache:
    return RecordCache(ObjectStore(StoreLocation(str(tmp_path / "results"))))


def test_records_live_under_the_cache_layout(records):
    records.put_record("judge", KEY, {"é": [1, 2]})
    # The record, and the mark that tells every reader the stage has records stored alone.
    assert records.objects.list_paths() == [cache_path("judge", KEY), "cache/judge/index/singles.json"]
    assert records.objects.read_bytes(cache_path("judge", KEY)) == '{"é":[1,2]}'.encode()
    assert records.get_record("judge", KEY) == {"é": [1, 2]}


def test_stages_do_not_share_records(records):
    records.put_record("retrieve", KEY, {"stage": "retrieve"})
    assert records.get_record("generate", KEY) is None
    assert records.get_records("generate", [KEY]) == {}


def test_records_are_not_flushed_to_disk(records, monkeypatch):
    # They can be recomputed: an atomic rename is all they need.
    def refuse(fd):
        raise AssertionError("a stage record was fsynced")

    monkeypatch.setattr(os, "fsync", refuse)
    records.put_record("retrieve", KEY, {"ok": True})
    assert records.get_record("retrieve", KEY) == {"ok": True}


def test_a_stored_record_that_is_not_an_object_is_an_error(records):
    records.objects.write_bytes(cache_path("retrieve", KEY), b"[1, 2]")
    with pytest.raises(StoreError, match="must be a JSON object, got list") as caught:
        records.get_record("retrieve", KEY)
    assert caught.value.path == records.objects.location.url_for(cache_path("retrieve", KEY))
    with pytest.raises(StoreError, match="must be a JSON object"):
        records.get_records("retrieve", [KEY])


def test_a_record_that_is_not_json_is_not_written(records):
    with pytest.raises(StoreError, match="not JSON-serialisable"):
        records.put_record("retrieve", KEY, {"x": object()})
    assert records.get_record("retrieve", KEY) is None
