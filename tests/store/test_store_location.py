"""Where a results store is: URL, filesystem, paths and the writable check."""

from __future__ import annotations

import os
import uuid

import pytest

from oloproof._exceptions import ConfigError, StoreError
from oloproof.store import StoreLocation


def test_local_paths_use_the_os_separator(tmp_path):
    where = StoreLocation(str(tmp_path / "results"))
    assert where.is_local and where.endpoint is None
    assert where.full_path("runs/r1/run.json") == os.path.join(
        str(tmp_path / "results"), "runs", "r1", "run.json"
    )
    assert where.url_for() == str(tmp_path / "results")
    assert where.url_for("runs/r1") == f"{tmp_path / 'results'}/runs/r1"


def test_remote_paths_and_urls():
    where = StoreLocation("memory://bucket/results/")
    assert not where.is_local
    assert where.full_path("a/b.json") == "/bucket/results/a/b.json"
    assert where.url_for("a/b.json") == "memory://bucket/results/a/b.json"


def test_object_stores_never_trust_a_cached_listing():
    where = StoreLocation("s3://bucket/prefix", {"endpoint_url": "http://127.0.0.1:9"})
    assert where.fs.storage_options["use_listings_cache"] is False
    assert where.root == "bucket/prefix"


def test_the_endpoint_is_kept_without_user_info():
    where = StoreLocation("s3://bucket/p", {"endpoint_url": "http://user:pw@127.0.0.1:9/x"})
    assert where.endpoint == "http://127.0.0.1:9/x"
    assert "pw" not in repr(where)


@pytest.mark.parametrize("url", ["", "   "])
def test_an_empty_url_is_a_config_error(url):
    with pytest.raises(ConfigError, match="non-empty"):
        StoreLocation(url)


def test_an_unknown_protocol_is_a_config_error():
    with pytest.raises(ConfigError, match="cannot open the results store"):
        StoreLocation("nosuchprotocol://x/y")


def test_paths_outside_the_store_are_rejected(tmp_path):
    where = StoreLocation(str(tmp_path))
    with pytest.raises(StoreError, match="invalid store path"):
        where.full_path("../outside")


def test_guard_names_the_url_and_the_action(tmp_path):
    where = StoreLocation(str(tmp_path))
    with pytest.raises(StoreError, match="cannot read: no such object") as caught, where.guard("read", "a/b.json"):
        raise FileNotFoundError("a/b.json")
    assert caught.value.path == where.url_for("a/b.json")
    with (
        pytest.raises(StoreError, match="bucket or directory does not exist"),
        where.guard("list", missing_is_lookup=False),
    ):
        raise FileNotFoundError("x")


def test_check_writable_accepts_a_root_still_to_be_made(tmp_path):
    StoreLocation(str(tmp_path / "a" / "b" / "results")).check_writable()
    assert not (tmp_path / "a").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_check_writable_rejects_a_read_only_directory(tmp_path):
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(StoreError, match="not writable"):
            StoreLocation(str(tmp_path / "results")).check_writable()
    finally:
        tmp_path.chmod(0o700)


def test_check_writable_on_a_memory_store():
    StoreLocation(f"memory://oloproof-{uuid.uuid4().hex}/results").check_writable()


def test_a_file_is_not_a_store(tmp_path):
    # `oloproof runs --results /etc/passwd` must not answer "no runs".
    path = tmp_path / "passwd"
    path.write_text("root:x:0:0\n")
    with pytest.raises(ConfigError) as raised:
        StoreLocation(str(path))
    assert str(raised.value) == f"{path}: the results store is a file, not a folder"
    StoreLocation(str(tmp_path / "not-yet"))  # a folder still to be made is fine
