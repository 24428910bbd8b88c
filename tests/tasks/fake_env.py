"""A stand-in for a run's environment: what the stage tasks read of it, over a real local store."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from oloproof.config._settings import SystemConfig
from oloproof.dataset import Case
from oloproof.store import ResultsStore
from oloproof.tasks import Flights
from oloproof.tasks._plans import Plans

SYSTEM = {"kind": "rag", "object": "app:Rag", "name": "support-rag", "version": "v1", "depth": 4, "top_k": 2,
          "token_budget": None, "index_version": "kb-1", "retriever_version": None}  # fmt: skip


def fake_env(store: ResultsStore, cases: dict[str, Case], *, kind: str = "rag", token_budget: int | None = None,
             count_tokens: Any = None, **request: Any) -> SimpleNamespace:
    """An environment of a RAG system (``kind``) over ``cases``; ``request`` sets the run's variant."""
    system = {**SYSTEM, "kind": kind, "token_budget": token_budget}
    config = SystemConfig.model_validate(system)
    variant = {"context_source": "assembled", "replay_from": None, "bypass_generation_cache": False,
               "reranker": None, "stages": "all", **request}  # fmt: skip
    progress: list[tuple[str, int]] = []
    return SimpleNamespace(
        run_id="run_1", store=store, cases=cases, system_dict=system, request=SimpleNamespace(**variant),
        system=SimpleNamespace(config=config, count_tokens=count_tokens or (lambda passage: len(passage.text or ""))),
        progress=lambda stage, count=1: progress.append((stage, count)), progressed=progress,
        recorded=None, reranker=None, flights=Flights(), plans=Plans(), retrieve_repeats=False,
    )  # fmt: skip
