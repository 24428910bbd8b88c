"""Human labels files: JSONL, one person's label of one case per line.

A line, as ``oloproof judge sample`` writes it and a labeller fills it in::

    {"sample": "smp_…", "case_id": "c07", "criterion": "groundedness_judge",
     "label": "pass", "annotator": "ana", "note": "cites the refund page",
     "query": "…", "context": "…", "answer": "…", "scale": "pass, fail or 1-5"}

``label`` is ``pass`` or ``fail``, or the judge's 1-5 scale; ``null`` (not labelled
yet) lines are skipped. ``annotator`` and ``note`` are optional. Labels brought
without a draw leave ``sample`` out: they validate the judge on their cases, and
where a line carries ``query``, ``context`` or ``answer`` they must be the run's. The texts the
sample file carries (``query``, ``context``, ``answer``, ``scale``, and the judge's
``judge_score``/``judge_reason`` when shown) are read past. ``sample``, ``case_id``,
``criterion`` and ``annotator`` are JSON strings of at most 256 characters. Every
problem names the file, the line and the field; nothing is recorded from a file with
a problem.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from oloproof._exceptions import LabelError
from oloproof._json import content_hash, load_json
from oloproof._limits import MAX_NAME, dotted, shown
from oloproof.judging._records import HumanLabel, Label, SampleRecord
from oloproof.judging._sample import sample_frame
from oloproof.records import ShownTexts, StoredRun

__all__ = ["LABEL_FIELDS", "LabelSet", "load_labels"]

LABEL_FIELDS = ("sample", "case_id", "criterion", "label", "annotator", "note")
"""The fields a labels line is read for."""

_SHOWN_FIELDS = ("query", "context", "answer", "scale", "judge_score", "judge_reason")
SCALE_LOW, SCALE_HIGH = 1, 5


@dataclass(frozen=True)
class LabelSet:
    """The labels of one file, checked against their run and sample."""

    path: str
    sample: SampleRecord
    labels: tuple[HumanLabel, ...]
    unlabelled: int
    """Lines still ``"label": null``."""

    @property
    def sha256(self) -> str:
        """Hash of what was labelled: case, label and annotator of every label."""
        return content_hash(sorted((lab.case_id, str(lab.label), lab.annotator or "") for lab in self.labels))


def _error(message: str, path: str, line: int, field: str | None = None) -> LabelError:
    return LabelError(message, path=path, line=line, field=field)


def _parse(path: str) -> list[tuple[int, dict[str, JsonValue]]]:
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise LabelError("labels file not found", path=path) from None
    except OSError as exc:
        raise LabelError(f"cannot read labels file: {exc.strerror or exc}", path=path) from None
    rows = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _error(f"not UTF-8 text ({exc.reason})", path, number) from None
        value = load_json(text, error=LabelError, path=path, line=number)
        if not isinstance(value, dict):
            raise _error(f"a labels line must be a JSON object, got {type(value).__name__}", path, number)
        rows.append((number, value))
    if not rows:
        raise LabelError("the labels file holds no lines", path=path)
    return rows


def _label(value: Any, scores_only: bool, path: str, line: int) -> Label:
    if isinstance(value, str) and value in ("pass", "fail"):
        if scores_only:
            raise _error(f"the criterion reports a mean score: label on the judge's scale "
                         f"{SCALE_LOW}-{SCALE_HIGH}, not {value!r}", path, line, "label")  # fmt: skip
        return "pass" if value == "pass" else "fail"
    if isinstance(value, int) and not isinstance(value, bool) and SCALE_LOW <= value <= SCALE_HIGH:
        return value
    expected = f"{SCALE_LOW}-{SCALE_HIGH}" if scores_only else f"'pass', 'fail' or {SCALE_LOW}-{SCALE_HIGH}"
    raise _error(f"label must be {expected}, got {shown(value)}", path, line, "label")


def _text_or_none(row: Mapping[str, JsonValue], name: str, path: str, line: int, *, limit: int | None = None) -> str | None:
    value = row.get(name)
    if value is not None and not isinstance(value, str):
        raise _error(f"{name} must be a string or null, got {type(value).__name__}", path, line, name)
    if value is not None and limit is not None and len(value) > limit:
        raise _error(f"{name} holds at most {limit} characters, got {len(value):,}", path, line, name)
    return value


def _given(run_id: str, criterion: str, judge: str, frame: int, labels: list[HumanLabel]) -> SampleRecord:
    cases = sorted({label.case_id for label in labels})
    digest = content_hash([run_id, criterion, sorted((lab.case_id, str(lab.label), lab.annotator or "") for lab in labels)])
    return SampleRecord(sample_id="lbl_" + digest[:20], run_id=run_id, criterion=criterion, judge_id=judge, seed=0,
                        size=len(cases), population=frame, kind="given", case_ids=cases,
                        created_at=datetime.now(UTC).isoformat(timespec="seconds"))  # fmt: skip


class _Reader:
    """The checks of one labels file, line by line."""

    def __init__(self, path: str, run: StoredRun, criterion: str, texts: Mapping[str, ShownTexts],
                 find_sample: Callable[[str], SampleRecord | None]) -> None:
        self.path, self.criterion, self.texts, self.find_sample = path, criterion, texts, find_sample
        self.run_id = run["manifest"]["run_id"]
        self.criteria = {entry["criterion"]: entry for entry in run["manifest"].get("evaluators", [])}
        self.scores_only = (self.criteria[criterion].get("judge") or {}).get("threshold", 0) is None
        self.sample: SampleRecord | None = None
        self.sampled: bool | None = None
        self.seen: dict[tuple[str, str | None], int] = {}

    def fail(self, message: str, line: int, field: str | None = None) -> LabelError:
        return _error(message, self.path, line, field)

    def check_sample(self, row: Mapping[str, JsonValue], line: int) -> None:
        named = row.get("sample")
        if named is not None and (not isinstance(named, str) or len(named) > MAX_NAME):
            raise self.fail("sample must be a string (the id oloproof judge sample wrote)", line, "sample")
        if self.sampled is None:
            self.sampled = named is not None
            if named is not None:
                self.sample = self.find_sample(named)
                if self.sample is None:
                    raise self.fail(f"no sample {named!r} in the store (draw one with oloproof judge sample)",
                                    line, "sample")  # fmt: skip
                if self.sample.run_id != self.run_id:
                    raise self.fail(f"sample {named} was drawn from run {self.sample.run_id}, not {self.run_id}",
                                    line, "sample")  # fmt: skip
        elif (named is not None) != self.sampled or (self.sample is not None and named != self.sample.sample_id):
            first = self.sample.sample_id if self.sample is not None else "no sample"
            raise self.fail(f"sample {named!r} differs from the file's first line ({first}): "
                            "one file holds one sample's labels", line, "sample")  # fmt: skip

    def check_case(self, row: Mapping[str, JsonValue], case_id: str, criterion: str, line: int) -> str:
        if criterion not in self.criteria:
            raise self.fail(f"run {self.run_id} has no criterion {criterion!r}", line, "criterion")
        wanted = self.sample.criterion if self.sample is not None else self.criterion
        if criterion != self.criterion or criterion != wanted:
            raise self.fail(f"criterion {criterion!r} is not the one validated ({self.criterion})", line, "criterion")
        if case_id not in self.texts:
            raise self.fail(f"case {case_id!r} is not in run {self.run_id}", line, "case_id")
        if self.sample is not None and case_id not in self.sample.case_ids:
            raise self.fail(f"case {case_id!r} was not drawn in sample {self.sample.sample_id}", line, "case_id")
        shown = self.texts[case_id]
        for name, text in (("query", shown["query"]), ("context", shown["context"]), ("answer", shown["answer"])):
            # A label is about the texts it was given: where the line carries them, they
            # must be what the run's judge read for the case.
            if row.get(name) is not None and row[name] != text:
                raise self.fail(f"the {name} labelled differs from run {self.run_id}'s {name} for case "
                                f"{case_id!r}: the label is for another text", line, name)  # fmt: skip
        return case_id

    def read(self, row: Mapping[str, JsonValue], line: int) -> HumanLabel | None:
        unknown = sorted(set(row) - set(LABEL_FIELDS) - set(_SHOWN_FIELDS))
        if unknown:
            raise self.fail(f"unknown field (a labels line takes {', '.join(LABEL_FIELDS)})", line,
                            dotted((unknown[0],)))  # fmt: skip
        names: dict[str, str] = {}
        for name in ("case_id", "criterion"):
            value = row.get(name)
            if not isinstance(value, str) or not value:
                raise self.fail(f"{name} is required (a string)", line, name)
            if len(value) > MAX_NAME:
                raise self.fail(f"{name} holds at most {MAX_NAME} characters, got {len(value):,}", line, name)
            names[name] = value
        self.check_sample(row, line)
        case_id = self.check_case(row, names["case_id"], names["criterion"], line)
        annotator = _text_or_none(row, "annotator", self.path, line, limit=MAX_NAME)
        note = _text_or_none(row, "note", self.path, line)
        if row.get("label") is None:
            return None
        label = _label(row["label"], self.scores_only, self.path, line)
        key = (case_id, annotator)
        if key in self.seen:
            who = f"annotator {annotator!r}" if annotator else "the unnamed annotator"
            raise self.fail(f"case {case_id!r} is labelled twice by {who} (first on line {self.seen[key]})",
                            line, "annotator")  # fmt: skip
        self.seen[key] = line
        return HumanLabel(case_id=case_id, label=label, annotator=annotator, note=note, line=line)


def load_labels(path: str, *, run: StoredRun, criterion: str, texts: Mapping[str, ShownTexts],
                find_sample: Callable[[str], SampleRecord | None]) -> LabelSet:
    """Read a labels file and check every line against the run (and its sample).

    A file from ``oloproof judge sample`` names its sample on every line; a file
    without ``sample`` is a ``given`` set of labels (validation only, no PPI).

    Args:
        path: The labels file.
        run: The labelled run's ``manifest`` and ``judgments``.
        criterion: The criterion being validated (a judge of the run).
        texts: `case_texts` of the run: what each case's judge read.
        find_sample: Looks a sample up by id in the store (``None`` if absent).

    Raises:
        LabelError: A line is malformed, names another sample, run or criterion,
            a case outside the run or the sample, a text other than the run's, a
            label outside the scale, or repeats a case for one annotator.
    """
    reader = _Reader(path, run, criterion, texts, find_sample)
    labels, unlabelled = [], 0
    for line, row in _parse(path):
        label = reader.read(row, line)
        if label is None:
            unlabelled += 1
        else:
            labels.append(label)
    if not labels:
        raise LabelError(f"no line is labelled yet ({unlabelled} with \"label\": null)", path=path)
    judge = reader.criteria[criterion].get("judge_id") or ""
    frame = len(sample_frame(run["judgments"], criterion))  # a given set's population
    sample = reader.sample or _given(reader.run_id, criterion, judge, frame, labels)
    return LabelSet(path=path, sample=sample, labels=tuple(labels), unlabelled=unlabelled)
