"""The diagnose flow: re-execute a run's failures under an intervention beside a control.

Child runs (gold context, control, a replay under a new setting, replay control)
are ordinary runs, run as subflows of this one and recorded in the store.
"""

from __future__ import annotations

import json
from typing import Any

from prefect import flow

from oloproof._exceptions import UsageError
from oloproof._system._resolve import import_callable
from oloproof._system._settings import setting_paths
from oloproof.diagnosis import passed_cases, select_failures
from oloproof.flows._run import evaluate
from oloproof._locate import locate_store
from oloproof.store import ResultsStore, run_table
from oloproof.tasks._diagnose import (
    diagnosis_id_of,
    find_diagnosis,
    label_failures,
    load_parent_run,
    write_diagnosis,
)
from oloproof.tasks._identity import content_hash

__all__ = ["INTERVENTIONS", "diagnose", "parent_overrides"]

INTERVENTIONS = ("gold-context", "top-k", "reranker")


def parent_overrides(manifest: dict[str, Any], results: str) -> list[str]:
    """``--set`` overrides that reproduce the parent run's system, dataset and store."""
    system = manifest["system"]
    # Nulls too: a setting the parent run had switched off must stay off.
    overrides = [f"{'.'.join(path)}={json.dumps(system.get(name))}" for name, path in setting_paths().items()]
    overrides += [f"dataset={json.dumps(manifest['dataset'])}", f"results={json.dumps(results)}"]
    return overrides


def check_request(parent: dict[str, Any], intervention: str, top_k: int | None, reranker: str | None) -> None:
    """Refuse an impossible request before anything runs or is written."""
    system = parent["manifest"]["system"]
    if system["kind"] != "rag":
        raise UsageError("diagnosis re-executes retrieval and generation: it needs a @rag_system run")
    if intervention == "top-k":
        if top_k is None or top_k < 1:
            raise UsageError("--top-k must be an integer of at least 1", field="--top-k")
        if top_k > system["depth"]:
            raise UsageError(f"--top-k {top_k} exceeds the run's depth ({system['depth']})", field="--top-k")
    if intervention == "reranker":
        if not reranker:
            raise UsageError("--intervention reranker needs --reranker module:function", field="--reranker")
        import_callable(reranker, project_dir=parent["manifest"]["project"], option="--reranker")


def _child(parent: dict[str, Any], store: ResultsStore, cases: list[str], role: str, request: str, **options: Any) -> dict[str, Any]:
    """Run a child run and return its manifest with its judgments (read from the store)."""
    manifest = parent["manifest"]
    extra = options.pop("overrides", [])
    run = evaluate.with_options(flow_run_name=f"diagnose {role} · {len(cases)} cases")(
        project=manifest["project"],
        overrides=parent_overrides(manifest, store.url) + extra,
        case_ids=cases,
        bypass_generation_cache=True,
        parent={"run_id": manifest["run_id"], "diagnosis_request": request, "role": role},
        **options,
    )
    return {**run, "judgments": store.read_table(run_table(run["run_id"], "judgments"))}


@flow(name="oloproof-diagnose", flow_run_name="diagnose {run_id} {intervention}", validate_parameters=False)
def diagnose(
    run_id: str,
    intervention: str,
    criterion: str,
    results: str | None = None,
    project: str | None = None,
    top_k: int | None = None,
    reranker: str | None = None,
    threshold: float | None = None,
) -> dict[str, Any]:
    """Diagnose the failures of ``criterion`` in ``run_id`` under one intervention.

    Returns:
        The diagnosis record (also written to the store).
    """
    if intervention not in INTERVENTIONS:
        raise UsageError(f"unknown intervention {intervention!r} (known: {', '.join(INTERVENTIONS)})")
    store = locate_store(results, project)
    results = store.url
    # Only the chosen intervention's own option takes part, so a stray one can
    # neither change the replay nor hide from the diagnosis's identity.
    top_k = top_k if intervention == "top-k" else None
    reranker = reranker if intervention == "reranker" else None
    settings = {"top_k": top_k} if intervention == "top-k" else {"reranker": reranker} if intervention == "reranker" else {}
    request = content_hash({"parent": run_id, "criterion": criterion, "threshold": threshold,
                            "intervention": intervention, "settings": settings})
    existing = find_diagnosis(store, request)
    if existing is not None:
        return existing
    parent = load_parent_run(store, run_id)
    check_request(parent, intervention, top_k, reranker)
    selection = select_failures(parent["judgments"], parent["cases"], criterion=criterion,
                                threshold=threshold, run_id=run_id)
    cases = list(selection.with_gold)
    record: dict[str, Any] = {"parent_run_id": run_id, "criterion": criterion, "threshold": threshold,
                              "intervention": intervention, "settings": settings, "labels_from": None,
                              "without_gold": list(selection.without_gold), "cases": [], "recovered": 0,
                              "implicated": None, "child_runs": {}}
    if intervention == "gold-context":
        if cases:
            runs = {
                "gold_context": _child(parent, store, cases, "gold context", request, context_source="gold"),
                "control": _child(parent, store, cases, "control", request),
            }
            record.update(label_failures(parent, cases, runs, criterion, threshold))
            record["child_runs"] = {role: run["run_id"] for role, run in runs.items()}
    else:
        gold = diagnose(run_id, "gold-context", criterion, results, project, threshold=threshold)
        record.update(_replay(parent, store, cases, request, gold, criterion, threshold, top_k, reranker))
    record["diagnosis_id"] = diagnosis_id_of(record)
    record["request"] = request
    write_diagnosis(store, record, request)
    return record


def _replay(parent: dict[str, Any], store: ResultsStore, cases: list[str], request: str, gold: dict[str, Any],
            criterion: str, threshold: float | None, top_k: int | None, reranker: str | None) -> dict[str, Any]:
    options: dict[str, Any] = {"replay_from": parent["manifest"]["run_id"]}
    if top_k is not None:
        options["overrides"] = [f"system.rag.top_k={top_k}"]
    role = f"top-k {top_k}" if top_k is not None else f"reranker {reranker}"
    runs: dict[str, Any] = {}
    if cases:
        runs["intervention"] = _child(parent, store, cases, role, request, reranker=reranker, **options)
        runs["replay_control"] = _child(parent, store, cases, "replay control", request,
                                        replay_from=parent["manifest"]["run_id"])
    verdicts = {role_: passed_cases(run["judgments"], criterion, threshold) for role_, run in runs.items()}
    labelled = {case["case_id"]: case for case in gold["cases"]}
    merged = []
    for case_id in cases:
        control_passed = verdicts["replay_control"].get(case_id, False)
        merged.append({**labelled[case_id], "replay_control_passed": control_passed,
                       "intervention_recovered": verdicts["intervention"].get(case_id, False) and not control_passed})
    return {
        "cases": merged,
        "recovered": sum(1 for case in merged if case["intervention_recovered"]),
        "labels_from": gold["diagnosis_id"],
        "child_runs": {**gold["child_runs"], **{role_: run["run_id"] for role_, run in runs.items()}},
    }
