"""`ProviderConfig`: what a ``providers:`` entry may say, and what it may not."""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest
from providers_wire import KEY
from pydantic import ValidationError

from oloproof._exceptions import ConfigError, ProviderConfigError
from oloproof.providers import Prices, ProviderConfig, parse_providers


def config(**options: Any) -> ProviderConfig:
    return ProviderConfig.model_validate(options)


def message(options: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as caught:
        ProviderConfig.model_validate(options)
    return str(caught.value)


def test_defaults_of_an_openai_compatible_server() -> None:
    local = config(type="openai", base_url="http://localhost:8000/v1")
    assert local.api_key_env is None  # a local server may go without a key
    assert (local.max_concurrency, local.rpm, local.tpm) == (8, None, None)
    assert (local.timeout_s, local.max_retries, local.rate_window_s) == (60.0, 4, 60.0)
    assert local.url == "http://localhost:8000/v1"
    assert local.needs_key is False


def test_official_endpoints_need_a_key_variable() -> None:
    assert "needs 'api_key_env'" in message({"type": "openai"})
    assert "needs 'api_key_env'" in message(
        {"type": "openai", "base_url": "https://api.openai.com/v1"}
    )
    assert "needs 'api_key_env'" in message({"type": "anthropic"})
    official = config(type="openai", api_key_env="OPENAI_API_KEY")
    assert official.url == "https://api.openai.com/v1"
    assert (
        config(type="anthropic", api_key_env="ANTHROPIC_API_KEY").url == "https://api.anthropic.com"
    )


def test_azure_needs_endpoint_version_and_one_credential() -> None:
    base = {
        "type": "azure_openai",
        "endpoint": "https://r.openai.azure.com",
        "api_version": "2024-10-21",
    }
    assert config(**base, api_key_env="AZ_KEY").url == "https://r.openai.azure.com"
    assert config(**base, token_env="AZ_TOKEN").credential_env == "AZ_TOKEN"
    assert "exactly one" in message(base)
    assert "exactly one" in message({**base, "api_key_env": "A", "token_env": "B"})
    assert "needs 'endpoint' and 'api_version'" in message(
        {**base, "endpoint": None, "api_key_env": "A"}
    )
    assert "needs 'endpoint' and 'api_version'" in message(
        {**base, "api_version": None, "api_key_env": "A"}
    )
    assert "not 'base_url'" in message({**base, "api_key_env": "A", "base_url": "https://x"})


def test_azure_settings_belong_to_azure_only() -> None:
    for field, value in (
        ("endpoint", "https://x.y"),
        ("api_version", "2024-10-21"),
        ("token_env", "T"),
    ):
        assert "for azure_openai only" in message(
            {"type": "openai", "api_key_env": "K", field: value}
        )


def test_a_yaml_date_is_an_api_version() -> None:
    azure = config(
        type="azure_openai",
        endpoint="https://r.openai.azure.com",
        api_version=datetime.date(2024, 10, 21),
        api_key_env="K",
    )
    assert azure.api_version == "2024-10-21"


def test_unknown_types_and_fields_are_errors() -> None:
    assert "type" in message({"type": "bedrock", "api_key_env": "K"})
    assert "extra" in message({"type": "openai", "api_key_env": "K", "api_key": "x"}).lower()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_concurrency", True),
        ("max_concurrency", 0),
        ("rpm", True),
        ("rpm", 0),
        ("tpm", False),
        ("timeout_s", True),
        ("timeout_s", 0),
        ("timeout_s", math.inf),
        ("timeout_s", math.nan),
        ("max_retries", True),
        ("max_retries", -1),
        ("max_retries", 21),
        ("rate_window_s", 0),
        ("rate_window_s", True),
    ],
)
def test_numbers_are_checked_and_booleans_are_not_numbers(field: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        config(type="openai", api_key_env="K", **{field: value})


def test_prices() -> None:
    priced = config(
        type="openai", api_key_env="K", prices={"input_per_mtok": 2.5, "output_per_mtok": 10}
    )
    assert priced.prices == Prices(input_per_mtok=2.5, output_per_mtok=10.0)
    assert priced.prices.cost(1_000_000, 100_000) == pytest.approx(3.5)
    for bad in (
        {"input_per_mtok": True, "output_per_mtok": 1},
        {"input_per_mtok": -1, "output_per_mtok": 1},
    ):
        with pytest.raises(ValidationError):
            config(type="openai", api_key_env="K", prices=bad)


def test_urls_must_be_http_with_a_host() -> None:
    for url in ("localhost:8000", "ftp://host/x", "http://", "http://host:port/v1"):
        assert "URL" in message({"type": "openai", "base_url": url})


def test_a_key_pasted_as_a_variable_name_is_refused_and_not_echoed() -> None:
    text = message({"type": "openai", "api_key_env": KEY})
    assert "NAME of an environment variable" in text
    assert KEY not in text


def test_frozen() -> None:
    entry = config(type="openai", api_key_env="K")
    with pytest.raises(ValidationError):
        entry.max_concurrency = 2  # type: ignore[misc]


def test_parse_providers_reports_where_in_one_line() -> None:
    def error(entries: Any) -> str:
        with pytest.raises(ProviderConfigError) as caught:
            parse_providers(entries)
        assert isinstance(caught.value, ConfigError)
        return str(caught.value)

    assert parse_providers(None) == {}
    parsed = parse_providers({"judge": {"type": "openai", "api_key_env": "K"}})
    assert parsed == {"judge": ProviderConfig(type="openai", api_key_env="K")}
    assert error({"x": {"type": "bedrock"}}) == (
        "field 'providers.x.type': unknown provider type 'bedrock' (known: openai, azure_openai, anthropic, content_safety)"
    )
    assert (
        error({"x": {"api_key_env": "K"}}) == "field 'providers.x.type': required field is missing"
    )
    assert error({"x": "openai"}) == "field 'providers.x': expected a mapping with a 'type'"
    assert error(["x"]) == "field 'providers': expected a mapping of provider names to entries"
    assert error({"x": {"type": "openai", "api_key_env": "K", "rpm": True}}) == (
        "field 'providers.x.rpm': expected a number, not a boolean"
    )
    assert error({"x": {"type": "openai", "api_key_env": "K", "api_key": KEY}}) == (
        "field 'providers.x.api_key': unknown field"
    )
    assert KEY not in error({"x": {"type": "openai", "api_key_env": KEY}})
