"""Drawing a run's cases for human labelling, and the file a labeller fills in."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import numpy as np
from pydantic import JsonValue

from oloproof._exceptions import UsageError
from oloproof._json import content_hash
from oloproof.judging._records import SampleRecord
from oloproof.records import (
    LabellingRow,
    ShownTexts,
    StoredCase,
    StoredEvaluator,
    StoredJudgment,
    StoredManifest,
    StoredRetrieval,
    StoredRun,
)
from oloproof.report import slice_values

__all__ = [
    "case_texts",
    "context_passages",
    "draw_sample",
    "judge_entry",
    "judge_threshold",
    "label_scale",
    "labelling_rows",
    "sample_frame",
]


def judge_entry(manifest: StoredManifest, criterion: str) -> StoredEvaluator:
    """The manifest's entry of the LLM judge reporting ``criterion``.

    Raises:
        UsageError: The run has no such criterion, or it is not an LLM judge's.
    """
    entries = {entry["criterion"]: entry for entry in manifest.get("evaluators", [])}
    entry = entries.get(criterion)
    if entry is None:
        judged = ", ".join(sorted(c for c, e in entries.items() if e.get("llm_judge"))) or "none"
        raise UsageError(f"run {manifest['run_id']} has no criterion {criterion!r} (its LLM judges: {judged})")
    if not entry.get("llm_judge"):
        raise UsageError(f"criterion {criterion!r} is not an LLM judge's: only judges are validated against labels")
    if not entry.get("judge_id"):
        raise UsageError(f"run {manifest['run_id']} predates judge identities: run it again to validate its judge")
    return entry


def sample_frame(judgments: Sequence[StoredJudgment], criterion: str) -> list[str]:
    """The cases the judge scored on ``criterion`` (sorted): the frame a sample is drawn from."""
    return sorted(r["case_id"] for r in judgments if r["criterion"] == criterion and r["status"] == "observed")


def _allocate(groups: dict[str, list[str]], size: int) -> dict[str, int]:
    # Proportional allocation by largest remainder; ties go to the earlier value.
    total = sum(len(ids) for ids in groups.values())
    quotas = {value: size * len(ids) / total for value, ids in groups.items()}
    counts = {value: int(quota) for value, quota in quotas.items()}
    spare = size - sum(counts.values())
    for value in sorted(quotas, key=lambda v: (-(quotas[v] - counts[v]), v))[:spare]:
        counts[value] += 1
    return counts


def draw_sample(run: StoredRun, criterion: str, size: int, *, seed: int = 0,
                stratify: str | None = None) -> SampleRecord:
    """Draw ``size`` of the cases a run's judge scored, uniformly without replacement.

    The draw depends only on the set of case ids and the seed, never on their order.

    Args:
        run: The run's ``manifest``, ``cases`` and ``judgments``.
        criterion: The judge criterion to label.
        size: How many cases to draw.
        seed: The seed of the draw.
        stratify: A slice of the run to stratify by (proportional allocation). A
            stratified sample is fine for validation but not for prediction-powered
            inference, which needs a uniform one.

    Raises:
        UsageError: No such judge criterion, or fewer cases than ``size``.
    """
    manifest = run["manifest"]
    entry = judge_entry(manifest, criterion)
    if (manifest.get("repeats") or 1) > 1 or (manifest.get("judge_repeats") or 1) > 1:
        # A label is of one text a person read; a case with repeats has several.
        raise UsageError(f"run {manifest['run_id']} has repeats: a person labels one output a case, so validate "
                         "the judge on a run without repeats")  # fmt: skip
    frame = sample_frame(run["judgments"], criterion)
    if size < 1:
        raise UsageError(f"--n must be at least 1, got {size}")
    if size > len(frame):
        raise UsageError(f"--n {size} is more than the {len(frame)} cases the judge scored on {criterion}")
    rng = np.random.default_rng(seed)
    if stratify is None:
        chosen = [frame[i] for i in rng.choice(len(frame), size=size, replace=False)]
    else:
        if stratify not in manifest.get("slices", []):
            raise UsageError(f"run {manifest['run_id']} has no slice {stratify!r} (its slices: "
                             f"{', '.join(manifest.get('slices', [])) or 'none'})")  # fmt: skip
        values = slice_values(run["cases"], stratify)
        groups: dict[str, list[str]] = defaultdict(list)
        for case_id in frame:
            groups[values.get(case_id, "(none)")].append(case_id)
        chosen = []
        for value, count in sorted(_allocate(groups, size).items()):
            ids = groups[value]
            chosen += [ids[i] for i in rng.choice(len(ids), size=count, replace=False)]
    identity = {"run": manifest["run_id"], "criterion": criterion, "seed": seed, "size": size, "stratify": stratify}
    return SampleRecord(
        sample_id="smp_" + content_hash(identity)[:20], run_id=manifest["run_id"], criterion=criterion,
        judge_id=entry.get("judge_id") or "", seed=seed, size=size, population=len(frame), stratify=stratify,
        case_ids=sorted(chosen), created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )  # fmt: skip


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def context_passages(retrievals: Sequence[StoredRetrieval]) -> dict[str, list[str]]:
    """The texts of the passages kept in each case's context, in context order."""
    kept: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for row in retrievals:
        if row.get("in_context"):
            kept[row["case_id"]].append((int(row["position"]), str(row.get("text") or "")))
    return {case_id: [text for _, text in sorted(rows)] for case_id, rows in kept.items()}


def _shown(case: StoredCase, options: Mapping[str, JsonValue], passages: list[str] | None) -> ShownTexts:
    """What the judge read of a case: the query, the context the generator saw, the answer."""
    item = case.get("input")
    output = case.get("output")
    # A recorded case (no output) carries its fields in its input.
    recorded = item if output is None and isinstance(item, dict) else None
    query = case.get("query") or (recorded.get("query") if recorded is not None else None)
    context: JsonValue
    if passages is not None:
        context = "\n\n".join(passages)
    else:
        context = recorded.get("context") if recorded is not None else None
    field = str(options.get("response_field") or "answer")
    if recorded is not None:
        answer = recorded.get("response")
    elif isinstance(output, dict):
        answer = output.get(field, output)
    else:
        answer = output
    return {"query": _text(query), "context": _text(context), "answer": _text(answer)}


def case_texts(run: StoredRun, criterion: str, passages: dict[str, list[str]]) -> dict[str, ShownTexts]:
    """Each case's ``query``, ``context`` and ``answer`` as a labeller sees them.

    Args:
        run: The run's ``manifest`` and ``cases``.
        criterion: The judge criterion (its options say where the answer is).
        passages: `context_passages` of the run's retrievals.
    """
    options = judge_entry(run["manifest"], criterion)["spec"].get("options") or {}
    if not isinstance(options, dict):
        options = {}
    return {case["case_id"]: _shown(case, options, passages.get(case["case_id"])) for case in run["cases"]}


def judge_threshold(entry: StoredEvaluator) -> float | None:
    """The threshold the judge of ``entry`` derives verdicts with (``None``: a mean score)."""
    threshold = (entry.get("judge") or {}).get("threshold")
    return threshold if isinstance(threshold, int | float) else None


def label_scale(entry: StoredEvaluator) -> str:
    """What a label may be for the judge of ``entry``."""
    return "pass, fail or 1-5" if (entry.get("judge") or {}).get("threshold") is not None else "1-5"


def labelling_rows(run: StoredRun, sample: SampleRecord, texts: Mapping[str, ShownTexts], *,
                   show_reason: bool = False) -> list[LabellingRow]:
    """One line per drawn case for a person to label: ``label`` left ``null`` to fill in.

    The judge's reason and score are left out unless ``show_reason``, so they do not
    anchor the labeller.
    """
    scale = label_scale(judge_entry(run["manifest"], sample.criterion))
    judged = {r["case_id"]: r for r in run["judgments"] if r["criterion"] == sample.criterion}
    rows = []
    for case_id in sample.case_ids:
        row: LabellingRow = {"sample": sample.sample_id, "case_id": case_id, "criterion": sample.criterion,
                               **texts[case_id], "label": None, "scale": scale, "annotator": None, "note": None}
        if show_reason:
            row["judge_score"] = judged[case_id].get("score")
            row["judge_reason"] = judged[case_id].get("reason")
        rows.append(row)
    return rows
