"""A stage task plans its batch once, for its cache key and for its body.

Prefect computes a task's cache key (`BatchIdentity`) from the very inputs its
body then runs on, in the same process with the thread runner. Planning a batch
(each case's identity key: canonical JSON and a content hash) is most of a cheap
stage's own cost, so the key's plan is kept here and the body takes it instead of
planning again. Only a plan made from the same input objects is taken; a plan
never taken (the batch was replayed from the cache, or another process runs the
body) is dropped once newer ones arrive, and a body finding none plans itself.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from oloproof.stages._batch import Batch

__all__ = ["Plans"]

T = TypeVar("T")

KEPT = 32
"""Plans kept at most: more than the batch tasks between key and body at once."""


class Plans:
    """The plans of the batches whose cache key was just computed, by batch."""

    def __init__(self, kept: int = KEPT) -> None:
        self._kept = kept
        self._lock = threading.Lock()
        self._plans: OrderedDict[Hashable, tuple[tuple[Any, ...], Any]] = OrderedDict()

    def make(self, key: Hashable, inputs: tuple[Any, ...], plan: Callable[[], T]) -> T:
        """Plan the batch and keep the plan for the body (the cache key's call)."""
        made = plan()
        with self._lock:
            self._plans[key] = (inputs, made)
            self._plans.move_to_end(key)
            while len(self._plans) > self._kept:
                self._plans.popitem(last=False)
        return made

    def take(self, key: Hashable, inputs: tuple[Any, ...], plan: Callable[[], T]) -> T:
        """The plan the cache key made from these very inputs, or a new one (the body's call)."""
        with self._lock:
            kept = self._plans.pop(key, None)
        if kept is not None and len(kept[0]) == len(inputs) and all(a is b for a, b in zip(kept[0], inputs)):
            made: T = kept[1]
            return made
        return plan()

    def of_batch(
        self, stage: str, batch: Batch, inputs: tuple[Any, ...], plan: Callable[[], T], *, body: bool
    ) -> T:
        """A stage's plan of ``batch`` from ``inputs``: made and kept for the cache key
        (``body=False``), taken by the task's body (``body=True``)."""
        keep = self.take if body else self.make
        return keep((stage, batch.index, batch.repeat), inputs, plan)

    def __len__(self) -> int:
        return len(self._plans)
