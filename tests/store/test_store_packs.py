"""Packed stage records: written together, found by key through the stage's index."""

from __future__ import annotations

import json
import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest

from oloproof._exceptions import StoreError
from oloproof.store import PackWriter, ResultsStore, cache_path, pack_index_path, pack_path
from oloproof.store._packs import PackIndex, segment_body
from oloproof.store._records import COMPACT_AT


def _key(n: int) -> str:
    return f"{n:064x}"


@pytest.fixture
def root(tmp_path) -> str:
    return str(tmp_path / "store")


def test_records_written_together_are_one_pack_and_one_segment(root):
    store = ResultsStore(root)
    store.put_records("generate", {_key(1): {"output": 1}, _key(2): {"output": 2}})
    paths = store.list_paths("cache")
    assert len(paths) == 2 and {p.split("/")[2] for p in paths} == {"packs", "index"}
    pack = next(p for p in paths if "/packs/" in p)
    assert json.loads(store.read_bytes(pack)) == {_key(1): {"output": 1}, _key(2): {"output": 2}}
    # A reader of its own (another process) finds them; a key no pack holds is a miss.
    reader = ResultsStore(root)
    assert reader.get_records("generate", [_key(1), _key(3), _key(2)]) == {_key(1): {"output": 1}, _key(2): {"output": 2}}
    assert reader.record_keys("generate") == {_key(1), _key(2)}


def test_the_newest_word_on_a_key_wins_whatever_the_reading_order():
    index = PackIndex()
    index.apply("02", segment_body({"p2": ["k"]}))
    index.apply("01", segment_body({"p1": ["k", "j"]}))
    index.apply("03", segment_body({}, removed=["j"]))
    assert (index.pack_of("k"), index.pack_of("j")) == ("p2", None)
    assert index.keys() == {"k"}
    with pytest.raises(StoreError):
        index.apply("04", {"packs": {"p": "k"}})


def test_a_removed_record_is_a_miss_and_can_be_written_again(root):
    store = ResultsStore(root)
    store.put_records("judge", {_key(1): {"v": 1}, _key(2): {"v": 2}})
    store.remove_records("judge", [_key(1)])
    assert ResultsStore(root).get_records("judge", [_key(1), _key(2)]) == {_key(2): {"v": 2}}
    store.put_records("judge", {_key(1): {"v": 3}})
    assert ResultsStore(root).get_record("judge", _key(1)) == {"v": 3}


def test_many_segments_are_merged_and_every_record_still_found(root):
    writer = ResultsStore(root)
    for n in range(COMPACT_AT + 6):
        writer.put_records("retrieve", {_key(n): {"n": n}})
    writer.remove_records("retrieve", [_key(0)])
    reader = ResultsStore(root)
    wanted = [_key(n) for n in range(COMPACT_AT + 6)]
    assert reader.get_records("retrieve", wanted) == {_key(n): {"n": n} for n in range(1, COMPACT_AT + 6)}
    segments = reader.objects.list_children("cache/retrieve/index")
    assert len(segments) == 1, segments  # merged into one, the others removed
    # A later writer's segment and a third reader: the merge and the new pack both count.
    writer.put_records("retrieve", {_key(999): {"n": 999}, _key(1): {"n": -1}})
    third = ResultsStore(root)
    assert third.get_records("retrieve", [_key(0), _key(1), _key(999)]) == {_key(1): {"n": -1}, _key(999): {"n": 999}}
    # The first reader applies only what is new to it.
    assert reader.get_record("retrieve", _key(1)) == {"n": -1}


def test_a_pack_gone_behind_the_index_is_a_miss(root):
    store = ResultsStore(root)
    store.put_records("generate", {_key(1): {"v": 1}})
    pack = next(p for p in store.list_paths("cache") if "/packs/" in p)
    store.objects.remove_many([pack])
    assert store.get_records("generate", [_key(1)]) == {}
    assert ResultsStore(root).get_records("generate", [_key(1)]) == {}


def test_records_stored_alone_and_by_stores_before_packs_are_found_beside_packs(root):
    store = ResultsStore(root)
    store.write_json(cache_path("generate", _key(7)), {"v": "old"})  # a store written before packs
    store.put_records("generate", {_key(1): {"v": 1}})
    reader = ResultsStore(root)
    assert reader.get_records("generate", [_key(1), _key(7)]) == {_key(1): {"v": 1}, _key(7): {"v": "old"}}
    assert reader.record_keys("generate") == {_key(1), _key(7)}
    reader.remove_records("generate", [_key(7)])
    assert ResultsStore(root).get_records("generate", [_key(7)]) == {}


def test_a_torn_pack_or_segment_is_one_error_naming_it(root):
    store = ResultsStore(root)
    store.write_bytes(pack_path("judge", "P1"), b'{"' + _key(1).encode() + b'": {"v"')
    store.write_json(pack_index_path("judge", "P1"), segment_body({"P1": [_key(1)]}))
    with pytest.raises(StoreError) as caught:
        ResultsStore(root).get_records("judge", [_key(1)])
    assert caught.value.path is not None and caught.value.path.endswith("packs/P1.json")
    store.write_bytes(pack_index_path("judge", "P2"), b"[1]")
    with pytest.raises(StoreError, match="P2"):
        ResultsStore(root).get_records("judge", [_key(1)])


def test_the_writer_flushes_when_full_and_at_the_end(root):
    store = ResultsStore(root)
    writer = PackWriter(store.records, "judge", max_records=3, max_seconds=3600)
    for n in range(7):
        writer.add(_key(n), {"n": n})
    assert len(store.objects.list_children("cache/judge/packs")) == 2
    writer.flush()
    writer.flush()  # nothing pending: nothing written
    assert len(store.objects.list_children("cache/judge/packs")) == 3
    assert len(ResultsStore(root).get_records("judge", [_key(n) for n in range(7)])) == 7
    aged = PackWriter(store.records, "retrieve", max_records=100, max_seconds=0)
    aged.add(_key(1), {"n": 1})
    assert store.record_keys("retrieve") == {_key(1)}


def test_writers_in_many_threads_and_a_pickled_copy(root):
    store = ResultsStore(root)

    def write(n: int) -> None:
        store.put_records("execute", {_key(n * 10 + i): {"n": n * 10 + i} for i in range(10)})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(write, range(20)))
    copy = pickle.loads(pickle.dumps(store))
    assert copy.record_keys("execute") == {_key(n) for n in range(200)}


def test_what_one_process_writes_later_wins_even_within_one_millisecond(root):
    store = ResultsStore(root)
    for n in range(100):  # many writes a millisecond: the names alone must keep their order
        store.put_records("judge", {_key(1): {"v": n}})
        store.remove_records("judge", [_key(1)])
        store.put_records("judge", {_key(1): {"v": -n}})
    assert ResultsStore(root).get_record("judge", _key(1)) == {"v": -99}
