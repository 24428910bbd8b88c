"""The diagnose flow: re-execute a run's failures under an intervention beside a control.

A diagnosis reads its parent run as `RunRecords` and its child runs' judgments
from the store, and its record is the JSON it stores (`StoredDiagnosis`).

Child runs (gold context, control, a replay under a new setting, replay control)
are ordinary runs, run as subflows of this one and recorded in the store as runs
of kind ``diagnosis_child``.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from prefect import flow
from pydantic import BaseModel, ConfigDict, JsonValue

from oloproof._exceptions import UsageError
from oloproof._ids import new_run_id
from oloproof._locate import locate_store
from oloproof._system._resolve import import_callable
from oloproof.config._settings import setting_paths
from oloproof.diagnosis import passed_cases, select_failures
from oloproof.flows._events import delivering_events
from oloproof.flows._publish import publish_diagnosis_pages
from oloproof.flows._run import PreparedRun
from oloproof.records import RunManifest, RunRecords, StoredDiagnosis, StoredJudgment
from oloproof.stages._identity import content_hash
from oloproof.store import ResultsStore, run_table
from oloproof.tasks import RunRequest, prepare_environment
from oloproof.tasks._diagnose import (
    ChildRun,
    diagnosis_id_of,
    find_diagnosis,
    label_failures,
    load_parent_run,
    repeated_outcomes,
    write_diagnosis,
)

__all__ = ["INTERVENTIONS", "DiagnosisRequest", "PreparedDiagnosis", "diagnose", "parent_settings", "prepare_diagnosis"]

Intervention = Literal["gold-context", "top-k", "reranker"]

INTERVENTIONS: tuple[Intervention, ...] = ("gold-context", "top-k", "reranker")


class DiagnosisRequest(BaseModel):
    """One diagnosis: which failures, under which intervention, in which store."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_id: str
    """The run whose failures are diagnosed."""

    intervention: Intervention
    """What the failures are re-executed under."""

    criterion: str
    """The criterion whose failures are diagnosed."""

    results: str
    """The results store URL holding the run."""

    project: str | None = None
    """The project whose ``storage_options`` the store takes, if any."""

    threshold: float | None = None
    """A score below this fails (score criteria)."""

    top_k: int | None = None
    """The cut-off replayed (``top-k`` only)."""

    reranker: str | None = None
    """``module:function`` re-ranking the replayed candidates (``reranker`` only)."""

    resample: int = 0
    """Which draw of the re-executions: an identical request recalls its recorded
    diagnosis; another number re-executes the child runs afresh (new samples)."""

    @property
    def settings(self) -> dict[str, int | str | None]:
        """The intervention's own option."""
        if self.intervention == "top-k":
            return {"top_k": self.top_k}
        if self.intervention == "reranker":
            return {"reranker": self.reranker}
        return {}

    @property
    def identity(self) -> str:
        """What a recorded diagnosis of this exact request is found by."""
        identity: dict[str, JsonValue] = {"parent": self.run_id, "criterion": self.criterion,
                                          "threshold": self.threshold, "intervention": self.intervention,
                                          "settings": dict(self.settings)}  # fmt: skip
        if self.resample:  # the first draw keeps the identity requests had before draws were numbered
            identity["resample"] = self.resample
        return content_hash(identity)

    def gold_context(self) -> DiagnosisRequest:
        """The gold-context diagnosis a replay's labels come from."""
        return self.model_copy(update={"intervention": "gold-context", "top_k": None, "reranker": None})


def diagnosis_request(
    run_id: str, intervention: str, criterion: str, store: ResultsStore, *, project: str | None = None,
    threshold: float | None = None, top_k: int | None = None, reranker: str | None = None, resample: int = 0,
) -> DiagnosisRequest:
    """The request for these options; only the chosen intervention's own option is kept, so
    a stray one can neither change the replay nor hide from the diagnosis's identity.

    Raises:
        UsageError: The intervention is unknown, or ``resample`` is negative.
    """
    if intervention not in INTERVENTIONS:
        raise UsageError(f"unknown intervention {intervention!r} (known: {', '.join(INTERVENTIONS)})")
    if resample < 0:
        raise UsageError(f"--resample must be 0 or more, got {resample}", field="--resample")
    return DiagnosisRequest(
        run_id=run_id, intervention=intervention, criterion=criterion, results=store.url, project=project,
        threshold=threshold, top_k=top_k if intervention == "top-k" else None,
        reranker=reranker if intervention == "reranker" else None, resample=resample,
    )


def parent_settings(manifest: RunManifest) -> dict[str, JsonValue]:
    """The settings that reproduce the parent run's system and dataset."""
    system = manifest.system
    if system.get("kind") == "agent":
        return _agent_settings(manifest)
    # Nulls too: a setting the parent run had switched off must stay off.
    settings = {".".join(path): system.get(name) for name, path in setting_paths().items()}
    settings["dataset"] = manifest.dataset
    return settings | _repeat_settings(manifest)


def _repeat_settings(manifest: RunManifest) -> dict[str, JsonValue]:
    """The parent's repeats: each re-execution samples a case as often as the run did."""
    return {name: count for name, count in (("repeats", manifest.repeats), ("judge_repeats", manifest.judge_repeats))
            if count > 1}  # fmt: skip


def _agent_settings(manifest: RunManifest) -> dict[str, JsonValue]:
    """An agent's name, version, index and declared parameters (its run's and each tool's)."""
    system = manifest.system
    tools = system.get("tools")
    parameters: dict[str, JsonValue] = {}
    for name, spec in (tools if isinstance(tools, dict) else {}).items():
        if isinstance(spec, dict) and spec.get("parameters") is not None:
            parameters[name] = spec["parameters"]
    return {"system.name": system.get("name"), "system.version": system.get("version"),
            "system.agent.index_version": system.get("index_version"),
            "system.agent.generator": system.get("generator"), "system.agent.tools": parameters or None,
            "dataset": manifest.dataset} | _repeat_settings(manifest)  # fmt: skip


def check_request(parent: RunRecords, intervention: str, top_k: int | None, reranker: str | None) -> None:
    """Refuse an impossible request before anything runs or is written."""
    manifest = parent.manifest
    kind = manifest.system.get("kind")
    if kind == "recorded":
        raise UsageError(
            f"run {manifest.run_id} evaluated recorded data: no system ran, so there is "
            "nothing to re-execute under an intervention"
        )
    if manifest.retrieve_repeats:
        raise UsageError(f"run {manifest.run_id} retrieved each case afresh in every repeat: a diagnosis labels "
                         "a case by where its one retrieval put the evidence; diagnose a run without "
                         "retrieve_repeats")  # fmt: skip
    if kind == "agent" and intervention != "gold-context":
        raise UsageError(f"an agent has no top_k or ranking of its own to replay: diagnose agent run "
                         f"{manifest.run_id} with --intervention gold-context")  # fmt: skip
    if kind not in ("rag", "agent"):
        raise UsageError("diagnosis re-executes retrieval and generation: it needs a @rag_system run "
                         "(or an @agent_system run)")  # fmt: skip
    if intervention == "top-k":
        if top_k is None or top_k < 1:
            raise UsageError("--top-k must be an integer of at least 1", field="--top-k")
        depth = cast(int, manifest.system["depth"])  # a rag run's manifest always has it
        if top_k > depth:
            raise UsageError(f"--top-k {top_k} exceeds the run's depth ({depth})", field="--top-k")
    if intervention == "reranker":
        if not reranker:
            raise UsageError("--intervention reranker needs --reranker module:function", field="--reranker")
        import_callable(reranker, project_dir=manifest.project, option="--reranker")


class PreparedDiagnosis:
    """A validated diagnosis: its request, its store and the parent run's records.

    Args:
        request: The diagnosis request.
        store: The store holding the parent run; child runs and the record go there too.
        parent: The parent run's manifest, cases and judgments.
    """

    def __init__(self, request: DiagnosisRequest, store: ResultsStore, parent: RunRecords) -> None:
        self.request = request
        self.store = store
        self.parent = parent

    @flow(name="oloproof-diagnose", flow_run_name="diagnose {run_id} {intervention}", validate_parameters=False)
    def diagnose(
        self, run_id: str, intervention: str, criterion: str, results: str, project: str | None = None,
        threshold: float | None = None, top_k: int | None = None, reranker: str | None = None, resample: int = 0,
    ) -> StoredDiagnosis:
        """Diagnose the prepared request; the parameters are its fields, as Prefect records them."""
        return diagnose_prepared(self)

    def __call__(self) -> StoredDiagnosis:
        """Run the bound flow; returns once its events are delivered."""
        return delivering_events(lambda: self.diagnose(**self.request.model_dump(mode="json")))


def prepare_diagnosis(request: DiagnosisRequest, store: ResultsStore) -> PreparedDiagnosis:
    """Check the request against its parent run; raises before anything runs or is written."""
    parent = load_parent_run.fn(store, request.run_id)
    check_request(parent, request.intervention, request.top_k, request.reranker)
    select_failures(parent.judgments, parent.cases, criterion=request.criterion,
                    threshold=request.threshold, run_id=request.run_id)
    return PreparedDiagnosis(request, store, parent)


def _child(prepared: PreparedDiagnosis, cases: list[str], role: str, **variant: Any) -> ChildRun:
    """Run a child run and return its id with its judgments (read from the store)."""
    manifest = prepared.parent.manifest
    settings = {**parent_settings(manifest), **variant.pop("settings", {})}
    request = RunRequest(
        run_id=new_run_id(), project=manifest.project, settings=settings, results=prepared.store.url,
        case_ids=tuple(cases), bypass_generation_cache=True, kind="diagnosis_child",
        parent={"run_id": manifest.run_id, "diagnosis_request": prepared.request.identity, "role": role},
        **variant,
    )
    env = prepare_environment(request)
    try:
        count = "1 case" if len(cases) == 1 else f"{len(cases)} cases"
        run = PreparedRun(env)(flow_run_name=f"diagnose {role} · {count}")
    finally:
        env.close()
    judgments = prepared.store.read_table(run_table(run["run_id"], "judgments"))
    return ChildRun(run_id=run["run_id"], judgments=cast("list[StoredJudgment]", judgments))  # the table's rows


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
    resample: int = 0,
) -> StoredDiagnosis:
    """Diagnose the failures of ``criterion`` in ``run_id`` under one intervention.

    The entry point of deployments: the parameters become one request, checked once.

    Returns:
        The diagnosis record (also written to the store).
    """
    store = locate_store(results, project)
    request = diagnosis_request(run_id, intervention, criterion, store, project=project,
                                threshold=threshold, top_k=top_k, reranker=reranker, resample=resample)
    existing = find_diagnosis(store, request.identity)
    if existing is not None:
        return existing
    return diagnose_prepared(prepare_diagnosis(request, store))


def diagnose_prepared(prepared: PreparedDiagnosis) -> StoredDiagnosis:
    """The body of both diagnose flows: re-execute, label and record (or recall)."""
    request, store, parent = prepared.request, prepared.store, prepared.parent
    existing = find_diagnosis(store, request.identity)
    if existing is not None:
        return existing
    selection = select_failures(parent.judgments, parent.cases, criterion=request.criterion,
                                threshold=request.threshold, run_id=request.run_id)
    cases = list(selection.with_gold)
    record: StoredDiagnosis = {"parent_run_id": request.run_id, "criterion": request.criterion,
                               "threshold": request.threshold, "intervention": request.intervention,
                               "settings": request.settings, "labels_from": None,
                               "without_gold": list(selection.without_gold), "cases": [], "recovered": 0,
                               "implicated": None, "child_runs": {}}
    if request.intervention == "gold-context":
        if cases:
            runs = {
                "gold_context": _child(prepared, cases, "gold context", context_source="gold"),
                "control": _child(prepared, cases, "control"),
            }
            record.update(label_failures(parent, cases, runs, request.criterion, request.threshold))
            record["child_runs"] = {role: run.run_id for role, run in runs.items()}
    else:
        gold = PreparedDiagnosis(request.gold_context(), store, parent)()
        record.update(_replay(prepared, cases, gold))
    record["diagnosis_id"] = diagnosis_id_of(record)
    record["request"] = request.identity
    write_diagnosis(store, record, request.identity)
    publish_diagnosis_pages(store, record)
    return record


def _replay(prepared: PreparedDiagnosis, cases: list[str], gold: StoredDiagnosis) -> StoredDiagnosis:
    request, parent_id = prepared.request, prepared.parent.manifest.run_id
    variant: dict[str, object] = {"replay_from": parent_id, "reranker": request.reranker}
    if request.top_k is not None:
        variant["settings"] = {"system.rag.top_k": request.top_k}
    role = f"top-k {request.top_k}" if request.top_k is not None else f"reranker {request.reranker}"
    runs: dict[str, ChildRun] = {}
    if cases:
        runs["intervention"] = _child(prepared, cases, role, **variant)
        runs["replay_control"] = _child(prepared, cases, "replay control", replay_from=parent_id)
    verdicts = {role_: passed_cases(run.judgments, request.criterion, request.threshold)
                for role_, run in runs.items()}
    repeated = repeated_outcomes(prepared.parent, runs["replay_control"], runs["intervention"],
                                 request.criterion, request.threshold) if runs else None  # fmt: skip
    labelled = {case["case_id"]: case for case in gold["cases"]}
    merged = []
    for case_id in cases:
        control_passed = verdicts["replay_control"].get(case_id, False)
        replay: dict[str, int] = {}
        if repeated is not None:  # the replay's own counts, beside the gold context's
            outcome = repeated[case_id]
            control_passed = outcome.unstable
            replay = {"replay_control_passes": outcome.control.passed,
                      "replay_intervention_passes": outcome.intervention.passed}
        merged.append({**labelled[case_id], "replay_control_passed": control_passed, **replay,
                       "intervention_recovered": verdicts["intervention"].get(case_id, False) and not control_passed})
    return {
        "cases": merged,
        "recovered": sum(1 for case in merged if case["intervention_recovered"]),
        "labels_from": gold["diagnosis_id"],
        "child_runs": {**gold["child_runs"], **{role_: run.run_id for role_, run in runs.items()}},
    }
