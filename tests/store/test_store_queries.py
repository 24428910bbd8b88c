"""SQL over a store's views, on its own."""

from __future__ import annotations

import uuid

import pytest

import oloproof.store
from oloproof._exceptions import StoreError
from oloproof.store import (
    ObjectStore,
    Queries,
    StoreLocation,
    diagnosis_request,
    run_manifest,
)


@pytest.fixture
def queries(tmp_path) -> Queries:
    return Queries(ObjectStore(StoreLocation(str(tmp_path / "results"))))


def test_every_statement_sees_the_store_as_it_is_then(queries):
    assert queries.query("SELECT count(*) FROM runs") == (["count_star()"], [(0,)])
    queries.objects.write_json(run_manifest("r1"), {"status": "complete"})
    assert queries.query("SELECT run_id, status FROM runs")[1] == [("r1", "complete")]


def test_parameters_may_be_a_tuple(queries):
    assert queries.query("SELECT ? + ?", (1, 2))[1] == [(3,)]


def test_listed_names_are_used_as_they_are(queries):
    # A run directory Oloproof did not name still shows when it is complete.
    queries.objects.write_json("runs/copied run/run.json", {"status": "complete"})
    assert queries.query("SELECT run_id FROM runs")[1] == [("copied run",)]


def test_diagnosis_requests_are_not_diagnoses(queries):
    queries.objects.write_json(diagnosis_request("f00d"), {"diagnosis_id": "sha256:aa"})
    assert queries.query("SELECT count(*) FROM diagnoses")[1] == [(0,)]


def test_an_invalid_manifest_names_its_url(queries):
    queries.objects.write_bytes(run_manifest("bad"), b"{")
    with pytest.raises(StoreError, match="invalid manifest JSON") as caught:
        queries.connect()
    assert caught.value.path == queries.objects.location.url_for(run_manifest("bad"))


def test_a_manifest_that_is_not_an_object_is_an_error(queries):
    queries.objects.write_json(run_manifest("list"), [1])
    with pytest.raises(StoreError, match="must be a JSON object"):
        queries.query("SELECT * FROM runs")


def test_connect_by_url_needs_no_results_store_object():
    url = f"memory://oloproof-{uuid.uuid4().hex}/results"
    ObjectStore(StoreLocation(url)).write_json(run_manifest("m1"), {"status": "complete"})
    con = oloproof.store.connect(url)
    try:
        assert con.execute("SELECT run_id FROM runs").fetchall() == [("m1",)]
    finally:
        con.close()
