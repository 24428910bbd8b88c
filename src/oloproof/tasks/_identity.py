"""Stage identities: the exact inputs that determine each stage's result.

Every key names its stage and the record schema version, so two stages with
equal inputs can never share a cached result.

- retrieval: system name, ``index_version``, ``retriever_version``, ``depth``, input;
  never ``top_k``, ``token_budget`` or the system ``version``.
- assembly: the retrieval key, ``top_k``, ``token_budget`` and the system name
  and version (``count_tokens`` belongs to the system's code).
- generation: system name and version, the input and the exact assembled
  context (doc ids, chunk ids and texts, in order).
- judgment: the evaluator's identity (its spec and version, less the options that
  only turn scores into verdicts) plus exactly the fields it read.
- execution: the whole system configuration plus the input.
"""

from __future__ import annotations

from typing import Any

from oloproof._json import canonical_json, content_hash

__all__ = [
    "SCHEMA_VERSION",
    "assembly_key",
    "canonical_json",
    "content_hash",
    "execution_key",
    "generation_key",
    "judgment_key",
    "retrieval_key",
]

SCHEMA_VERSION = 1


def _key(stage: str, identity: dict[str, Any]) -> str:
    return content_hash({"stage": stage, "schema": SCHEMA_VERSION, **identity})


def retrieval_key(system: dict[str, Any], case_input: Any) -> str:
    """Identity of one ``retrieve`` call."""
    return _key(
        "retrieve",
        {
            "system": system["name"],
            "index_version": system["index_version"],
            "retriever_version": system.get("retriever_version"),
            "depth": system["depth"],
            "input": case_input,
        },
    )


def assembly_key(system: dict[str, Any], retrieval: str) -> str:
    """Identity of assembling one retrieval into a context."""
    return _key(
        "assemble",
        {
            "system": system["name"],
            "version": system["version"],
            "retrieval": retrieval,
            "top_k": system["top_k"],
            "token_budget": system.get("token_budget"),
        },
    )


def generation_key(
    system: dict[str, Any], case_input: Any, context: list[dict[str, Any]] | None
) -> str:
    """Identity of one ``generate`` call (or one plain system call)."""
    passages = (
        None
        if context is None
        else [
            {"doc_id": p["doc_id"], "chunk_id": p.get("chunk_id"), "text": p.get("text")}
            for p in context
        ]
    )
    return _key(
        "generate",
        {"system": system["name"], "version": system["version"], "input": case_input, "context": passages},
    )


JUDGMENT_FORMAT = 2
"""The shape of a cached verdict: 2 holds the raw score (1 held a value in [0, 1])."""


def judgment_key(identity: dict[str, Any], fields: dict[str, Any]) -> str:
    """Identity of judging ``fields`` with the evaluator of that ``identity``."""
    return _key("judge", {"format": JUDGMENT_FORMAT, "evaluator": identity, "fields": fields})


def execution_key(system: dict[str, Any], case_input: Any) -> str:
    """Identity of executing a case end to end under a whole system configuration."""
    configuration = {key: value for key, value in system.items() if key != "object"}
    return _key("execute", {"system": configuration, "input": case_input})
