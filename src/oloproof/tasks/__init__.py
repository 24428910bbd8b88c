"""Prefect tasks: one per stage, each over a batch of cases with per-case caching."""

from oloproof.stages._assemble import assemble_context
from oloproof.stages._batch import Batch, group_batches, plan_batches
from oloproof.stages._batch_part import BatchPart
from oloproof.stages._identity import (
    SCHEMA_VERSION,
    assembly_key,
    content_hash,
    execution_key,
    generation_key,
    judgment_key,
    retrieval_key,
)
from oloproof.tasks._assemble_task import assemble_contexts
from oloproof.tasks._cached import Outcome
from oloproof.tasks._environment import ProgressHook, RunEnvironment, RunRequest, prepare_environment, release_workers
from oloproof.tasks._execution import CachedExecution, lookup_executions, record_executions
from oloproof.tasks._flights import Flights
from oloproof.tasks._generate import generate_outputs
from oloproof.tasks._group import RunGroup
from oloproof.tasks._judge import judge_cases
from oloproof.tasks._parts import encode_batch
from oloproof.tasks._persist import case_rows, publish_report, retrieval_rows, write_run
from oloproof.tasks._policy import BatchIdentity
from oloproof.tasks._results import CaseResult
from oloproof.tasks._retrieve import retrieve_passages
from oloproof.tasks._summarize import RunSummary, cache_counts, summarize_run

__all__ = [
    "SCHEMA_VERSION",
    "Batch",
    "BatchIdentity",
    "BatchPart",
    "CachedExecution",
    "CaseResult",
    "Flights",
    "Outcome",
    "ProgressHook",
    "RunEnvironment",
    "RunGroup",
    "RunRequest",
    "RunSummary",
    "assemble_context",
    "assemble_contexts",
    "assembly_key",
    "cache_counts",
    "case_rows",
    "content_hash",
    "encode_batch",
    "execution_key",
    "generate_outputs",
    "generation_key",
    "group_batches",
    "judge_cases",
    "judgment_key",
    "lookup_executions",
    "plan_batches",
    "prepare_environment",
    "publish_report",
    "record_executions",
    "release_workers",
    "retrieval_key",
    "retrieval_rows",
    "retrieve_passages",
    "summarize_run",
    "write_run",
]
