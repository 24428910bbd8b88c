"""Run ids: ``run_`` followed by a ULID (time-ordered, Crockford base32)."""

from __future__ import annotations

import os
import re
import threading
import time

__all__ = ["RUN_ID", "new_run_id", "new_ulid"]

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
RUN_ID = re.compile(r"^run_[0-9A-HJKMNP-TV-Z]{26}$")


def new_run_id(now_ms: int | None = None, randomness: bytes | None = None) -> str:
    """Return ``run_<ULID>``: 48 bits of milliseconds, then 80 random bits."""
    millis = int(time.time() * 1000) if now_ms is None else now_ms
    entropy = os.urandom(10) if randomness is None else randomness
    return "run_" + _encode((millis << 80) | int.from_bytes(entropy, "big"))


_last_ulid = 0
_ulid_lock = threading.Lock()


def new_ulid() -> str:
    """A ULID that sorts after every one this process made before: within one
    millisecond the last is incremented (the ULID spec's monotonic mode), so what a
    process writes later is named later, whatever the random bits."""
    global _last_ulid
    with _ulid_lock:
        value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
        _last_ulid = value = max(value, _last_ulid + 1)
    return _encode(value)


def _encode(value: int) -> str:
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))
