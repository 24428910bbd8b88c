"""The stage-record cache: one JSON object per stage and identity key.

Records live at ``cache/<stage>/<kk>/<key>.json`` (see
:func:`oloproof.store.cache_path`). A record is only ever a cache: it
can be recomputed, so it is written atomically but not flushed to disk.
"""

from __future__ import annotations

from dataclasses import dataclass

from oloproof._exceptions import StoreError
from oloproof.records import StoredObject
from oloproof.store._layout import cache_path
from oloproof.store._objects import ObjectStore, parse_json

__all__ = ["RecordCache"]


@dataclass(frozen=True)
class RecordCache:
    """Per-case stage records, kept as JSON objects of a store.

    This is the JSON edge of the stage records: the stages validate what they read
    into their record models (``oloproof.records.STAGE_RECORDS``) and hand the
    objects to write here.

    Attributes:
        objects: The store's objects.
    """

    objects: ObjectStore

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
        paths = {cache_path(stage, key): key for key in keys}
        found = self.objects.read_many(list(paths))
        url_for = self.objects.location.url_for
        return {paths[rel]: _record(data, url_for(rel)) for rel, data in found.items()}

    def put_record(self, stage: str, key: str, record: StoredObject) -> None:
        """Store the record of one stage for one identity key, atomically.

        Raises:
            StoreError: The record is not a JSON object or cannot be written.
        """
        relpath = cache_path(stage, key)
        if not isinstance(record, dict):
            raise StoreError(
                f"a stage record must be a dict, got {type(record).__name__}",
                path=self.objects.location.url_for(relpath),
            )
        self.objects.write_json(relpath, record, durable=False)


def _record(data: bytes, url: str) -> StoredObject:
    value = parse_json(data, url)
    if not isinstance(value, dict):
        raise StoreError(
            f"a stage record must be a JSON object, got {type(value).__name__}", path=url
        )
    return value
