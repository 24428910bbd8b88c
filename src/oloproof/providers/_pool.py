"""The providers of a run, behind one object judges call.

Clients and limiters are made on the running event loop at a provider's first
call, never earlier: an SDK client and an ``asyncio`` limiter belong to the loop
they were first used on, and a run's loop does not exist yet when the pool is
built.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from pydantic import JsonValue

from oloproof._exceptions import ProviderConfigError
from oloproof.providers._breaker import UNREACHABLE_AFTER, Breaker, ProviderHealth
from oloproof.providers._budget import BudgetSpent, TimeBudget, current_budget
from oloproof.providers._calls import JudgeCall, JudgeRequest
from oloproof.providers._config import ProviderConfig
from oloproof.providers._limits import ProviderLimits, estimate_tokens
from oloproof.providers._preflight import public_url, reach
from oloproof.providers._retry import RetryPolicy, rate_limited
from oloproof.providers._structured import Adapter, Message, ModeCache, Reply, Trace, ask

__all__ = ["ProviderPool"]

_REDACTED = "[redacted]"


@dataclass
class _Live:
    """One provider's client and limits, on the loop that made them."""

    loop: asyncio.AbstractEventLoop
    adapter: Adapter
    limits: ProviderLimits


class ProviderPool:
    """Every configured provider, by name: checks before a run, judged calls during it.

    Safe for many concurrent `judge` calls on one event loop. Keys are read from
    ``environ`` (only the variables the configurations name) and appear in no
    message, repr or result.

    Args:
        configs: The ``providers:`` entries, by name.
        environ: Where the key variables are looked up (usually ``os.environ``).
        retry: The backoff of retries; the number of retries is each provider's
            ``max_retries``.
        recover_after: Successes in a row that earn back one concurrency slot
            after a 429 halved the limit.
        unreachable_after: Attempts in a row, retries included, that could not
            connect to a provider before it is not called again this run.
    """

    def __init__(
        self,
        configs: Mapping[str, ProviderConfig],
        environ: Mapping[str, str],
        *,
        retry: RetryPolicy | None = None,
        recover_after: int = 10,
        unreachable_after: int = UNREACHABLE_AFTER,
    ) -> None:
        for name, config in configs.items():
            if not isinstance(config, ProviderConfig):
                raise TypeError(
                    f"provider {name!r}: expected a ProviderConfig, not {type(config).__name__}"
                )
        self._configs = dict(configs)
        wanted = {c.credential_env for c in self._configs.values() if c.credential_env is not None}
        self._credentials = {name: environ[name] for name in wanted if name in environ}
        self._retry = retry if retry is not None else RetryPolicy()
        self._recover_after = recover_after
        self._live: dict[str, _Live] = {}
        self._modes = ModeCache()
        # Per run, not per loop: a provider found gone stays gone for the whole run.
        self._breakers = {name: Breaker(unreachable_after) for name in self._configs}

    def __repr__(self) -> str:
        return f"ProviderPool(providers={sorted(self._configs)!r})"

    def __reduce__(self) -> NoReturn:
        # Pickling would carry the keys along (into a Prefect result, say).
        raise TypeError("a ProviderPool cannot be pickled: build one where it is used")

    @property
    def names(self) -> list[str]:
        """The configured provider names, sorted."""
        return sorted(self._configs)

    def config(self, name: str) -> ProviderConfig:
        """The configuration of provider ``name``.

        Raises:
            ProviderConfigError: No provider has that name.
        """
        config = self._configs.get(name)
        if config is None:
            known = ", ".join(sorted(self._configs)) or "none"
            raise ProviderConfigError(f"no provider named {name!r} (configured: {known})")
        return config

    def check(self, names: Iterable[str]) -> None:
        """Check, before a run, that ``names`` exist and their key variables are set.

        No client is made and nothing is sent.

        Raises:
            ProviderConfigError: A name is unknown, or its key (or token) variable is
                unset or empty; the message names the variable, never a value.
        """
        for name in names:
            config = self.config(name)
            variable = config.credential_env
            if variable is not None and not self._credentials.get(variable, "").strip():
                what = "token" if config.token_env else "API key"
                field = "token_env" if config.token_env else "api_key_env"
                raise ProviderConfigError(
                    f"provider {name!r} reads its {what} from the environment variable "
                    f"{variable}, which is not set or empty",
                    field=f"providers.{name}.{field}",
                )

    def health(self, name: str) -> ProviderHealth:
        """What provider ``name``'s circuit breaker has counted so far this run.

        Raises:
            ProviderConfigError: No provider has that name.
        """
        self.config(name)
        return self._breakers[name].health()

    def preflight(self, names: Iterable[str]) -> None:
        """Check that each endpoint of ``names`` accepts a TCP connection.

        Raises:
            ProviderConfigError: A name is unknown, or its endpoint cannot be reached.
        """
        reached: set[str] = set()
        for name in names:
            url = self.config(name).url
            if url in reached:
                continue
            reason = reach(url)
            if reason is not None:
                option = "base_url" if self.config(name).type in ("openai", "anthropic") else "endpoint"
                raise ProviderConfigError(
                    f"cannot reach {public_url(url)} (provider {name!r}): {reason}",
                    field=f"providers.{name}.{option}",
                )
            reached.add(url)

    async def judge(self, provider: str, request: JudgeRequest) -> JudgeCall:
        """Ask ``provider`` for ``request``'s reply object.

        Failures of the call itself (HTTP errors after retries, timeouts,
        unusable or truncated replies) come back as ``JudgeCall(error=...)``;
        only cancellation propagates. A provider whose circuit breaker is open
        (see `Breaker`) is not called: the call fails at once with its reason.

        Raises:
            ProviderConfigError: ``provider`` is unknown or its key is not set
                (what `check` reports before a run).
        """
        budget = current_budget()
        if budget is None:
            return await self._judge(provider, request, None)
        # The call's deadline does not run here: the budget is charged for each
        # request while it is out, never for the waits for slots and rate buckets.
        with budget.outside():
            return await self._judge(provider, request, budget)

    async def _judge(self, provider: str, request: JudgeRequest, budget: TimeBudget | None) -> JudgeCall:
        started = time.perf_counter()
        config = self.config(provider)
        breaker = self._breakers[provider]
        trace = Trace()
        if breaker.reason is not None:
            return self._call(provider, config, request, trace, None, breaker.reason, started)
        if budget is not None and budget.remaining() <= 0:
            return self._call(provider, config, request, trace, None, str(BudgetSpent(budget.seconds)), started)
        live = self._live_provider(provider, config)

        async def send(mode: str, extra: list[Message]) -> Reply:
            chars = (
                len(request.system)
                + len(request.user)
                + sum(len(str(m.get("content", ""))) for m in extra)
            )
            tokens = estimate_tokens(chars, request.max_tokens)
            sent = 0

            async def attempt() -> Reply:
                nonlocal sent
                breaker.check()  # before waiting for a slot and the rate buckets
                if budget is not None and budget.remaining() <= 0:
                    raise BudgetSpent(budget.seconds)  # no wait in the queue for a request never sent
                async with live.limits.request(tokens) as slot:
                    breaker.check()  # it may have opened during the wait
                    breaker.sending()
                    if sent:  # a retry counts once it is sent, not when the breaker stopped it
                        trace.count_retry()
                    sent += 1
                    trace.count_request()
                    sending = live.adapter.send(request, mode, extra)
                    try:
                        reply = await (budget.charged(sending) if budget is not None else sending)
                    except BudgetSpent:
                        raise  # cut off by the judgment's own time limit: not the provider's failure, so the breaker is not told
                    except Exception as exc:
                        slot.rate_limited = rate_limited(exc)
                        breaker.attempted(exc)
                        raise
                    breaker.attempted(None)
                    return reply

            return await self._retry.run(attempt, max_retries=config.max_retries)

        try:
            data, error = await ask(
                live.adapter, request, send, self._modes, (provider, request.model), trace
            )
        except BudgetSpent as spent:
            data, error = None, str(spent)
        except Exception as exc:  # noqa: BLE001 - an unforeseen reply fails the call, not the run
            data, error = (
                None,
                f"unexpected {type(exc).__name__}: {' '.join(str(exc).split())[:300]}",
            )
        return self._call(provider, config, request, trace, data, error, started)

    def _call(
        self,
        provider: str,
        config: ProviderConfig,
        request: JudgeRequest,
        trace: Trace,
        data: dict[str, JsonValue] | None,
        error: str | None,
        started: float,
    ) -> JudgeCall:
        """The `JudgeCall` of what ``trace`` saw, redacted."""
        cost = (
            config.prices.cost(trace.input_tokens, trace.output_tokens) if config.prices else None
        )
        return JudgeCall(
            data=self._redact_value(data),
            error=self._redact(error),
            raw=self._redact(trace.raw),
            provider=provider,
            provider_type=config.type,
            model=request.model,
            mode=trace.mode,
            input_tokens=trace.input_tokens,
            output_tokens=trace.output_tokens,
            latency_ms=(time.perf_counter() - started) * 1000,
            retries=trace.retries,
            finish_reason=trace.finish_reason,
            cost_usd=cost,
            requests=trace.requests,
        )

    async def aclose(self) -> None:
        """Close every client made on this loop; clients of other loops are dropped."""
        loop = asyncio.get_running_loop()
        live, self._live = self._live, {}
        for provider in live.values():
            if provider.loop is loop:
                await provider.adapter.aclose()

    def _live_provider(self, name: str, config: ProviderConfig) -> _Live:
        """The provider's client and limits on the running loop, made on first use."""
        loop = asyncio.get_running_loop()
        live = self._live.get(name)
        if live is not None and live.loop is loop:
            return live
        self.check([name])
        variable = config.credential_env
        # A key read from a .env file may end in a newline no header can carry.
        credential = self._credentials[variable].strip() if variable else None
        # The SDKs are imported at first use: importing them takes a second or more.
        adapter: Adapter
        if config.type == "anthropic":
            from oloproof.providers._anthropic import AnthropicAdapter

            adapter = AnthropicAdapter(config, credential)
        elif config.type == "content_safety":
            from oloproof.providers._content_safety import ContentSafetyAdapter

            adapter = ContentSafetyAdapter(config, credential)
        else:
            from oloproof.providers._openai import OpenAIAdapter

            adapter = OpenAIAdapter(config, credential)
        live = _Live(loop, adapter, ProviderLimits(config, recover_after=self._recover_after))
        self._live[name] = live
        return live

    def _redact_value(self, value: Any) -> Any:
        """``value`` (a parsed reply) with every credential blanked out of its strings:
        a server echoing the key into a reason must not put it in the store."""
        if isinstance(value, str):
            return self._redact(value)
        if isinstance(value, dict):
            return {key: self._redact_value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._redact_value(item) for item in value]
        return value

    def _redact(self, text: str | None) -> str | None:
        """``text`` with every configured credential blanked out."""
        if text is None:
            return None
        for secret in self._credentials.values():
            if len(secret) >= 4:
                text = text.replace(secret, _REDACTED)
        return text
