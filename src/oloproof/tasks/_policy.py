"""The batch cache policy: a batch's key is derived from its cases' stage identities.

Prefect's ``INPUTS`` policy would hash the task's inputs alone, so two stages
with equal inputs would share a result; this key names the stage and the
schema version, and is exactly the set of ``(case id, identity key)`` pairs.

The case ids belong in the key because a batch's result is keyed by case id:
two batches whose cases have equal identities under other ids must share the
*work* (through the per-case stage cache), never a result by id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from prefect.cache_policies import CachePolicy
from prefect.context import TaskRunContext
from typing_extensions import TypedDict

from oloproof.tasks._identity import SCHEMA_VERSION, content_hash

__all__ = ["BATCH_FORMAT", "BatchIdentity", "IdentityFn", "Inputs", "StageTaskOptions", "stage_task_options"]

Inputs = TypeVar("Inputs", bound=Mapping[str, object])
"""A stage task's inputs by parameter name: each stage declares them as a TypedDict."""

IdentityFn = Callable[[Inputs], list[tuple[str, str]] | None]
"""The task inputs to the batch's ``(case id, identity key)`` pairs, or ``None`` to bypass."""

BATCH_FORMAT = 3
"""Version of what a batch task returns; bumped whenever that shape changes, so a
batch cached in an older shape is never replayed."""


@dataclass
class BatchIdentity(CachePolicy):
    """Cache a batch task under the identities of the cases it computes."""

    stage: str = ""
    # Called with the inputs Prefect hands `compute_key`, which are the stage's own.
    identities: Callable[..., list[tuple[str, str]] | None] | None = field(default=None, repr=False)

    # Prefect's CachePolicy.compute_key signature: the Prefect boundary.
    def compute_key(
        self,
        task_ctx: TaskRunContext,
        inputs: dict[str, Any],
        flow_parameters: dict[str, Any],
        **kwargs: Any,
    ) -> str | None:
        if self.identities is None:
            return None
        pairs = self.identities(inputs)
        if not pairs:
            return None  # nothing to compute, or caching bypassed on purpose
        digest = content_hash({"stage": self.stage, "cases": sorted(pairs)})
        return f"oloproof-{self.stage}-v{SCHEMA_VERSION}.{BATCH_FORMAT}-{digest}"


class StageTaskOptions(TypedDict):
    """The Prefect ``@task`` options of a stage's batch task.

    Attributes:
        name: The stage.
        task_run_name: ``<stage> <batch label>``.
        cache_policy: Its cases' identities.
        persist_result: Always: a later run replays the batch.
        result_serializer: ``json``.
        cache_result_in_memory: Never: the next stage reads batches back from the store.
    """

    name: str
    task_run_name: str
    cache_policy: CachePolicy
    persist_result: bool
    result_serializer: str
    cache_result_in_memory: bool


def stage_task_options(stage: str, identities: IdentityFn[Inputs]) -> StageTaskOptions:
    """The Prefect options of a stage's batch task, cached under its cases' identities."""
    return {
        "name": stage,
        "task_run_name": f"{stage} {{batch.label}}",
        "cache_policy": BatchIdentity(stage=stage, identities=identities),
        "persist_result": True,
        "result_serializer": "json",
        # Batch results are read back from the store by the next stage; holding
        # every batch in memory until the flow ends would grow with the run.
        "cache_result_in_memory": False,
    }
