"""Judges you can gate on: samples for human labelling, validation against the labels,
and judge metrics corrected by them (prediction-powered inference).

The loop::

    oloproof judge sample RUN --criterion groundedness_judge --n 60   # a labelling file
    # people fill in "label" on each line
    oloproof judge validate --labels labels.jsonl --run RUN --criterion groundedness_judge
    oloproof compare CANDIDATE BASELINE --policy compare.yaml          # rules over the judge now decide

A validation record is keyed by the judge's identity (evaluator type and version,
provider type, model, prompt hashes, threshold, sampling settings): changing any
of them leaves the new judge unvalidated.
"""

from oloproof.judging._estimates import judge_estimates
from oloproof.judging._identity import judge_id, judge_summary
from oloproof.judging._labels import LABEL_FIELDS, LabelSet, load_labels
from oloproof.judging._records import (
    Check,
    Disagreement,
    Estimate,
    HumanLabel,
    JudgeRequirements,
    SampleRecord,
    ValidationRecord,
)
from oloproof.judging._render import render_validation, render_validations
from oloproof.judging._sample import (
    case_texts,
    context_passages,
    draw_sample,
    judge_entry,
    label_scale,
    labelling_rows,
    sample_frame,
)
from oloproof.judging._stored import (
    find_sample,
    gating_judges,
    labelled_samples,
    read_validations,
    write_labels,
    write_sample,
    write_validation,
)
from oloproof.judging._validate import check_requirements, consensus, validate_judge

__all__ = [
    "LABEL_FIELDS",
    "Check",
    "Disagreement",
    "Estimate",
    "HumanLabel",
    "JudgeRequirements",
    "LabelSet",
    "SampleRecord",
    "ValidationRecord",
    "case_texts",
    "check_requirements",
    "consensus",
    "context_passages",
    "draw_sample",
    "find_sample",
    "gating_judges",
    "judge_entry",
    "judge_estimates",
    "judge_id",
    "judge_summary",
    "label_scale",
    "labelled_samples",
    "labelling_rows",
    "load_labels",
    "read_validations",
    "render_validation",
    "render_validations",
    "sample_frame",
    "validate_judge",
    "write_labels",
    "write_sample",
    "write_validation",
]
