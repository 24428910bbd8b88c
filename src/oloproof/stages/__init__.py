"""The stage engine's pure logic: identities, context assembly and batching.

Nothing here imports Prefect or touches a store: these are plain functions over
values, unit-tested on their own, which ``oloproof.tasks`` wraps as Prefect tasks.
"""

from oloproof.stages._assemble import assemble_context
from oloproof.stages._batch import MAX_BATCH, PER_CASE_LIMIT, TARGET_BATCHES, Batch, group_batches, plan_batches
from oloproof.stages._batch_part import BatchPart
from oloproof.stages._identity import (
    SCHEMA_VERSION,
    agent_run_key,
    assembly_key,
    canonical_json,
    content_hash,
    execution_key,
    generation_key,
    judgment_key,
    retrieval_key,
    tool_key,
)

__all__ = [
    "MAX_BATCH",
    "PER_CASE_LIMIT",
    "SCHEMA_VERSION",
    "TARGET_BATCHES",
    "Batch",
    "BatchPart",
    "agent_run_key",
    "assemble_context",
    "assembly_key",
    "canonical_json",
    "content_hash",
    "execution_key",
    "generation_key",
    "group_batches",
    "judgment_key",
    "plan_batches",
    "retrieval_key",
    "tool_key",
]
