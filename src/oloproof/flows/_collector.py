"""Python's cyclic garbage collector during a run: less often, never less than asked.

A run holds its cases and the briefs of every judged row while it allocates and
frees many short-lived objects a case. At the interpreter's thresholds (700, 10,
10) the collector then walks that growing heap again and again: measured on 20,000
recorded rows, 27% of the run was spent in collections, 75% of it in 22 of the
oldest generation (``benchmarks/bench_gc.py``). A run raises the thresholds to
`RUN_THRESHOLDS` while it lasts and puts them back after; a threshold a process
set higher itself is kept. Runs in flight at once in one process (a sweep's
settings) share the raise: the last to finish restores the thresholds.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RUN_THRESHOLDS", "collecting_less"]

RUN_THRESHOLDS = (5000, 20, 20)
"""A run's least collector thresholds by generation: a young collection every 5,000
net allocations and an old one a 400th as often as that, which cut the collector's
time on 20,000 recorded rows (``benchmarks/bench_gc.py``) from 10.6 s, 27% of the run,
to 3.9 s, 13%, for 11% more peak memory (1,057 to 1,170 MB)."""

_lock = threading.Lock()
_runs = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def collecting_less() -> Iterator[None]:
    """Within the block, the collector's thresholds are at least `RUN_THRESHOLDS`."""
    global _runs, _saved
    with _lock:
        if _runs == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(*(max(now, least) for now, least in zip(_saved, RUN_THRESHOLDS, strict=True)))
            gc.freeze()
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()
                _saved = None
