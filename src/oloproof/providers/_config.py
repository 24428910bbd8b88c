"""One entry of ``providers:`` in ``oloproof.yaml``.

A provider entry holds the *name* of the environment variable that carries its
key, never the key: the key is read from the environment when the first call
needs a client, so it cannot reach a record, a parameter or a log line.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from oloproof._exceptions import ProviderConfigError

__all__ = ["DEFAULT_URLS", "Prices", "ProviderConfig", "parse_providers", "providers_from_environment"]

DEFAULT_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
"""The endpoint each SDK talks to when ``base_url`` is not given."""

_OFFICIAL_HOSTS = {"api.openai.com", "api.anthropic.com"}
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _not_bool(value: Any) -> Any:
    # YAML's `true` would otherwise pass as 1.
    if isinstance(value, bool):
        raise ValueError("expected a number, not a boolean")  # noqa: TRY004 - pydantic wants ValueError
    return value


class Prices(BaseModel):
    """``prices``: what one million tokens cost, to put a price on each call."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    input_per_mtok: float = Field(ge=0, allow_inf_nan=False, strict=True)
    """USD per million input (prompt) tokens."""

    output_per_mtok: float = Field(ge=0, allow_inf_nan=False, strict=True)
    """USD per million output (completion) tokens."""

    @field_validator("input_per_mtok", "output_per_mtok", mode="before")
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        return _not_bool(value)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The price in USD of ``input_tokens`` in and ``output_tokens`` out."""
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


class ProviderConfig(BaseModel):
    """One provider that judges may call, keyed by its name under ``providers:``.

    ``type: openai`` is also any OpenAI-compatible server (vLLM, Ollama,
    llama.cpp, LM Studio), chosen by ``base_url``. ``type: content_safety`` is a
    content-safety service (its REST API, not a model), which ``groundedness_pro``
    calls.
    """

    # Inputs stay out of validation errors: a key pasted where a variable name
    # belongs must not be echoed back.
    model_config = ConfigDict(
        frozen=True, extra="forbid", use_attribute_docstrings=True, hide_input_in_errors=True
    )

    type: Literal["openai", "azure_openai", "anthropic", "content_safety"]
    """``openai`` (or any OpenAI-compatible server), ``azure_openai``, ``anthropic`` or
    ``content_safety``."""

    base_url: str | None = None
    """The API root for ``openai`` / ``anthropic``, e.g. ``http://localhost:8000/v1``; the
    official endpoint when absent."""

    endpoint: str | None = None
    """``azure_openai`` and ``content_safety`` only (required there): the resource URL,
    e.g. ``https://my-resource.openai.azure.com``."""

    api_version: str | None = None
    """``azure_openai`` only (required there): the API version, e.g. ``2024-10-21``."""

    api_key_env: str | None = None
    """The NAME of the environment variable holding the API key. Required for the official
    OpenAI endpoint, for Anthropic and for ``content_safety``; an OpenAI-compatible server
    with a ``base_url`` may go without one."""

    token_env: str | None = None
    """``azure_openai`` only: the name of a variable holding a Microsoft Entra ID bearer
    token, instead of ``api_key_env``."""

    max_concurrency: int = Field(strict=True, default=8, ge=1)
    """The most requests in flight at once; halved on each 429, regained slowly."""

    rpm: int | None = Field(strict=True, default=None, ge=1)
    """Requests per rate window (per minute by default); no limit when absent."""

    tpm: int | None = Field(strict=True, default=None, ge=1)
    """Tokens per rate window (per minute by default), estimated before sending: prompt
    characters / 4 + ``max_tokens``. No limit when absent."""

    timeout_s: float = Field(default=60.0, gt=0, allow_inf_nan=False, strict=True)
    """Seconds one HTTP request may take before it counts as a timeout."""

    max_retries: int = Field(strict=True, default=4, ge=0, le=20)
    """Retries of one request after a transient failure (429, 5xx, timeout, connection)."""

    prices: Prices | None = None
    """Prices per million tokens; each call's ``cost_usd`` is ``None`` without them."""

    rate_window_s: float = Field(default=60.0, gt=0, allow_inf_nan=False, strict=True)
    """The length of the window ``rpm`` and ``tpm`` count over; for tests and unusual
    providers."""

    deployments: tuple[str, ...] = ()
    """Model deployment names that select this provider in ``testing_criteria``
    (``initialization_parameters.deployment_name``); each is also the model called."""

    @field_validator(
        "max_concurrency", "rpm", "tpm", "timeout_s", "max_retries", "rate_window_s", mode="before"
    )
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        return _not_bool(value)

    @field_validator("api_version", mode="before")
    @classmethod
    def _version_is_text(cls, value: Any) -> Any:
        # YAML reads 2024-10-21 as a date.
        if isinstance(value, datetime.date):
            return value.isoformat()
        return value

    @field_validator("base_url", "endpoint")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an http:// or https:// URL with a host")
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            raise ValueError("expected an http:// or https:// URL with a valid port") from None
        return value

    @field_validator("api_key_env", "token_env")
    @classmethod
    def _variable(cls, value: str | None) -> str | None:
        if value is not None and not _VARIABLE.match(value):
            raise ValueError(
                "expected the NAME of an environment variable (letters, digits, _), not a key"
            )
        return value

    @model_validator(mode="after")
    def _combination(self) -> ProviderConfig:
        if self.type == "azure_openai":
            if self.base_url is not None:
                raise ValueError("azure_openai takes 'endpoint', not 'base_url'")
            if self.endpoint is None or self.api_version is None:
                raise ValueError("azure_openai needs 'endpoint' and 'api_version'")
            if (self.api_key_env is None) == (self.token_env is None):
                raise ValueError("azure_openai needs exactly one of 'api_key_env' and 'token_env'")
            return self
        if self.type == "content_safety":
            for name in ("base_url", "api_version", "token_env"):
                if getattr(self, name) is not None:
                    raise ValueError(f"content_safety takes 'endpoint' and 'api_key_env', not '{name}'")
            if self.endpoint is None or self.api_key_env is None:
                raise ValueError("content_safety needs 'endpoint' and 'api_key_env'")
            return self
        for name in ("endpoint", "api_version", "token_env"):
            if getattr(self, name) is not None:
                raise ValueError(f"'{name}' is for azure_openai only")
        if self.api_key_env is None and self.needs_key:
            where = "anthropic" if self.type == "anthropic" else "the official OpenAI endpoint"
            raise ValueError(f"{where} needs 'api_key_env'")
        return self

    @property
    def url(self) -> str:
        """The endpoint requests go to: ``base_url``, ``endpoint`` or the official one."""
        if self.type in ("azure_openai", "content_safety"):
            return str(self.endpoint)
        return self.base_url or DEFAULT_URLS[self.type]

    @property
    def needs_key(self) -> bool:
        """Whether a key is required: always but for an OpenAI-compatible local server."""
        if self.type != "openai":
            return True
        return urlsplit(self.url).hostname in _OFFICIAL_HOSTS

    @property
    def credential_env(self) -> str | None:
        """The name of the variable holding the credential (key or token), if any."""
        return self.api_key_env or self.token_env


def parse_providers(entries: Any) -> dict[str, ProviderConfig]:
    """Validate the ``providers:`` mapping of ``oloproof.yaml``.

    Args:
        entries: The mapping of provider names to entries (``None`` is no providers).

    Returns:
        Each provider's configuration, by name.

    Raises:
        ProviderConfigError: An entry is not a mapping, names an unknown type or holds
            an invalid value; ``field`` says where (``providers.<name>.<field>``). No
            value but the type is repeated, so a key pasted in the wrong place stays out.
    """
    if entries is None:
        return {}
    if not isinstance(entries, Mapping):
        raise ProviderConfigError(
            "expected a mapping of provider names to entries", field="providers"
        )
    known = get_args(ProviderConfig.model_fields["type"].annotation)
    parsed: dict[str, ProviderConfig] = {}
    for name, entry in entries.items():
        if not isinstance(name, str) or not name:
            raise ProviderConfigError("a provider name must be non-empty text", field="providers")
        where = f"providers.{name}"
        if not isinstance(entry, Mapping):
            raise ProviderConfigError("expected a mapping with a 'type'", field=where)
        if "type" not in entry:
            raise ProviderConfigError("required field is missing", field=f"{where}.type")
        if entry["type"] not in known:
            raise ProviderConfigError(
                f"unknown provider type {entry['type']!r} (known: {', '.join(known)})",
                field=f"{where}.type",
            )
        try:
            parsed[name] = ProviderConfig.model_validate(dict(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            location = ".".join(str(part) for part in first["loc"])
            raise ProviderConfigError(
                _describe(first), field=f"{where}.{location}" if location else where
            ) from None
    return parsed


def _describe(error: Any) -> str:
    kind = error.get("type", "")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    return str(error.get("msg", "invalid value")).removeprefix("Value error, ")


def providers_from_environment(environ: Mapping[str, str]) -> dict[str, ProviderConfig]:
    """The providers the SDKs' own variables describe, for runs without ``oloproof.yaml``.

    ``AZURE_OPENAI_ENDPOINT`` (with ``AZURE_OPENAI_API_KEY`` and
    ``OPENAI_API_VERSION``) gives ``azure_openai``; ``OPENAI_BASE_URL`` or
    ``OPENAI_API_KEY`` gives ``openai``; ``ANTHROPIC_API_KEY`` gives ``anthropic``.
    Only variable *names* are kept for keys: the values are read when a call needs them.

    Raises:
        ProviderConfigError: A variable holds an invalid value (a URL without a host).
    """
    entries: dict[str, dict[str, str]] = {}
    if environ.get("AZURE_OPENAI_ENDPOINT"):
        entries["azure_openai"] = {
            "type": "azure_openai", "endpoint": environ["AZURE_OPENAI_ENDPOINT"],
            "api_version": environ.get("OPENAI_API_VERSION", "2024-10-21"), "api_key_env": "AZURE_OPENAI_API_KEY",
        }  # fmt: skip
    if environ.get("OPENAI_BASE_URL") or environ.get("OPENAI_API_KEY"):
        entry: dict[str, str] = {"type": "openai"}
        if environ.get("OPENAI_BASE_URL"):
            entry["base_url"] = environ["OPENAI_BASE_URL"]
        if environ.get("OPENAI_API_KEY"):
            entry["api_key_env"] = "OPENAI_API_KEY"
        entries["openai"] = entry
    if environ.get("ANTHROPIC_API_KEY"):
        entries["anthropic"] = {"type": "anthropic", "api_key_env": "ANTHROPIC_API_KEY"}
    return parse_providers(entries)
