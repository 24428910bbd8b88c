"""Oloproof: staged RAG evaluation that tells you why answers fail.

The public API a system author needs is importable from here without importing
Prefect; running, diagnosing and comparing live behind the CLI and ``oloproof.flows``.
"""

from oloproof._exceptions import (
    ConfigError,
    DatasetError,
    OloproofError,
    StoreError,
    SystemContractError,
)
from oloproof._system._agent import tool
from oloproof._system._decorators import agent_system, rag_system, system
from oloproof._system._passage import Passage, Retrieval
from oloproof._system._toolbox import Tools


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("oloproof")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


__version__ = _installed_version()

__all__ = [
    "ConfigError",
    "DatasetError",
    "OloproofError",
    "Passage",
    "Retrieval",
    "StoreError",
    "SystemContractError",
    "Tools",
    "agent_system",
    "rag_system",
    "system",
    "tool",
]
