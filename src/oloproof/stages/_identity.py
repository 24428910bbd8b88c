"""Stage identities: the exact inputs that determine each stage's result.

Every key names its stage and the record schema version, so two stages with
equal inputs can never share a cached result.

- retrieval: system name, ``index_version``, ``retriever_version``, ``depth``, input,
  and the retriever's declared parameters; never ``top_k``, ``token_budget``, the
  system ``version`` or the generator's parameters.
- assembly: the retrieval key, ``top_k``, ``token_budget`` and the system name
  and version (``count_tokens`` belongs to the system's code).
- generation: system name and version, the input, the exact assembled context
  (doc ids, chunk ids and texts, in order) and the generator's declared parameters.
- judgment: the evaluator's identity (its spec and version, less the options that
  only turn scores into verdicts) plus exactly the fields it read.
- execution: the whole system configuration plus the input.
- tool (agents): system name, ``index_version``, the tool's name, version and
  declared parameters, and the call's canonical arguments; never the agent's
  version or its run parameters, so a changed prompt reuses every unchanged call.
- agent run (the generate stage of an agent): system name and version, the input,
  ``index_version``, every tool's version and parameters, the run's declared
  parameters, and the diagnosis intervention it runs under (if any).

Declared parameters enter an identity only when the system declares them: a system
without any keeps the identities it had before they existed. Likewise the repeat:
a generation, agent run, execution or judgment repeated (``repeats``,
``judge_repeats``) carries its repeat index from the second on, so the first repeat
is the run without repeats, and each further one is cached on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from pydantic import JsonValue

from oloproof._json import canonical_json, content_hash
from oloproof.config._settings import SystemConfig

__all__ = [
    "SCHEMA_VERSION",
    "agent_run_key",
    "assembly_key",
    "canonical_json",
    "content_hash",
    "execution_key",
    "generation_key",
    "judgment_key",
    "retrieval_key",
    "tool_key",
]

SCHEMA_VERSION = 1

Identity = dict[str, JsonValue]
"""The inputs of one stage call as the JSON object its key hashes."""


def _key(stage: str, identity: Mapping[str, object]) -> str:
    return content_hash({"stage": stage, "schema": SCHEMA_VERSION, **identity})


def retrieval_key(system: SystemConfig, case_input: JsonValue, repeat: int = 0) -> str:
    """Identity of one ``retrieve`` call; ``repeat``: which sample (``retrieve_repeats``)."""
    identity: Identity = {
        "system": system.name,
        "index_version": system.index_version,
        "retriever_version": system.retriever_version,
        "depth": system.depth,
        "input": case_input,
    }
    if system.retriever is not None:
        identity["retriever"] = system.retriever
    return _key("retrieve", _repeated(identity, repeat))


def assembly_key(system: SystemConfig, retrieval: str) -> str:
    """Identity of assembling one retrieval into a context."""
    return _key(
        "assemble",
        {
            "system": system.name,
            "version": system.version,
            "retrieval": retrieval,
            "top_k": system.top_k,
            "token_budget": system.token_budget,
        },
    )


def generation_key(
    system: SystemConfig, case_input: JsonValue, context: Sequence[Mapping[str, JsonValue]] | None, repeat: int = 0
) -> str:
    """Identity of one ``generate`` call (or one plain system call); ``repeat``: which sample."""
    passages: JsonValue = (
        None
        if context is None
        else [
            {"doc_id": p["doc_id"], "chunk_id": p.get("chunk_id"), "text": p.get("text")}
            for p in context
        ]
    )
    identity: Identity = {"system": system.name, "version": system.version, "input": case_input,
                          "context": passages}  # fmt: skip
    if system.generator is not None:
        identity["generator"] = system.generator
    return _key("generate", _repeated(identity, repeat))


def _repeated(identity: Identity, repeat: int) -> Identity:
    """The identity of the ``repeat``-th sample: the first is the identity itself."""
    return identity if repeat == 0 else {**identity, "repeat": repeat}


def tool_key(system: SystemConfig, tool: str, arguments: JsonValue) -> str:
    """Identity of one call of an agent's tool.

    Raises:
        KeyError: The system declares no such tool.
    """
    spec = (system.tools or {})[tool]
    return _key("tool", {"system": system.name, "index_version": system.index_version, "tool": tool,
                         "version": spec.get("version"), "parameters": spec.get("parameters"),
                         "arguments": arguments})  # fmt: skip


def agent_run_key(
    system: SystemConfig, case_input: JsonValue, intervention: JsonValue = None, repeat: int = 0
) -> str:
    """Identity of one ``run(input, tools)`` of an agent (its generate stage).

    ``intervention`` is what a diagnosis changed (gold passages for the context
    tools, a forced call); ``None`` for the agent as it is.
    """
    identity: Identity = {"system": system.name, "version": system.version, "input": case_input,
                          "index_version": system.index_version,
                          "tools": cast("JsonValue", system.tools)}  # fmt: skip
    if system.generator is not None:
        identity["generator"] = system.generator
    if intervention is not None:
        identity["intervention"] = intervention
    return _key("generate", _repeated(identity, repeat))


JUDGMENT_FORMAT = 2
"""The shape of a cached verdict: 2 holds the raw score (1 held a value in [0, 1])."""


def judgment_key(identity: Mapping[str, JsonValue], fields: object, repeat: int = 0) -> str:
    """Identity of judging ``fields`` with the evaluator of that ``identity``; ``repeat``:
    which of the judge's calls on them."""
    # ``fields`` are what the evaluator read, of its own type; they are hashed as JSON.
    return _key("judge", _repeated({"format": JUDGMENT_FORMAT, "evaluator": cast("JsonValue", identity),
                                    "fields": cast("JsonValue", fields)}, repeat))  # fmt: skip


def execution_key(system: SystemConfig, case_input: JsonValue, repeat: int = 0, retrieved_again: bool = False) -> str:
    """Identity of executing a case end to end under a whole system configuration
    (where the object was imported from aside; declared parameters included);
    ``retrieved_again``: a repeat that retrieved afresh (``retrieve_repeats``)."""
    configuration = system.model_dump(mode="json", exclude={"object"})
    identity: Identity = {"system": configuration, "input": case_input}
    if retrieved_again and repeat > 0:
        identity["retrieved_again"] = True
    return _key("execute", _repeated(identity, repeat))
