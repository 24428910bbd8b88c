"""``oloproof judge sample``, ``validate`` and ``validations``: judges you can gate on."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from oloproof._cli._common import emit_json, print_lines
from oloproof._exceptions import UsageError
from oloproof._locate import locate_store, store_arguments

if TYPE_CHECKING:
    from oloproof.records import LabellingRow, ShownTexts, StoredRetrieval, StoredRun
    from oloproof.store import ResultsStore

__all__ = ["EXIT_NOT_VALIDATED", "sample_command", "validate_command", "validations_command"]

EXIT_NOT_VALIDATED = 3
"""``judge validate`` exits 3 when the judge fails its requirements (it may not gate)."""


def add_judge_parser(commands: Any, add_store_options: Any) -> None:
    """The ``judge`` command and its three subcommands."""
    judge = commands.add_parser(
        "judge", help="validate an LLM judge against human labels before it may gate",
        description="sample: draw a run's cases for people to label; validate: agreement between the judge "
        "and the labels, recorded under the judge's identity (a compare gate reads it); validations: list them.",
    )
    sub = judge.add_subparsers(dest="judge_command", metavar="SUBCOMMAND", required=True)
    sample = sub.add_parser("sample", help="draw a uniform random sample of a run's judged cases to label")
    sample.add_argument("run_id", metavar="RUN_ID")
    sample.add_argument("--criterion", required=True, metavar="NAME", help="the judge criterion to label")
    sample.add_argument("--n", type=int, required=True, metavar="N", help="how many cases to draw")
    sample.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    sample.add_argument("--stratify", metavar="SLICE", help="stratify by one of the run's slices "
                        "(proportional allocation; such a sample validates, but PPI needs a uniform one)")
    sample.add_argument("--show-reason", action="store_true",
                        help="include the judge's score and reason (hidden by default: they anchor labellers)")
    sample.add_argument("--output", "-o", metavar="FILE", help="the labelling file (default: "
                        "labels-<criterion>-<sample>.jsonl in the --project folder, else the current one)")
    sample.add_argument("--force", action="store_true", help="overwrite an existing labelling file")
    add_store_options(sample)
    validate = sub.add_parser("validate", help="agreement of a run's judge with human labels; records it")
    validate.add_argument("--labels", required=True, metavar="FILE", help="the labelled sample file")
    validate.add_argument("--run", required=True, metavar="RUN_ID", help="the run the sample was drawn from")
    validate.add_argument("--criterion", required=True, metavar="NAME", help="the judge criterion")
    validate.add_argument("--policy", metavar="compare.yaml", help="take the pass criteria from the policy's judges:")
    validate.add_argument("--seed", type=int, default=0, help="seed of the κ interval's resampling (default 0)")
    add_store_options(validate)
    listing = sub.add_parser("validations", help="list the judges' validation records")
    add_store_options(listing)


def _write_lines(path: Path, rows: Sequence[LabellingRow]) -> None:
    """Write JSON lines whole or not at all."""
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)  # whole or not at all
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _run_texts(store: ResultsStore, run_id: str, criterion: str) -> tuple[StoredRun, dict[str, ShownTexts]]:
    """A run's records and what its judge of ``criterion`` read of each case."""
    from oloproof.judging import case_texts, context_passages, judge_entry
    from oloproof.store import read_run_records, run_table

    run = read_run_records(store, run_id).as_json()
    judge_entry(run["manifest"], criterion)  # an unknown criterion is refused before anything else
    retrievals = cast("list[StoredRetrieval]", store.read_table(run_table(run_id, "retrievals")))  # rows as read
    passages = context_passages(retrievals)
    return run, case_texts(run, criterion, passages)


def sample_command(args: argparse.Namespace) -> int:
    from oloproof.judging import draw_sample, labelling_rows, write_sample

    store = locate_store(args.results, args.project)
    run, texts = _run_texts(store, args.run_id, args.criterion)
    sample = draw_sample(run, args.criterion, args.n, seed=args.seed, stratify=args.stratify)
    rows = labelling_rows(run, sample, texts, show_reason=args.show_reason)
    # By default next to the project whose store it came from, so the project's folder holds its labels.
    folder = Path(args.project) if args.project and not args.results else Path()
    if folder.suffix in {".yaml", ".yml"}:
        folder = folder.parent
    path = Path(args.output) if args.output else folder / f"labels-{args.criterion}-{sample.sample_id}.jsonl"
    if not path.parent.is_dir():
        raise UsageError(f"no folder {path.parent} for the labelling file")
    if path.exists() and not args.force:
        raise UsageError(f"{path} exists (it may hold labels): pass --force or another --output")
    write_sample(store, sample)
    _write_lines(path, rows)
    if args.json:
        emit_json({**sample.model_dump(mode="json"), "labelling_file": str(path)})
        return 0
    how = "uniform" if sample.stratify is None else f"stratified by {sample.stratify}"
    print(f"Sample {sample.sample_id} of run {sample.run_id}: {sample.size:,} of the {sample.population:,} cases "
          f"judged on {sample.criterion} ({how}, seed {sample.seed})")
    print(f"Labelling file: {path} ({rows[0]['scale']} in each line's \"label\"; the judge's reasons "
          f"{'are shown' if args.show_reason else 'are hidden'})")
    print(f"Then: oloproof judge validate --labels {shlex.quote(str(path))} --run {sample.run_id} "
          f"--criterion {shlex.quote(sample.criterion)}{store_arguments(args.results, args.project)}")
    return 0


def validate_command(args: argparse.Namespace) -> int:
    from oloproof.comparison import load_policy
    from oloproof.judging import (
        JudgeRequirements,
        find_sample,
        load_labels,
        validate_judge,
        write_labels,
        write_sample,
        write_validation,
    )

    requirements = load_policy(args.policy).judges if args.policy else JudgeRequirements()
    store = locate_store(args.results, args.project)
    run, texts = _run_texts(store, args.run, args.criterion)
    labels = load_labels(args.labels, run=run, criterion=args.criterion, texts=texts,
                         find_sample=lambda sample_id: find_sample(store, sample_id))  # fmt: skip
    record = validate_judge(run, labels, requirements, seed=args.seed)
    if labels.sample.kind == "given":
        write_sample(store, labels.sample)
    write_labels(store, labels)
    write_validation(store, record)
    if args.json:
        emit_json(record.model_dump(mode="json"))
    else:
        from oloproof.judging import render_validation

        print_lines(render_validation(record, labels, policy=args.policy))
    return 0 if record.passed else EXIT_NOT_VALIDATED


def validations_command(args: argparse.Namespace) -> int:
    from oloproof.judging import read_validations

    store = locate_store(args.results, args.project)
    records = read_validations(store)
    if args.json:
        emit_json([record.model_dump(mode="json") for record in records])
        return 0
    from oloproof.judging import render_validations

    print_lines(render_validations(records))
    return 0
