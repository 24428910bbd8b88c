"""Packed stage records: written together, found by key through the stage's index."""

from __future__ import annotations

import json
import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest

from oloproof._exceptions import StoreError
from oloproof.store import ObjectStore, PackWriter, ResultsStore, cache_path, pack_index_path, pack_path
from oloproof.store._packs import PackIndex, new_pack_id, segment_body
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


def _name(n: int) -> str:
    return f"{n:026d}"


def test_the_newest_word_on_a_key_wins_whatever_the_reading_order():
    index = PackIndex()
    index.apply("s2", segment_body({_name(2): ["k"]}))
    index.apply("s1", segment_body({_name(1): ["k", "j"]}))
    index.apply("s3", segment_body({}, {_name(3): ["j"]}))
    assert (index.pack_of("k"), index.pack_of("j")) == (_name(2), None)
    assert index.keys() == {"k"}
    with pytest.raises(StoreError, match="invalid index segment") as caught:
        index.apply("s4", {"packs": {_name(4): "k"}, "removed": {}}, "file:///x/index/s4.json")
    assert caught.value.path == "file:///x/index/s4.json"
    with pytest.raises(StoreError):
        index.apply("s5", segment_body({"../../x": ["k"]}))


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
    assert reader.get_records("retrieve", [_key(1), _key(1000)]) == {_key(1): {"n": -1}}


def test_a_write_that_lands_after_a_merge_still_wins_over_what_the_merge_carries(root, monkeypatch):
    store = ResultsStore(root)
    store.put_records("judge", {_key(1): {"v": "old"}, _key(2): {"v": "old"}})
    # Two writes named now that land late: a rewrite of key 1, a removal of key 2.
    late = [new_pack_id() for _ in range(2)]
    for n in range(COMPACT_AT + 1):
        store.put_records("judge", {_key(100 + n): {"n": n}})
    ResultsStore(root).get_record("judge", _key(100))  # merges what it lists
    assert len(store.objects.list_children("cache/judge/index")) == 1
    store.write_json(pack_path("judge", late[0]), {_key(1): {"v": "new"}})
    store.write_json(pack_index_path("judge", late[0]), segment_body({late[0]: [_key(1)]}))
    store.write_json(pack_index_path("judge", late[1]), segment_body({}, {late[1]: [_key(2)]}))
    assert ResultsStore(root).get_records("judge", [_key(1), _key(2)]) == {_key(1): {"v": "new"}}


def test_a_reader_that_may_not_write_still_reads_past_the_merge_limit(root, monkeypatch):
    writer = ResultsStore(root)
    for n in range(COMPACT_AT + 2):
        writer.put_records("judge", {_key(n): {"n": n}})
    reader = ResultsStore(root)
    real = ObjectStore.write_json

    def refuse(self, relpath, value, **kwargs):
        if self is reader.objects:
            raise StoreError("AccessDenied: PutObject", path=relpath)
        return real(self, relpath, value, **kwargs)

    monkeypatch.setattr(ObjectStore, "write_json", refuse)
    assert reader.get_records("judge", [_key(0), _key(COMPACT_AT + 1)]) == {_key(0): {"n": 0}, _key(COMPACT_AT + 1): {"n": COMPACT_AT + 1}}
    assert len(reader.objects.list_children("cache/judge/index")) == COMPACT_AT + 2  # nothing merged, nothing lost


def test_a_pack_gone_or_not_yet_visible_is_a_miss_for_that_read_only(root):
    store = ResultsStore(root)
    store.put_records("generate", {_key(1): {"v": 1}})
    pack = next(p for p in store.list_paths("cache") if "/packs/" in p)
    data = store.read_bytes(pack)
    store.objects.remove_many([pack])
    reader = ResultsStore(root)
    assert reader.get_records("generate", [_key(1)]) == {}
    store.write_bytes(pack, data)  # visible again (an eventually consistent store)
    assert reader.get_records("generate", [_key(1)]) == {_key(1): {"v": 1}}
    for n in range(COMPACT_AT + 1):  # and a merge by that reader keeps the key
        store.put_records("generate", {_key(100 + n): {"n": n}})
    store.objects.remove_many([pack])
    assert reader.get_records("generate", [_key(1), _key(2)]) == {}
    store.write_bytes(pack, data)
    assert ResultsStore(root).get_record("generate", _key(1)) == {"v": 1}


def test_single_records_written_by_another_process_are_found_and_removed(root):
    early = ResultsStore(root)
    assert early.get_records("tool", [_key(1)]) == {}  # no single records yet, as far as it knows
    ResultsStore(root).put_record("tool", _key(1), {"result": "from another"})
    assert early.get_records("tool", [_key(1)]) == {_key(1): {"result": "from another"}}
    fresh = ResultsStore(root)
    fresh.remove_records("tool", [_key(1)])
    assert ResultsStore(root).get_records("tool", [_key(1)]) == {}
    assert early.get_records("tool", [_key(1)]) == {}


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
    torn = _name(1)
    store.write_bytes(pack_path("judge", torn), b'{"' + _key(1).encode() + b'": {"v"')
    store.write_json(pack_index_path("judge", torn), segment_body({torn: [_key(1)]}))
    with pytest.raises(StoreError) as caught:
        ResultsStore(root).get_records("judge", [_key(1)])
    assert caught.value.path is not None and caught.value.path.endswith(f"packs/{torn}.json")
    store.write_bytes(pack_index_path("judge", "P2"), b"[1]")
    with pytest.raises(StoreError) as caught:
        ResultsStore(root).get_records("judge", [_key(1)])
    assert caught.value.path is not None and caught.value.path.endswith("index/P2.json")


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


def test_records_stored_alone_are_read_without_the_index(root):
    store = ResultsStore(root)
    store.put_record("tool", _key(1), {"result": 1})
    reader = ResultsStore(root)
    assert reader.records.get_singles("tool", [_key(1), _key(2)]) == {_key(1): {"result": 1}}
    assert reader.get_records("tool", [_key(1)]) == {_key(1): {"result": 1}}
