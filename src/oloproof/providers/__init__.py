"""The providers that judges run on: LLMs, and content-safety services.

``providers:`` in ``oloproof.yaml`` names each provider (`ProviderConfig`); a
`ProviderPool` checks them before a run and sends each `JudgeRequest` through
the provider's SDK, its rate and concurrency limits, the structured-output
ladder and the `RetryPolicy`, returning a `JudgeCall`. A call's `TimeBudget`
is charged while its requests are out, not while they wait for the provider's
limits. A provider that cannot be connected to stops being called
(`ProviderHealth`); `error_kind` names the kind of a call's error from its message.
"""

from oloproof.providers._breaker import UNREACHABLE_AFTER, ProviderHealth
from oloproof.providers._budget import BudgetSpent, TimeBudget, current_budget
from oloproof.providers._calls import JudgeCall, JudgeRequest
from oloproof.providers._config import Prices, ProviderConfig, parse_providers, providers_from_environment
from oloproof.providers._errors import error_kind
from oloproof.providers._pool import ProviderPool
from oloproof.providers._retry import RetryPolicy

__all__ = [
    "UNREACHABLE_AFTER",
    "BudgetSpent",
    "JudgeCall",
    "JudgeRequest",
    "Prices",
    "ProviderConfig",
    "ProviderHealth",
    "ProviderPool",
    "RetryPolicy",
    "TimeBudget",
    "current_budget",
    "error_kind",
    "parse_providers",
    "providers_from_environment",
]
