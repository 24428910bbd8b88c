"""Typed records of the results store: the rows of its tables and the run manifest.

Each table's columns, their order and their DuckDB types are derived from its
row model (see :mod:`oloproof.store`), so the model is the one declaration of a
table::

    from oloproof.records import MetricRow

    row = MetricRow(run_id="run_01", criterion="answer_correct", kind="proportion",
                    confidence=0.95, observed=0, missing=0, excluded=0, scored=True)
"""

from oloproof.records._base import Json, JsonObject, Record, StoredObject
from oloproof.records._cases import CaseRow, ContextEntry, DroppedEntry
from oloproof.records._comparisons import (
    ComparisonRecord,
    ComparisonScope,
    DecisionEntry,
    MetricLine,
    PairedValues,
    Pairing,
    ProbeLine,
    RulePlan,
)
from oloproof.records._decisions import DecisionRow
from oloproof.records._diagnoses import (
    ChildRuns,
    DiagnosedCase,
    DiagnosisRecord,
    DiagnosisSettings,
    Implicated,
    ImplicatedEntry,
    LabelledFailures,
    StoredDiagnosis,
)
from oloproof.records._diagnosis import DiagnosisLabelRow
from oloproof.records._judgments import JudgmentBrief, JudgmentRow
from oloproof.records._manifest import (
    CacheCount,
    EvaluatorEntry,
    JudgeUsage,
    RunCache,
    RunKind,
    RunManifest,
    RunParent,
    RunSweep,
    RunVariant,
    stored_run_kind,
)
from oloproof.records._metrics import MetricRow
from oloproof.records._reports import (
    CaseFacts,
    CatalogueEntry,
    CatalogueResult,
    EstimateLine,
    JudgeEstimate,
    LabellingRow,
    MetricSummary,
    RunReport,
    ShownTexts,
)
from oloproof.records._retrievals import RetrievalRow
from oloproof.records._run import RunRecords
from oloproof.records._stages import (
    AssembledPassage,
    AssemblyRecord,
    Candidate,
    DroppedPassage,
    ExecutionRecord,
    GenerationRecord,
    JudgeRecord,
    RecordedRetrieval,
    RetrievalRecord,
    StagedRecord,
    StageRecord,
    ToolRecord,
    ToolTally,
    stage_record,
    validate_staged,
)
from oloproof.records._stored import (
    StoredCase,
    StoredEvaluator,
    StoredJudgment,
    StoredManifest,
    StoredRetrieval,
    StoredRun,
)

__all__ = [
    "AssembledPassage",
    "AssemblyRecord",
    "CacheCount",
    "Candidate",
    "CaseFacts",
    "CaseRow",
    "CatalogueEntry",
    "CatalogueResult",
    "ChildRuns",
    "ComparisonRecord",
    "ComparisonScope",
    "ContextEntry",
    "DecisionEntry",
    "DecisionRow",
    "DiagnosedCase",
    "DiagnosisLabelRow",
    "DiagnosisRecord",
    "DiagnosisSettings",
    "DroppedEntry",
    "DroppedPassage",
    "EstimateLine",
    "EvaluatorEntry",
    "ExecutionRecord",
    "GenerationRecord",
    "Implicated",
    "ImplicatedEntry",
    "Json",
    "JsonObject",
    "JudgeEstimate",
    "JudgeRecord",
    "JudgeUsage",
    "JudgmentBrief",
    "JudgmentRow",
    "LabelledFailures",
    "LabellingRow",
    "MetricLine",
    "MetricRow",
    "MetricSummary",
    "PairedValues",
    "Pairing",
    "ProbeLine",
    "Record",
    "RecordedRetrieval",
    "RetrievalRecord",
    "RetrievalRow",
    "RulePlan",
    "RunCache",
    "RunKind",
    "RunManifest",
    "RunParent",
    "RunRecords",
    "RunReport",
    "RunSweep",
    "RunVariant",
    "ShownTexts",
    "StageRecord",
    "StagedRecord",
    "StoredCase",
    "StoredDiagnosis",
    "StoredEvaluator",
    "StoredJudgment",
    "StoredManifest",
    "StoredObject",
    "StoredRetrieval",
    "StoredRun",
    "ToolRecord",
    "ToolTally",
    "stage_record",
    "stored_run_kind",
    "validate_staged",
]
