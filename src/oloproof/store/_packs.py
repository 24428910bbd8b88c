"""The index of a stage's packs: which pack holds which key.

An index is a set of *segments* under ``cache/<stage>/index/``, each an immutable
JSON object ``{"packs": {<pack>: [<key>, ...]}, "removed": {<name>: [<key>, ...]}}``:
the keys each pack holds, and keys forgotten (`RecordCache.remove_records`), each
under the name of the write that decided it. Names are time-ordered ids (a pack's
own id; a removal's id), taken when the write starts; for each key the newest name
decides, whatever the order segments are read in, so a reader applies new segments
as it finds them and never re-reads one. A merged segment (`PackIndex.merged`) keeps
every decision's own name, so a write that lands after a merge still wins over the
older decisions the merge carries. Across hosts "newest" is by each host's clock.
"""

from __future__ import annotations

import re
from typing import Any, cast

from oloproof._exceptions import StoreError
from oloproof._ids import new_ulid

__all__ = ["PackIndex", "new_pack_id", "segment_body"]

_NAME = re.compile(r"[0-9A-Z]{26}")


def new_pack_id() -> str:
    """A fresh, time-ordered id for a pack, a removal or an index segment (a ULID,
    increasing within the process)."""
    return new_ulid()


def segment_body(packs: dict[str, list[str]], removed: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """An index segment's content: the keys each pack holds, and keys forgotten by
    each removal."""
    return {"packs": packs, "removed": removed or {}}


class PackIndex:
    """One stage's index, as applied from the segments read so far.

    Not thread-safe: `RecordCache` holds its lock around every call.
    """

    def __init__(self) -> None:
        self._segments: set[str] = set()
        self._decided: dict[str, tuple[str, str | None]] = {}
        """Per key: the name of the write that decided it, and its pack (``None``: removed)."""

    def has(self, segment: str) -> bool:
        """Whether this segment was applied."""
        return segment in self._segments

    def apply(self, segment: str, body: Any, url: str | None = None) -> None:
        """Apply one segment's content.

        Raises:
            StoreError: The content is not a segment (naming ``url``).
        """
        packs, removed = _parse(body, url)
        self._segments.add(segment)
        for pack, keys in packs.items():
            self._decide(pack, pack, keys)
        for name, keys in removed.items():
            self._decide(name, None, keys)

    def _decide(self, name: str, pack: str | None, keys: list[str]) -> None:
        decided = self._decided
        for key in keys:
            before = decided.get(key)
            if before is None or before[0] <= name:
                decided[key] = (name, pack)

    def pack_of(self, key: str) -> str | None:
        """The pack holding the key's record, if the index knows one."""
        entry = self._decided.get(key)
        return entry[1] if entry is not None else None

    def knows(self, key: str) -> bool:
        """Whether some pack the index knows holds the key."""
        return self.pack_of(key) is not None

    def keys(self) -> set[str]:
        """Every key some pack holds."""
        return {key for key, (_, pack) in self._decided.items() if pack is not None}

    def merged(self) -> dict[str, Any]:
        """One segment saying what every segment applied so far says, each decision
        under its own name."""
        packs: dict[str, list[str]] = {}
        removed: dict[str, list[str]] = {}
        for key, (name, pack) in self._decided.items():
            if pack is None:
                removed.setdefault(name, []).append(key)
            else:
                packs.setdefault(pack, []).append(key)
        return segment_body(
            {pack: sorted(keys) for pack, keys in sorted(packs.items())},
            {name: sorted(keys) for name, keys in sorted(removed.items())},
        )


def _parse(body: Any, url: str | None) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    packs = body.get("packs") if isinstance(body, dict) else None
    removed = body.get("removed") if isinstance(body, dict) else None
    for part in (packs, removed):
        if not isinstance(part, dict) or not all(
            isinstance(name, str) and _NAME.fullmatch(name) and isinstance(keys, list)
            and all(isinstance(k, str) for k in keys)
            for name, keys in part.items()
        ):
            raise StoreError(
                "invalid index segment: expected {'packs': {<pack id>: [keys]}, 'removed': {<id>: [keys]}}", path=url
            )
    return cast("dict[str, list[str]]", packs), cast("dict[str, list[str]]", removed)
