"""What runs executed at once in one process share: the sweep's settings.

Each run alone has its own limiter, flights and provider clients. Runs of one
group share them instead, so the group as a whole keeps the project's
``max_concurrency`` and each provider's limits, and a retrieval, generation or
judgment that two runs need at the same moment is made once (`Flights`). The
group's owner closes it once every run has ended; closing it stops every run
still calling.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from oloproof._json import content_hash
from oloproof.providers import ProviderConfig, ProviderPool
from oloproof.tasks._executor import StageExecutor
from oloproof.tasks._flights import Flights

__all__ = ["RunGroup"]


class RunGroup:
    """One limiter, one set of flights and the providers' pools of several runs.

    Args:
        max_concurrency: The most user calls in flight at once, over all the runs.
        timeouts: Seconds a call of each stage may take.
    """

    def __init__(self, max_concurrency: int, timeouts: Mapping[str, float | None]) -> None:
        self.executor = StageExecutor(max_concurrency, timeouts)
        """Every run's user calls, under one ``max_concurrency``."""
        self.flights = Flights()
        """The keys any of the runs is computing now."""
        self._pools: dict[str, ProviderPool] = {}
        self._lock = threading.Lock()

    def pool(self, configs: Mapping[str, ProviderConfig]) -> ProviderPool:
        """The one pool of these ``providers:`` entries (made at the first run that asks):
        runs with the same providers share their clients and limits."""
        with self._lock:
            key = _identity(configs)
            if key not in self._pools:
                self._pools[key] = ProviderPool(configs, os.environ)
            return self._pools[key]

    def close(self) -> None:
        """Close the providers' clients, then stop every pending call; idempotent."""
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            self.executor.run_coroutine(pool.aclose())
        self.executor.close()


def _identity(configs: Mapping[str, ProviderConfig]) -> str:
    return content_hash({name: config.model_dump(mode="json") for name, config in sorted(configs.items())})
