"""The stage-record cache: stage records by stage and identity key.

Records written together (a batch's, see :class:`PackWriter`) share one object, a
*pack*, found through the stage's index (:mod:`oloproof.store._packs`); a record
written alone (an agent's tool result) and every record of a store written before
packs is one object at ``cache/<stage>/<kk>/<key>.json``. Readers look in both.

A record is only ever a cache: it can be recomputed, so it is written atomically
but not flushed to disk.

Durability: a pack is written before the index segment that names it, so the
index never points at a pack that is not there. What a crash can lose is what was
computed and not yet flushed: the records a batch in flight collected since its
last flush (a writer flushes at its size or age limit and when the batch ends,
failing or not). A resumed run finds everything flushed and computes the rest.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from typing import Any

from oloproof._exceptions import StoreError
from oloproof.records import StoredObject
from oloproof.store._layout import CACHE_DIR, cache_path, pack_index_dir, pack_index_path, pack_path
from oloproof.store._objects import ObjectStore, parse_json
from oloproof.store._packs import PackIndex, new_pack_id, segment_body

__all__ = ["PackWriter", "RecordCache"]

COMPACT_AT = 64
"""Index segments of a stage beyond which a reader merges them into one."""

SINGLES = "singles"
"""A marker in a stage's index folder: the stage has records stored alone (the one
listing every read makes shows it, whoever wrote them)."""

_log = logging.getLogger("oloproof")


class RecordCache:
    """Stage records, kept as JSON objects of a store.

    This is the JSON edge of the stage records: the stages validate what they read
    into their record models (``oloproof.records.STAGE_RECORDS``) and hand the
    objects to write here. It keeps each stage's index in memory (refreshed from the
    store at each read), is safe to use from many threads, and pickles without it.

    Args:
        objects: The store's objects.

    Attributes:
        objects: The store's objects.
    """

    def __init__(self, objects: ObjectStore) -> None:
        self.objects = objects
        self._lock = threading.Lock()
        self._indexes: dict[str, PackIndex] = {}
        self._singles: dict[str, bool] = {}
        self._compacting = True
        self._listing: dict[str, threading.Lock] = {}
        """Per stage: held while one thread lists and reads the index (the batches of a
        run look up at once; one reads what is new, the others then find it read)."""

    def __getstate__(self) -> dict[str, Any]:
        return {"objects": self.objects}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["objects"])  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordCache) and other.objects == self.objects

    __hash__ = None  # type: ignore[assignment]

    def get_record(self, stage: str, key: str) -> StoredObject | None:
        """The cached record of one stage for one identity key, or None.

        Raises:
            StoreError: The record exists but cannot be read or is not an object.
        """
        return self.get_records(stage, [key]).get(key)

    def get_records(self, stage: str, keys: list[str]) -> dict[str, StoredObject]:
        """The cached records of one stage for many keys, fetched at once.

        Args:
            stage: The stage name.
            keys: Identity keys; duplicates are fine.

        Returns:
            The records found, by key; keys without a record are left out.

        Raises:
            StoreError: A record exists but cannot be read or is not an object.
        """
        wanted = set(keys)
        if not wanted:
            return {}
        with self._lock:
            index = self._index(stage)
            known = all(index.knows(key) for key in wanted)
        if not known:  # what the index in memory answers needs no listing
            index = self._refresh(stage)
        by_pack: dict[str, list[str]] = defaultdict(list)
        with self._lock:
            for key in wanted:
                pack = index.pack_of(key)
                if pack is not None:
                    by_pack[pack].append(key)
        found = self._from_packs(stage, by_pack)
        rest = [key for key in wanted if key not in found]
        if rest and self._has_singles(stage):
            found.update(self.get_singles(stage, rest))
        return found

    def get_singles(self, stage: str, keys: list[str]) -> dict[str, StoredObject]:
        """The records stored alone (`put_record`) of some keys: one GET a key, no index
        (a stage whose records are only ever stored alone, such as agent tool results).

        Raises:
            StoreError: A record exists but cannot be read or is not an object.
        """
        paths = {cache_path(stage, key): key for key in keys}
        url_for = self.objects.location.url_for
        return {
            paths[rel]: _record(parse_json(data, url_for(rel)), url_for(rel))
            for rel, data in self.objects.read_many(list(paths)).items()
        }

    def put_records(self, stage: str, records: dict[str, StoredObject]) -> None:
        """Store records of one stage together, as one pack and its index segment.

        Raises:
            StoreError: A record is not a JSON object, or the pack cannot be written.
        """
        if not records:
            return
        pack = new_pack_id()
        for record in records.values():
            _check_dict(record, self.objects.location.url_for(pack_path(stage, pack)))
        # Flushed to disk locally (one write a batch): after an OS crash the index
        # still never names a pack that is not whole.
        self.objects.write_json(pack_path(stage, pack), records)
        body = segment_body({pack: sorted(records)})
        self.objects.write_json(pack_index_path(stage, pack), body)
        with self._lock:
            self._index(stage).apply(pack, body)

    def put_record(self, stage: str, key: str, record: StoredObject) -> None:
        """Store the record of one stage for one identity key alone, atomically
        (a record looked up alone, such as an agent's tool result).

        Raises:
            StoreError: The record is not a JSON object or cannot be written.
        """
        relpath = cache_path(stage, key)
        _check_dict(record, self.objects.location.url_for(relpath))
        self.objects.write_json(relpath, record, durable=False)
        with self._lock:
            marked, self._singles[stage] = self._singles.get(stage), True
        if not marked:
            self.objects.write_bytes(pack_index_path(stage, SINGLES), b"{}", durable=False)

    def remove_records(self, stage: str, keys: list[str]) -> None:
        """Forget the records of some keys: the next read of them is a miss.

        Raises:
            StoreError: The store refused the write.
        """
        if not keys:
            return
        segment = new_pack_id()
        body = segment_body({}, {segment: sorted(set(keys))})
        self.objects.write_json(pack_index_path(stage, segment), body)
        with self._lock:
            self._index(stage).apply(segment, body)
        self.objects.remove_many([cache_path(stage, key) for key in keys])

    def keys(self, stage: str) -> set[str]:
        """Every key with a record of the stage (packs and single records)."""
        index = self._refresh(stage)
        with self._lock:
            found = index.keys()
        if self._has_singles(stage):
            for path in self.objects.list_paths(f"{CACHE_DIR}/{stage}"):
                parts = path.split("/")
                if len(parts) == 4 and len(parts[2]) == 2 and parts[3].endswith(".json"):
                    found.add(parts[3][: -len(".json")])
        return found

    # -- the index --------------------------------------------------------

    def _index(self, stage: str) -> PackIndex:
        if stage not in self._indexes:
            self._indexes[stage] = PackIndex()
        return self._indexes[stage]

    def _stage_lock(self, stage: str) -> threading.Lock:
        with self._lock:
            return self._listing.setdefault(stage, threading.Lock())

    def _refresh(self, stage: str) -> PackIndex:
        """The stage's index with every segment now in the store applied."""
        with self._stage_lock(stage):
            return self._refresh_listed(stage)

    def _refresh_listed(self, stage: str) -> PackIndex:
        directory = pack_index_dir(stage)
        for _ in range(3):  # a segment may vanish between the listing and its read (merged)
            names = [n[: -len(".json")] for n in self.objects.list_children(directory) if n.endswith(".json")]
            with self._lock:
                if SINGLES in names:
                    self._singles[stage] = True
                names = [name for name in names if name != SINGLES]
                index = self._index(stage)
                unread = [name for name in names if not index.has(name)]
            bodies = self.objects.read_many([pack_index_path(stage, name) for name in unread])
            url_for = self.objects.location.url_for
            with self._lock:
                for name in unread:
                    rel = pack_index_path(stage, name)
                    if rel in bodies:
                        index.apply(name, parse_json(bodies[rel], url_for(rel), what="index segment"), url_for(rel))
            if len(bodies) == len(unread):
                break
        if len(names) > COMPACT_AT and self._compacting:
            try:
                self._compact(stage, index, names)
            except StoreError as error:  # a reader may not write: its reads still work
                self._compacting = False
                _log.warning("not merging the index of cache/%s: %s", stage, error)
        return index

    def _compact(self, stage: str, index: PackIndex, names: list[str]) -> None:
        """Merge the listed segments into one, then remove them.

        The merged segment is written before any removal, so a reader always finds
        every key in one or the other; two processes merging at once write equal
        decisions. Each decision keeps its own name, so the merge's name is any.
        """
        with self._lock:
            body = index.merged()
        merged = new_pack_id()
        self.objects.write_json(pack_index_path(stage, merged), body)
        with self._lock:
            index.apply(merged, body)
        self.objects.remove_many([pack_index_path(stage, name) for name in names])

    def _from_packs(self, stage: str, by_pack: dict[str, list[str]]) -> dict[str, StoredObject]:
        paths = {pack_path(stage, pack): pack for pack in by_pack}
        contents = self.objects.read_many(list(paths))
        url_for = self.objects.location.url_for
        found: dict[str, StoredObject] = {}
        for rel, pack in paths.items():
            if rel not in contents:  # gone, or not visible yet: a miss this time only
                continue
            records = parse_json(contents[rel], url_for(rel), what="pack")
            if not isinstance(records, dict):
                raise StoreError(f"a pack must be a JSON object, got {type(records).__name__}", path=url_for(rel))
            for key in by_pack[pack]:
                if key in records:
                    found[key] = _record(records[key], f"{url_for(rel)}#{key}")
        return found

    def _has_singles(self, stage: str) -> bool:
        """Whether the stage has records stored alone (``<kk>/<key>.json``)."""
        with self._stage_lock(stage):
            with self._lock:
                known = self._singles.get(stage)
            if known is None:
                names = self.objects.list_children(f"{CACHE_DIR}/{stage}")
                known = any(len(name) == 2 for name in names)
                with self._lock:
                    known = self._singles.setdefault(stage, known) or known
            return known


class PackWriter:
    """Collects a batch's records of one stage and writes them as packs.

    It flushes when it holds ``max_records`` records, when a record is added
    ``max_seconds`` after the oldest unwritten one, and on `flush` (the batch's end).

    Args:
        records: The store's record cache.
        stage: The stage the records belong to.
        max_records: The most records one pack holds.
        max_seconds: How long a record may wait unwritten while others arrive.
    """

    def __init__(self, records: RecordCache, stage: str, *, max_records: int = 1000, max_seconds: float = 2.0) -> None:
        self._records = records
        self._stage = stage
        self._max_records = max_records
        self._max_seconds = max_seconds
        self._pending: dict[str, StoredObject] = {}
        self._since = 0.0

    def add(self, key: str, record: StoredObject) -> None:
        """Add one record; writes the pending pack once it is full or old enough."""
        if not self._pending:
            self._since = time.monotonic()
        self._pending[key] = record
        if len(self._pending) >= self._max_records or time.monotonic() - self._since >= self._max_seconds:
            self.flush()

    def flush(self) -> None:
        """Write what is pending as one pack.

        Raises:
            StoreError: The pack cannot be written.
        """
        pending, self._pending = self._pending, {}
        self._records.put_records(self._stage, pending)


def _check_dict(record: Any, url: str) -> None:
    if not isinstance(record, dict):
        raise StoreError(f"a stage record must be a dict, got {type(record).__name__}", path=url)


def _record(value: Any, url: str) -> StoredObject:
    if not isinstance(value, dict):
        raise StoreError(
            f"a stage record must be a JSON object, got {type(value).__name__}", path=url
        )
    return value
