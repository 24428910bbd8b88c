"""``oloproof diagnose`` and ``oloproof inspect``."""

from __future__ import annotations

import argparse
from typing import Any

from oloproof._cli._common import emit, emit_json, print_lines, quiet_prefect
from oloproof._exceptions import NotFoundError, UsageError
from oloproof._locate import locate_store, store_arguments

__all__ = ["diagnose_command", "inspect_command"]


def diagnose_command(args: argparse.Namespace) -> int:
    """Run (or recall) a diagnosis and print it."""
    if args.top_k is not None and args.intervention != "top-k":
        raise UsageError("--top-k belongs to --intervention top-k", field="--top-k")
    if args.reranker is not None and args.intervention != "reranker":
        raise UsageError("--reranker belongs to --intervention reranker", field="--reranker")
    if args.intervention == "top-k" and (args.top_k is None or args.top_k < 1):
        raise UsageError("--top-k must be an integer of at least 1", field="--top-k")
    quiet_prefect()
    store = locate_store(args.results, args.project)
    from oloproof.diagnosis import render_diagnosis
    from oloproof.flows._api import connect_prefect_api
    from oloproof.flows._diagnose import diagnosis_request, prepare_diagnosis

    request = diagnosis_request(args.run_id, args.intervention, args.criterion, store, project=args.project,
                                threshold=args.threshold, top_k=args.top_k, reranker=args.reranker,
                                resample=args.resample)
    # Bad requests fail here, before any flow starts or anything is written.
    prepared = prepare_diagnosis(request, store)
    connect_prefect_api()
    record = prepared()
    where = store_arguments(args.results, args.project)
    emit(record, args.json, lambda value: render_diagnosis(value, where))
    return 0


def inspect_command(args: argparse.Namespace) -> int:
    """Print a diagnosis's cases, a comparison's decisions or a run's cases."""
    store = locate_store(args.results, args.project)
    target = args.id
    if target.startswith("sha256:"):
        return _inspect_content(store, target, args.json)
    from oloproof._cli._read import load_run
    from oloproof.report import render_run_cases
    from oloproof.store import run_table

    report = load_run(store, target)
    cases = store.read_table(run_table(target, "cases"))
    judgments = store.read_table(run_table(target, "judgments"))
    if args.json:
        emit_json({"run_id": target, "cases": cases, "judgments": judgments})
    else:
        print_lines(render_run_cases(report, cases, judgments))
    return 0


def _inspect_content(store: Any, target: str, as_json: bool) -> int:
    from oloproof.store import comparison_manifest, diagnosis_manifest

    hexid = target.removeprefix("sha256:")
    if store.exists(diagnosis_manifest(hexid)):
        from oloproof.diagnosis import render_case_lines

        record = store.read_json(diagnosis_manifest(hexid))
        emit(record, as_json, render_case_lines)
        return 0
    if store.exists(comparison_manifest(hexid)):
        from oloproof.comparison import render_decisions

        record = store.read_json(comparison_manifest(hexid))
        emit(record, as_json, render_decisions)
        return 0
    raise NotFoundError(f"no diagnosis or comparison {target} in the store", path=store.url)
