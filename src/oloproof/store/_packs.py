"""The index of a stage's packs: which pack holds which key.

An index is a set of *segments* under ``cache/<stage>/index/``, each an immutable
JSON object ``{"packs": {<pack>: [<key>, ...]}, "removed": [<key>, ...]}``: the
keys each pack holds, and keys forgotten (`RecordCache.remove_records`). Segment
names are time-ordered ids; for each key the newest segment that names it decides,
whatever the order segments are read in, so a reader applies new segments as it
finds them and never re-reads one. Readers merge many segments into one
(`PackIndex.merged`) to keep listings and first reads short.
"""

from __future__ import annotations

from typing import Any

from oloproof._exceptions import StoreError
from oloproof._ids import new_ulid

__all__ = ["PackIndex", "new_pack_id", "segment_body"]


def new_pack_id() -> str:
    """A fresh, time-ordered id for a pack or an index segment (a ULID, increasing
    within the process)."""
    return new_ulid()


def segment_body(packs: dict[str, list[str]], removed: list[str] | None = None) -> dict[str, Any]:
    """An index segment's content: the keys each pack holds, and keys forgotten."""
    return {"packs": packs, "removed": removed or []}


class PackIndex:
    """One stage's index, as applied from the segments read so far.

    Not thread-safe: `RecordCache` holds its lock around every call.
    """

    def __init__(self) -> None:
        self._segments: set[str] = set()
        self._decided: dict[str, tuple[str, str | None]] = {}
        """Per key: the segment that decided it, and its pack (``None``: removed)."""

    def has(self, segment: str) -> bool:
        """Whether this segment was applied."""
        return segment in self._segments

    def apply(self, segment: str, body: Any) -> None:
        """Apply one segment's content.

        Raises:
            StoreError: The content is not a segment.
        """
        packs, removed = _parse(segment, body)
        self._segments.add(segment)
        decided = self._decided
        for pack, keys in packs.items():
            for key in keys:
                before = decided.get(key)
                if before is None or before[0] <= segment:
                    decided[key] = (segment, pack)
        for key in removed:
            before = decided.get(key)
            if before is None or before[0] <= segment:
                decided[key] = (segment, None)

    def pack_of(self, key: str) -> str | None:
        """The pack holding the key's record, if the index knows one."""
        entry = self._decided.get(key)
        return entry[1] if entry is not None else None

    def keys(self) -> set[str]:
        """Every key some pack holds."""
        return {key for key, (_, pack) in self._decided.items() if pack is not None}

    def forget_pack(self, pack: str) -> None:
        """A pack is gone from the store: its keys are misses from now on."""
        for key in [key for key, (_, held) in self._decided.items() if held == pack]:
            del self._decided[key]

    def merged(self, upto: str) -> dict[str, Any]:
        """One segment saying what every segment up to ``upto`` (by name) says."""
        packs: dict[str, list[str]] = {}
        removed: list[str] = []
        for key, (segment, pack) in self._decided.items():
            if segment > upto and not segment.startswith(upto.split("-", 1)[0]):
                continue
            if pack is None:
                removed.append(key)
            else:
                packs.setdefault(pack, []).append(key)
        return segment_body({pack: sorted(keys) for pack, keys in sorted(packs.items())}, sorted(removed))


def _parse(segment: str, body: Any) -> tuple[dict[str, list[str]], list[str]]:
    packs = body.get("packs") if isinstance(body, dict) else None
    removed = body.get("removed", []) if isinstance(body, dict) else None
    if (
        not isinstance(packs, dict)
        or not isinstance(removed, list)
        or not all(isinstance(keys, list) and all(isinstance(k, str) for k in keys) for keys in packs.values())
        or not all(isinstance(k, str) for k in removed)
    ):
        raise StoreError(f"index segment {segment!r} is not {{'packs': {{pack: [keys]}}, 'removed': [keys]}}")
    return packs, removed
