"""Every error Oloproof raises on purpose.

The hierarchy::

    OloproofError
    ├── ConfigError(OloproofError, ValueError)      oloproof.yaml, --set, compare.yaml
    │   ├── EvaluatorConfigError                    an evaluator entry or option
    │   └── ProviderConfigError                     an LLM provider: unknown type, missing
    │                                               key variable, unreachable endpoint
    ├── DatasetError(OloproofError, ValueError)     a cases file: JSON, ids, field types
    │   ├── LabelError                              a human labels file: ids, scale, duplicates
    │   └── TranscriptError                         an agent's transcript: items, tool call ids,
    │                                               arguments
    ├── SystemContractError(OloproofError, TypeError)
    │                                               a user system broke the API contract
    │                                               (not a case that raised: that is *missing*)
    ├── StatsError(OloproofError, ValueError)       a statistic asked of impossible input
    ├── StoreError(OloproofError, OSError)          the results store cannot be read or written
    │   └── NotFoundError(StoreError, LookupError)  an unknown run, diagnosis or comparison id
    ├── UsageError(OloproofError, ValueError)       a command asked for something it cannot do
    ├── PrefectApiError(OloproofError, ConnectionError)
    │                                               the Prefect API does not answer, or its
    │                                               temporary server did not start in time
    └── RunStoppedError(OloproofError, RuntimeError) a run was stopped (an error elsewhere, a signal)

Every error can carry ``path``, ``line`` and ``field``; ``str(error)`` renders them
in one line, which is all the CLI prints.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DatasetError",
    "EvaluatorConfigError",
    "LabelError",
    "NotFoundError",
    "OloproofError",
    "PrefectApiError",
    "ProviderConfigError",
    "RunStoppedError",
    "StatsError",
    "StoreError",
    "SystemContractError",
    "TranscriptError",
    "UsageError",
]


class OloproofError(Exception):
    """Base class of every error Oloproof raises on purpose.

    Args:
        message: What is wrong and what is expected instead.
        path: The file or URL the error is about, if any.
        line: The 1-based line number within ``path``, if any.
        field: The dotted field name within that line or document, if any.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.field = field

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
        if self.field is not None:
            where = f"{where}: field '{self.field}'" if where else f"field '{self.field}'"
        return f"{where}: {self.message}" if where else self.message


class ConfigError(OloproofError, ValueError):
    """A configuration file or override is invalid."""


class EvaluatorConfigError(ConfigError):
    """An evaluator entry names an unknown type or carries an invalid option."""


class ProviderConfigError(ConfigError):
    """An LLM provider is misconfigured: unknown type, unset key variable, unreachable endpoint."""


class DatasetError(OloproofError, ValueError):
    """A cases file is malformed: invalid JSON, missing or duplicate ids, wrong types."""


class LabelError(DatasetError):
    """A human labels file is malformed or does not fit its run and sample."""


class TranscriptError(DatasetError):
    """An agent's transcript is malformed: an unknown item, a result for no call, bad arguments.

    ``field`` is the path inside the transcript's JSON value, e.g.
    ``[2].tool_calls[0].function.arguments``.
    """


class SystemContractError(OloproofError, TypeError):
    """A user system broke the API contract (wrong return type, too many candidates)."""


class StatsError(OloproofError, ValueError):
    """A statistic was asked of input it cannot be computed on."""


class StoreError(OloproofError, OSError):
    """The results store cannot be read or written."""


class NotFoundError(StoreError, LookupError):
    """An id names no run, diagnosis or comparison in the store."""


class UsageError(OloproofError, ValueError):
    """A command was asked for something it cannot do (e.g. compare a run with itself)."""


class PrefectApiError(OloproofError, ConnectionError):
    """The Prefect API does not answer, or its temporary server did not start in time."""


class RunStoppedError(OloproofError, RuntimeError):
    """A run was stopped before this work could finish: another batch failed, or a signal came."""
