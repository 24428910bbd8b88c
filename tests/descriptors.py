"""What a process has open, read from /proc: tests that must see a lock waited on or held.

A plain module (not a conftest), so test modules can import it by name.
"""

from __future__ import annotations

import os

__all__ = ["open_files"]


def open_files(pid: int | str = "self") -> list[str]:
    """The path behind each of process ``pid``'s descriptors (one entry per descriptor)."""
    paths = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            paths.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:  # closed since it was listed
            continue
    return paths
