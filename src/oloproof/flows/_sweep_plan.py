"""The plan of a sweep: the calls each stage would make, counted before anything runs.

``oloproof sweep --dry-run`` prints it. Nothing is called and nothing is written: every
identity is the one the stage tasks compute (from their own work items), looked up in the
store's stage caches. Over the settings without a complete run:

- ``retrieve``: the distinct retrieval identities no cache holds (exact).
- ``generate``: the distinct generation identities no cache holds, of the cases whose
  context is known: their assembly is cached, or their retrieval is and the assembly is
  made here by the assemble stage's own function (a token counter that is a coroutine
  function leaves it unknown). A plain system's and an agent's runs need no context: they
  are exact (an agent's tool calls are not counted). A context whose retrieval the sweep
  has yet to make is not known: those generations are counted apart, as an upper bound
  (``generate_unknown``), one per distinct assembly identity and generator. Equal assembly
  identities assemble equal contexts, so they never need two generations; different ones
  may still share one.
- ``judge``: LLM judge calls only (a deterministic evaluator's verdict is no call). Exact
  where the case's result is known (its execution is cached, or every record it is merged
  from): the judgment identity is then the judge stage's own. The others are an upper
  bound (``judge_unknown``): one per LLM judge and distinct case, retrieval and generation.
  A retrieval-only sweep generates nothing; its judges are those reading the retrieval alone.
- ``reused``: the per-case stage executions of those settings (retrieve, generate and LLM
  judge) that are no calls: served from a cache, or shared with an equal identity of
  another case or setting. With an upper bound, it is a lower bound.

The counts assume every call succeeds (a failed retrieval is never generated from) and
that each identity is computed once in the sweep: the stage caches share it with the
settings run after, and the runs' flights with those asking for it at the same moment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, JsonValue

from oloproof._json import content_hash
from oloproof.evaluators import Verdict
from oloproof.flows._sweep import PreparedSweep, _recorded_run
from oloproof.records import StageRecord, stage_record
from oloproof.stages import Batch, assembly_key, judgment_key
from oloproof.store import ResultsStore
from oloproof.tasks import CaseResult, Outcome, RunEnvironment
from oloproof.tasks._assemble_task import assembly_items
from oloproof.tasks._cached import WorkItem, outcome
from oloproof.tasks._execution import CachedExecution, _merge, lookup_executions
from oloproof.tasks._generate import generation_items
from oloproof.tasks._judge import case_view
from oloproof.tasks._retrieve import retrieval_items

__all__ = ["STAGES", "SweepPlan", "plan_sweep"]

STAGES = ("retrieve", "generate", "judge")
"""The stages whose calls a plan counts, in the order they run."""

_MERGED = ("retrieve", "assemble", "generate")
"""The stages whose outcomes make a case's result."""


class SweepPlan(BaseModel):
    """What a sweep would run, counted from the identities and the caches."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    sweep_id: str
    """``swp_<hash>``: the request's identity."""
    settings: list[str]
    """Every setting's label, the baseline first."""
    runs: int
    """The settings without a complete run: those the sweep runs."""
    complete: int
    """The settings a complete run already answers."""
    retrieve: int
    """Retriever calls (exact)."""
    generate: int
    """Generator calls (an agent's: its runs) whose identity is known now (exact)."""
    generate_unknown: int
    """At most this many more generator calls, of contexts not known until the sweep retrieves."""
    judge: int
    """LLM judge calls of the outputs known now (exact)."""
    judge_unknown: int
    """At most this many more LLM judge calls, of outputs not known until the sweep generates."""
    reused: int
    """Per-case stage executions (retrieve, generate, LLM judge) served from a cache or shared
    with an equal identity: no call. A lower bound when any count is unknown."""
    reused_by_stage: dict[str, int]
    """``reused`` per stage (``retrieve``, ``generate``, ``judge``)."""
    repeats: int = 1
    """The most repeats a setting samples each case: the counts above are of the first repeat."""


def plan_sweep(sweep: PreparedSweep) -> dict[str, JsonValue]:
    """Count the calls of every stage of the settings without a complete run; calls nothing.

    Returns:
        A `SweepPlan`, as JSON.
    """
    store = sweep.store
    pending = [s for s in sweep.all_runs() if _recorded_run(store, sweep.sweep_id, s.key) is None]
    cache = _Cache(store)
    stages = {name: _Stage() for name in STAGES}
    for setting in pending:
        _plan_setting(setting.env, cache, stages)
    calls = {name: cache.missing(name, stage.keys) for name, stage in stages.items()}
    reused = {name: stage.reused(calls[name]) for name, stage in stages.items()}
    plan = SweepPlan(
        sweep_id=sweep.sweep_id, settings=[s.label for s in sweep.all_runs()], runs=len(pending),
        complete=len(sweep.all_runs()) - len(pending), retrieve=calls["retrieve"], generate=calls["generate"],
        generate_unknown=len(stages["generate"].unknown), judge=calls["judge"],
        judge_unknown=len(stages["judge"].unknown), reused=sum(reused.values()), reused_by_stage=reused,
        repeats=max(s.env.repeats for s in sweep.all_runs()),
    )  # fmt: skip
    return plan.model_dump(mode="json")


@dataclass
class _Stage:
    """What one stage is asked for over the pending settings."""

    executions: int = 0
    """Per-case executions asked for (one per setting and case)."""
    keys: set[str] = field(default_factory=set)
    """The identities known exactly."""
    unknown: set[str] = field(default_factory=set)
    """Hashes of what bounds the identities not known yet."""

    def ask(self, key: str) -> None:
        """One execution of a known identity."""
        self.executions += 1
        self.keys.add(key)

    def bound(self, unit: JsonValue) -> None:
        """One execution whose identity is not known: at most one call per distinct ``unit``."""
        self.executions += 1
        self.unknown.add(content_hash(unit))

    def reused(self, calls: int) -> int:
        """The executions that are no call (at least, with unknown identities)."""
        return self.executions - calls - len(self.unknown)


class _Cache:
    """The store's stage caches, each key read once."""

    def __init__(self, store: ResultsStore) -> None:
        self.store = store
        self.seen: dict[str, dict[str, StageRecord | None]] = {}

    def get(self, stage: str, keys: set[str] | list[str]) -> dict[str, StageRecord]:
        """The cached records of ``keys`` that ``stage``'s cache holds."""
        seen = self.seen.setdefault(stage, {})
        unread = sorted(set(keys) - seen.keys())
        if unread:
            found, model = self.store.get_records(stage, unread), stage_record(stage)
            seen.update({key: model.model_validate(found[key]) if key in found else None for key in unread})
        return {key: record for key in keys if (record := seen[key]) is not None}

    def missing(self, stage: str, keys: set[str]) -> int:
        """How many of ``keys`` ``stage``'s cache does not hold."""
        return len(keys) - len(self.get(stage, keys))


@dataclass
class _Case:
    """What the plan knows of one case of one setting."""

    retrieval: str | None = None
    """The retrieval identity (RAG systems)."""
    generation: str | None = None
    """The generation identity, or the hash of what bounds it when its context is unknown."""
    stages: dict[str, Outcome | None] = field(default_factory=lambda: dict.fromkeys(_MERGED))
    """Each stage's cached (or assembled) outcome; ``None`` where not known."""


def _plan_setting(env: RunEnvironment, cache: _Cache, stages: dict[str, _Stage]) -> None:
    """Add one setting's executions to ``stages``."""
    batch = Batch(0, tuple(env.cases))
    executed = lookup_executions.fn(env, batch)
    todo = Batch(0, tuple(case_id for case_id in batch.case_ids if case_id not in executed))
    kind, everything = env.system.config.kind, env.request.stages == "all"
    cases = {case_id: _Case() for case_id in todo.case_ids}
    # A case served whole from the execution cache runs no stage before the judge.
    stages["retrieve"].executions += len(executed) if kind == "rag" else 0
    stages["generate"].executions += len(executed)
    if kind == "rag":
        _retrievals(env, todo, cases, cache, stages["retrieve"])
        if everything:
            _assemblies(env, todo, cases, cache)
    if everything and kind != "recorded":
        _generations(env, todo, cases, cache, stages["generate"])
    _judgments(env, batch, executed, cases, stages["judge"])


def _retrievals(env: RunEnvironment, todo: Batch, cases: dict[str, _Case], cache: _Cache, stage: _Stage) -> None:
    keys = {item.case_id: item.key for item in retrieval_items(env, todo)}
    found = cache.get("retrieve", list(keys.values()))
    for case_id, key in keys.items():
        stage.ask(key)
        cases[case_id].retrieval = key
        if key in found:
            cases[case_id].stages["retrieve"] = outcome(key=key, record=found[key], hit=True)


def _assemblies(env: RunEnvironment, todo: Batch, cases: dict[str, _Case], cache: _Cache) -> None:
    """Each case's assembly: cached, or made now from its cached retrieval (a synchronous counter)."""
    system = env.system.config
    keys = {case_id: assembly_key(system, case.retrieval) for case_id, case in cases.items() if case.retrieval}
    found = cache.get("assemble", list(keys.values()))
    for case_id, key in keys.items():
        if key in found:
            cases[case_id].stages["assemble"] = outcome(key=key, record=found[key], hit=True)
    retrieved = {case_id: done for case_id, case in cases.items() if (done := case.stages["retrieve"]) is not None}
    for item in assembly_items(env, todo, retrieved):
        if cases[item.case_id].stages["assemble"] is None and item.inline:  # else cached, or counted by a coroutine
            record = _assembled(item)
            cases[item.case_id].stages["assemble"] = None if record is None else outcome(key=item.key, record=record)


def _assembled(item: WorkItem) -> StageRecord | None:
    """The assembly the stage would record, made as the stage makes it; ``None`` where the
    system's token counter fails (the run makes that the case's failure, or its contract's)."""
    try:
        return item.finish(item.call(*item.args))
    except Exception:  # noqa: BLE001 - user code may raise anything
        return None


def _generations(env: RunEnvironment, todo: Batch, cases: dict[str, _Case], cache: _Cache, stage: _Stage) -> None:
    system = env.system.config
    assembled = {c: o for c, case in cases.items() if (o := case.stages["assemble"]) is not None}
    items = generation_items(env, todo, assembled if system.kind == "rag" else None)
    found = cache.get("generate", [item.key for item in items])
    for item in items:
        stage.ask(item.key)
        cases[item.case_id].generation = item.key
        if item.key in found:
            cases[item.case_id].stages["generate"] = outcome(key=item.key, record=found[item.key], hit=True)
    for case in cases.values():
        if case.generation is None and case.retrieval is not None:  # its context is not known yet
            unit: JsonValue = {"assembly": assembly_key(system, case.retrieval), "generator": system.generator}
            stage.bound(unit)
            case.generation = content_hash(unit)


def _result(env: RunEnvironment, case_id: str, case: _Case) -> CaseResult | None:
    """The case's result as the run merges it, when every record it is merged from is known."""
    kind, known = env.system.config.kind, case.stages
    needed = {"rag": ("retrieve", "assemble", "generate"), "plain": ("generate",), "agent": ("generate",),
              "recorded": ()}[kind] if env.request.stages == "all" else ("retrieve",)  # fmt: skip
    if any(known[name] is None for name in needed):
        return None
    tools = env.system.context_tools if kind == "agent" else None
    return _merge(case_id, "", dict(known), env.run_id, tools)


def _judgments(
    env: RunEnvironment, batch: Batch, executed: dict[str, CachedExecution], cases: dict[str, _Case], stage: _Stage
) -> None:
    """The LLM judge calls of the setting: exact identities where the case's result is known, else bounds."""
    judges = [(evaluator, evaluator.identity()) for evaluator in env.evaluators if evaluator.is_llm_judge]
    if not judges:
        return
    results = {
        case_id: CaseResult.of_execution(case_id, found.key, found.record) for case_id, found in executed.items()
    }
    results |= {case_id: result for case_id, case in cases.items() if (result := _result(env, case_id, case))}
    # As the judge stage reads a case: with its row only where a data_mapping may read it.
    with_item = env.dataset.recorded or any(evaluator.mapping for evaluator in env.evaluators)
    for case_id in batch.case_ids:
        result = results.get(case_id)
        view = case_view(env, result, with_item=with_item) if result is not None else None
        for judge, identity in judges:
            if view is None:
                case = cases[case_id]
                stage.bound({"judge": identity, "case": case_id, "retrieval": case.retrieval,
                             "generation": case.generation})  # fmt: skip
                continue
            fields = judge.read(view)
            if not isinstance(fields, Verdict):  # an excluded case is no judgment
                stage.ask(judgment_key(identity, fields))
