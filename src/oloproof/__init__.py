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
from oloproof._system._decorators import rag_system, system
from oloproof._system._passage import Passage, Retrieval

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "DatasetError",
    "OloproofError",
    "Passage",
    "Retrieval",
    "StoreError",
    "SystemContractError",
    "rag_system",
    "system",
]
