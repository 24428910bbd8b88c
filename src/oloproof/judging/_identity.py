"""Which judge a validation is about: the identity a record is keyed by."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oloproof._json import content_hash

__all__ = ["judge_id", "judge_summary"]


def judge_id(identity: Mapping[str, Any] | None) -> str | None:
    """The key of a judge's validation record: the hash of its identity.

    Args:
        identity: What `Evaluator.judge_identity` returns; ``None`` for an
            evaluator that is not an LLM judge.

    Returns:
        A hex digest, or ``None`` when ``identity`` is ``None``.
    """
    return None if identity is None else content_hash(dict(identity))


def judge_summary(identity: Mapping[str, Any] | None) -> str:
    """``groundedness v1 · openai llama3.1:8b · prompt 3f2a9c1b · threshold 3`` for listings."""
    if not identity:
        return "unknown judge"
    options = identity.get("options") or {}
    parts = [f"{identity.get('type')} v{identity.get('version')}"]
    model = options.get("model")
    provider = identity.get("provider_type")
    if model or provider:
        parts.append(" ".join(str(p) for p in (provider, model) if p))
    prompts = identity.get("prompts") or {}
    if prompts:
        parts.append("prompt " + "/".join(str(h)[:8] for _, h in sorted(prompts.items())))
    if "threshold" in identity:
        threshold = identity["threshold"]
        parts.append("mean score" if threshold is None else f"threshold {threshold:g}")
    return " · ".join(parts)
