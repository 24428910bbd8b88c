"""Run ids: ``run_`` followed by a ULID (time-ordered, Crockford base32)."""

from __future__ import annotations

import os
import re
import time

__all__ = ["RUN_ID", "new_run_id"]

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
RUN_ID = re.compile(r"^run_[0-9A-HJKMNP-TV-Z]{26}$")


def new_run_id(now_ms: int | None = None, randomness: bytes | None = None) -> str:
    """Return ``run_<ULID>``: 48 bits of milliseconds, then 80 random bits."""
    millis = int(time.time() * 1000) if now_ms is None else now_ms
    entropy = os.urandom(10) if randomness is None else randomness
    value = (millis << 80) | int.from_bytes(entropy, "big")
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "run_" + "".join(reversed(chars))
