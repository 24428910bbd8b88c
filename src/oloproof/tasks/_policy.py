"""The batch cache policy: a batch's key is derived from its cases' stage identities.

Prefect's ``INPUTS`` policy would hash the task's inputs alone, so two stages
with equal inputs would share a result; this key names the stage and the
schema version, and is exactly the sorted set of per-case identity keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prefect.cache_policies import CachePolicy
from prefect.context import TaskRunContext

from oloproof.tasks._identity import SCHEMA_VERSION, content_hash

__all__ = ["BATCH_FORMAT", "BatchIdentity"]

IdentityFn = Callable[[dict[str, Any]], list[str] | None]

BATCH_FORMAT = 2
"""Version of what a batch task returns; bumped whenever that shape changes, so a
batch cached in an older shape is never replayed."""


@dataclass
class BatchIdentity(CachePolicy):
    """Cache a batch task under the identities of the cases it computes."""

    stage: str = ""
    identities: IdentityFn | None = field(default=None, repr=False)

    def compute_key(
        self,
        task_ctx: TaskRunContext,
        inputs: dict[str, Any],
        flow_parameters: dict[str, Any],
        **kwargs: Any,
    ) -> str | None:
        if self.identities is None:
            return None
        keys = self.identities(inputs)
        if not keys:
            return None  # nothing to compute, or caching bypassed on purpose
        digest = content_hash({"stage": self.stage, "keys": sorted(keys)})
        return f"oloproof-{self.stage}-v{SCHEMA_VERSION}.{BATCH_FORMAT}-{digest}"
