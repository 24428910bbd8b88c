"""The LLM providers that judges run on.

``providers:`` in ``oloproof.yaml`` names each provider (`ProviderConfig`); a
`ProviderPool` checks them before a run and sends each `JudgeRequest` through
the provider's SDK, its rate and concurrency limits, the structured-output
ladder and the `RetryPolicy`, returning a `JudgeCall`.
"""

from oloproof.providers._calls import JudgeCall, JudgeRequest
from oloproof.providers._config import Prices, ProviderConfig, parse_providers, providers_from_environment
from oloproof.providers._pool import ProviderPool
from oloproof.providers._retry import RetryPolicy

__all__ = [
    "JudgeCall",
    "JudgeRequest",
    "Prices",
    "ProviderConfig",
    "ProviderPool",
    "RetryPolicy",
    "parse_providers",
    "providers_from_environment",
]
