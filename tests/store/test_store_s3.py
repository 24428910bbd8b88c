"""The results store on S3, against a real moto server on 127.0.0.1."""

from __future__ import annotations

import socket
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import s3fs

import oloproof.store
from oloproof._exceptions import NotFoundError, StoreError
from oloproof.store import CASES, ResultsStore, run_table
from oloproof.store._duckdb import new_connection

pytestmark = pytest.mark.services

FAST_S3 = {"connect_timeout": 1, "retries": {"max_attempts": 1}}


def test_objects_and_json(s3_store):
    s3_store.check_writable()
    s3_store.write_bytes("a/b.bin", b"one")
    s3_store.write_bytes("a/b.bin", b"two")
    s3_store.write_json("a/doc.json", {"é": [1, None]})
    assert s3_store.read_bytes("a/b.bin") == b"two"
    assert s3_store.read_json("a/doc.json") == {"é": [1, None]}
    assert s3_store.exists("a/doc.json") and not s3_store.exists("a/nope.json")
    assert s3_store.list_paths() == ["a/b.bin", "a/doc.json"]
    assert s3_store.list_paths("a") == ["a/b.bin", "a/doc.json"]
    assert s3_store.list_paths("runs") == []
    with pytest.raises(NotFoundError):
        s3_store.read_bytes("a/nope.json")


def test_records_concurrently(s3_store):
    keys = [uuid.uuid4().hex for _ in range(40)]

    def put(key: str) -> None:
        s3_store.put_record("retrieve", key, {"key": key})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, keys[:30]))
        singles = list(pool.map(lambda k: s3_store.get_record("retrieve", k), keys))
    assert singles[:30] == [{"key": k} for k in keys[:30]] and singles[30:] == [None] * 10
    found = s3_store.get_records("retrieve", keys)
    assert found == {k: {"key": k} for k in keys[:30]}
    assert s3_store.list_paths("cache")[0].startswith("cache/retrieve/")



def _counting_store(s3_bucket, s3_options):
    from aiobotocore.session import AioSession

    sent: list[tuple[str, str]] = []
    session = AioSession()
    session.register("before-send.s3", lambda request, **_: sent.append((request.method, request.url)))
    return ResultsStore(f"s3://{s3_bucket}/team/results", {**s3_options, "session": session}), sent


def _kinds(sent: list[tuple[str, str]]) -> list[str]:
    return sorted("LIST" if "list-type" in url else method for method, url in sent)


def test_a_packed_lookup_costs_requests_per_pack_not_per_key(s3_bucket, s3_options):
    # Counted on the client's own session: each request the store sends, found or 404.
    writer, sent = _counting_store(s3_bucket, s3_options)
    writer.put_records("judge", {k * 64: {"k": k} for k in "ab"})
    writer.put_records("judge", {"d" * 64: {"k": "d"}})
    assert _kinds(sent) == ["PUT"] * 4  # two packs, two index segments
    reader, sent = _counting_store(s3_bucket, s3_options)
    found = reader.get_records("judge", ["a" * 64, "b" * 64, "c" * 64])
    assert found == {"a" * 64: {"k": "a"}, "b" * 64: {"k": "b"}}
    # The index (one listing, one GET a segment), the stage's folder (stored alone?
    # once), one GET for the pack; nothing for the key no pack holds.
    assert _kinds(sent) == ["GET", "GET", "GET", "LIST", "LIST"]
    sent.clear()
    assert reader.get_records("judge", ["a" * 64, "d" * 64, "e" * 64]) == {"a" * 64: {"k": "a"}, "d" * 64: {"k": "d"}}
    assert _kinds(sent) == ["GET", "GET", "LIST"]  # the index again, then the two packs


def test_a_record_stored_alone_is_one_get_found_or_not(s3_bucket, s3_options):
    store, sent = _counting_store(s3_bucket, s3_options)
    store.put_record("judge", "a" * 64, {"k": 1})
    sent.clear()
    found = store.get_records("judge", ["a" * 64, "b" * 64, "c" * 64])
    assert found == {"a" * 64: {"k": 1}}
    # Not a HEAD before each GET, nor a LIST after each miss (what fs.cat would send):
    # the index's one listing (it shows the stage has records stored alone), a GET a key.
    assert _kinds(sent) == ["GET", "GET", "GET", "LIST"]


def test_tables_and_views_over_s3(s3_store, s3_options, write_run):
    write_run(s3_store, "r1")
    write_run(s3_store, "r2", complete=False)
    s3_store.write_table(run_table("r3", "cases"), [], CASES)
    s3_store.write_json("runs/r3/run.json", {"status": "complete"})
    rows = s3_store.read_table(run_table("r1", "cases"))
    assert rows[0]["context"] == [{"doc_id": "d1", "chunk_id": "c1", "position": 1}]
    con = s3_store.connect()
    try:
        assert con.execute("SELECT run_id FROM runs").fetchall() == [("r1",), ("r3",)]
        assert con.execute(
            "SELECT run_id, count(*) FROM cases GROUP BY run_id"
        ).fetchall() == [("r1", 2)]
        assert con.execute(
            "SELECT sum(successes) FROM metrics WHERE criterion = ?", ["exact"]
        ).fetchone() == (2,)
    finally:
        con.close()
    con = oloproof.store.connect(s3_store.url, s3_options)
    assert con.execute("SELECT count(*) FROM judgments").fetchone() == (2,)
    con.close()


def test_duckdb_globs_through_the_registered_filesystem(s3_store, write_run):
    write_run(s3_store, "g1")
    write_run(s3_store, "g2")
    con = new_connection()
    con.register_filesystem(s3_store.fs)
    pattern = f"s3://{s3_store.root}/runs/*/cases.parquet"
    count = con.execute("SELECT count(*) FROM read_parquet(?)", [pattern]).fetchone()
    assert count == (4,)


def test_nonexistent_bucket_is_one_clear_error(s3_options):
    url = f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/results"
    store = ResultsStore(url, s3_options)
    with pytest.raises(StoreError, match="does not exist") as caught:
        store.check_writable()
    assert url in str(caught.value)
    with pytest.raises(StoreError, match="does not exist") as caught:
        store.write_json("runs/x/run.json", {})
    assert url in str(caught.value)


def test_unreachable_endpoint_is_one_clear_error(aws_env):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    url = "s3://some-bucket/results"
    store = ResultsStore(url, {"endpoint_url": closed, "config_kwargs": dict(FAST_S3)})
    with pytest.raises(StoreError, match="unreachable") as caught:
        store.check_writable()
    assert url in str(caught.value) and closed in str(caught.value)
    with pytest.raises(StoreError, match="unreachable"):
        store.get_records("retrieve", ["ab" * 8])
    with pytest.raises(StoreError, match="unreachable"):
        store.exists("runs/x/run.json")


def test_wrong_credentials_are_one_clear_error(s3_store, moto_auth):
    with moto_auth():
        with pytest.raises(StoreError, match="access denied") as caught:
            s3_store.check_writable()
        assert s3_store.url in str(caught.value)
        with pytest.raises(StoreError, match="access denied"):
            s3_store.write_bytes("x.bin", b"x")


def test_credentials_never_reach_the_store(moto_server, s3_bucket, aws_env, write_run):
    secret_id, secret = "AKIDSECRETLOOKING1234", "s3cr3t/Value+DoNotStore"
    options = {
        "key": secret_id,
        "secret": secret,
        "endpoint_url": moto_server,
        "client_kwargs": {"region_name": "us-east-1"},
    }
    store = ResultsStore(f"s3://{s3_bucket}/results", options)
    write_run(store, "secret-run")
    store.put_record("generate", uuid.uuid4().hex, {"answer": "x"})
    assert store.query("SELECT count(*) FROM cases")[1] == [(2,)]
    assert secret not in repr(store)
    reader = s3fs.S3FileSystem(endpoint_url=moto_server, skip_instance_cache=True)
    objects = reader.find(s3_bucket)
    assert len(objects) >= 6
    for path, data in reader.cat(objects).items():
        for needle in (secret_id, secret, "testing"):
            assert needle.encode() not in data, (path, needle)

