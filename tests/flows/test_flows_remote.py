"""Prefect result storage on an object store, and the credential rules it relies on.

Covers ``remote_result_storage`` (Prefect's local storage when credentials are
given; otherwise a block over ``<store>/prefect`` named after the store and its
public options, whose saving is replaced by a stand-in so nothing reaches a
Prefect server) and the rules it and the run flows' recorded parameters apply:
``public_options`` (credential-like names dropped at any depth, except
``endpoint_url``), ``has_secrets`` and ``public_settings`` (settings that set a
credential under ``storage_options`` left out).
"""

from __future__ import annotations

import pytest
from prefect.filesystems import RemoteFileSystem
from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings

from oloproof._secrets import has_secrets, public_options, public_settings
from oloproof.flows._remote import remote_result_storage
from oloproof.store import ResultsStore

URL = "memory://oloproof-remote-test/results"


# -- public_options and has_secrets ------------------------------------------------------------


def test_credential_names_are_dropped():
    options = {"key": "AKIA", "secret": "s", "token": "t", "password": "p", "session_token": "st",
               "aws_access_key_id": "a", "credentials": "c", "anon": False, "region_name": "eu-west-1"}
    assert public_options(options) == {"anon": False, "region_name": "eu-west-1"}


def test_credential_names_are_matched_whatever_their_case():
    assert public_options({"AWS_SECRET_ACCESS_KEY": "s", "Profile": "dev"}) == {"Profile": "dev"}


def test_endpoint_url_is_kept():
    assert public_options({"endpoint_url": "http://127.0.0.1:9000"}) == {"endpoint_url": "http://127.0.0.1:9000"}


def test_nested_options_are_cleaned_at_every_depth():
    options = {"client_kwargs": {"endpoint_url": "http://minio:9000", "aws_secret_access_key": "s",
                                 "config": {"session": "x", "retries": 3}}}
    assert public_options(options) == {"client_kwargs": {"endpoint_url": "http://minio:9000",
                                                         "config": {"retries": 3}}}


def test_the_options_given_are_not_changed():
    options = {"key": "AKIA", "client_kwargs": {"token": "t"}}
    public_options(options)
    assert options == {"key": "AKIA", "client_kwargs": {"token": "t"}}


@pytest.mark.parametrize("value", [None, "text", 3, ["key", "secret"]])
def test_values_that_are_not_mappings_are_returned_as_they_are(value):
    assert public_options(value) == value


@pytest.mark.parametrize(
    ("options", "secret"),
    [
        ({}, False),
        ({"endpoint_url": "http://127.0.0.1:9000", "anon": True}, False),
        ({"key": "AKIA"}, True),
        ({"client_kwargs": {"region_name": "eu", "aws_session_token": "t"}}, True),
    ],
    ids=["empty", "public", "top-level-key", "nested-token"],
)
def test_has_secrets(options, secret):
    assert has_secrets(options) is secret


# -- public_settings ---------------------------------------------------------------------------


def test_settings_of_a_storage_credential_are_left_out():
    settings = {
        "system.rag.top_k": 3,
        "storage_options.key": "AKIA",
        "storage_options.secret": "s3cr3t",
        "storage_options.endpoint_url": "http://127.0.0.1:9000",
        "storage_options.client_kwargs.aws_session_token": "t",
        "storage_options.client_kwargs.region_name": "eu-west-1",
        "results": "s3://bucket/results",
    }
    assert public_settings(settings) == {
        "system.rag.top_k": 3,
        "storage_options.endpoint_url": "http://127.0.0.1:9000",
        "storage_options.client_kwargs.region_name": "eu-west-1",
        "results": "s3://bucket/results",
    }


def test_a_whole_storage_options_mapping_keeps_only_its_public_options():
    settings = {"storage_options": {"key": "AKIA", "secret": "s", "endpoint_url": "http://minio:9000"}}
    assert public_settings(settings) == {"storage_options": {"endpoint_url": "http://minio:9000"}}


def test_credential_like_names_outside_storage_options_are_kept():
    settings = {"system.rag.token_budget": 120, "evaluators": [{"type": "contains", "key": "x"}]}
    assert public_settings(settings) == settings


def test_a_credential_looking_value_is_not_a_credential_name():
    settings = {"storage_options.profile": "secret-profile"}
    assert public_settings(settings) == settings


def test_no_settings_give_none():
    assert public_settings({}) == {}


# -- remote_result_storage -------------------------------------------------------------------------


@pytest.fixture
def saved(monkeypatch):
    """Blocks ``remote_result_storage`` saves, as ``(name, basepath, settings, overwrite)``."""
    calls = []

    def save(self, name, overwrite=False):
        calls.append((name, self.basepath, dict(self.settings), overwrite))

    monkeypatch.setattr(RemoteFileSystem, "save", save)
    return calls


def test_credentials_keep_prefect_results_local_and_save_no_block(tmp_path, saved):
    with temporary_settings(updates={PREFECT_LOCAL_STORAGE_PATH: str(tmp_path / "local")}):
        storage = remote_result_storage(ResultsStore(URL), {"endpoint_url": "http://x", "secret": "s"})
    assert storage == tmp_path / "local"
    assert saved == []


def test_without_credentials_a_block_over_the_prefect_folder_is_saved(saved):
    block = remote_result_storage(ResultsStore(URL), {"endpoint_url": "http://127.0.0.1:9000"})
    assert isinstance(block, RemoteFileSystem)
    assert block.basepath == URL + "/prefect"
    assert block.settings == {"endpoint_url": "http://127.0.0.1:9000"}
    [(name, basepath, settings, overwrite)] = saved
    assert (basepath, settings, overwrite) == (URL + "/prefect", {"endpoint_url": "http://127.0.0.1:9000"}, True)
    assert name.startswith("oloproof-") and len(name) == len("oloproof-") + 20
    int(name.removeprefix("oloproof-"), 16)  # hexadecimal


def test_the_block_name_depends_on_the_store_and_its_options_only(saved):
    remote_result_storage(ResultsStore(URL), {"endpoint_url": "http://a", "anon": True})
    remote_result_storage(ResultsStore(URL), {"anon": True, "endpoint_url": "http://a"})
    remote_result_storage(ResultsStore(URL), {"endpoint_url": "http://b", "anon": True})
    remote_result_storage(ResultsStore("memory://oloproof-remote-test/other"), {"endpoint_url": "http://a",
                                                                               "anon": True})
    names = [name for name, *_ in saved]
    assert names[0] == names[1]
    assert len({names[0], names[2], names[3]}) == 3
