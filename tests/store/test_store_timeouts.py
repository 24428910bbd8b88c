"""A store endpoint that accepts connections and never answers fails fast, with a clear
error naming the store, instead of botocore's minutes of retries."""

from __future__ import annotations

import socket
import threading

import pytest

from oloproof._exceptions import StoreError
from oloproof.store import ResultsStore, StoreLocation, _location


def test_bounded_defaults_unless_set(aws_env):
    fs = StoreLocation("s3://bucket/prefix", {"endpoint_url": "http://127.0.0.1:9"}).fs
    config = fs.config_kwargs if hasattr(fs, "config_kwargs") else fs.kwargs["config_kwargs"]
    assert config["connect_timeout"] == _location.S3_CONNECT_TIMEOUT_S
    assert config["read_timeout"] == _location.S3_READ_TIMEOUT_S
    assert config["retries"]["max_attempts"] == _location.S3_ATTEMPTS and fs.retries == _location.S3FS_RETRIES
    # The worst case the defaults allow for a silent endpoint: under a minute.
    assert _location.S3_ATTEMPTS * _location.S3FS_RETRIES * _location.S3_READ_TIMEOUT_S < 60
    mine = StoreLocation("s3://bucket/p", {"endpoint_url": "http://127.0.0.1:9", "retries": 7,
                                            "config_kwargs": {"read_timeout": 99}}).fs  # fmt: skip
    config = mine.config_kwargs if hasattr(mine, "config_kwargs") else mine.kwargs["config_kwargs"]
    assert config["read_timeout"] == 99 and config["connect_timeout"] == _location.S3_CONNECT_TIMEOUT_S
    assert mine.retries == 7


@pytest.fixture
def silent_endpoint():
    """A TCP server that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    for connection in held:
        connection.close()
    server.close()


def test_a_silent_endpoint_is_an_error_naming_the_store(aws_env, silent_endpoint, monkeypatch):
    # The defaults scaled down (the bound above says what they allow at full size).
    monkeypatch.setattr(_location, "S3_READ_TIMEOUT_S", 0.5)
    monkeypatch.setattr(_location, "S3_CONNECT_TIMEOUT_S", 0.5)
    store = ResultsStore("s3://silent-bucket/oloproof", {"endpoint_url": silent_endpoint})
    with pytest.raises(StoreError) as raised:  # an error, not a hang (pytest-timeout would end one)
        store.list_paths("runs")
    assert "s3://silent-bucket/oloproof" in str(raised.value) and "\n" not in str(raised.value)


def test_each_retry_says_so_while_waiting(aws_env, silent_endpoint, monkeypatch, caplog):
    monkeypatch.setattr(_location, "S3_READ_TIMEOUT_S", 0.5)
    monkeypatch.setattr(_location, "S3_CONNECT_TIMEOUT_S", 0.5)
    store = ResultsStore("s3://silent-bucket/oloproof", {"endpoint_url": silent_endpoint})
    with caplog.at_level("WARNING", logger="oloproof.store"), pytest.raises(StoreError):
        store.list_paths("runs")
    notices = [r.getMessage() for r in caplog.records if r.name == "oloproof.store"]
    # Two tries by default: one notice between them, none after the last.
    assert notices == [
        (f"the results store s3://silent-bucket/oloproof at {silent_endpoint} did not answer "
         f"ListObjectsV2 (ReadTimeoutError) on try 1 of {_location.S3_ATTEMPTS}; trying again")
    ], notices


def test_a_session_the_user_gives_is_kept(aws_env):
    from aiobotocore.session import AioSession

    mine = AioSession()
    fs = StoreLocation("s3://bucket/p", {"endpoint_url": "http://127.0.0.1:9", "session": mine}).fs
    assert fs.session is mine


def test_a_refused_connection_is_retried_without_a_notice(aws_env, free_tcp_port, caplog):
    store = ResultsStore("s3://closed-bucket/oloproof", {"endpoint_url": f"http://127.0.0.1:{free_tcp_port}"})
    with caplog.at_level("WARNING", logger="oloproof.store"), pytest.raises(StoreError):
        store.list_paths("runs")
    assert [r for r in caplog.records if r.name == "oloproof.store"] == []
