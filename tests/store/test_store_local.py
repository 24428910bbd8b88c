"""The results store on a local directory (and the in-memory fsspec filesystem)."""

from __future__ import annotations

import math
import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

import oloproof.store
from oloproof._exceptions import NotFoundError, StoreError
from oloproof.store import (
    CASES,
    DECISIONS,
    JUDGMENTS,
    TABLES,
    ResultsStore,
    TableSchema,
    cache_path,
    comparison_decisions,
    comparison_manifest,
    diagnosis_labels,
    diagnosis_manifest,
    run_table,
)
from oloproof.store import DIAGNOSIS_LABELS as LABELS


def all_files(root: str) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
    )


# -- objects ---------------------------------------------------------------


def test_root_is_created_lazily_on_first_write(local_store):
    assert not os.path.exists(local_store.root)
    local_store.check_writable()
    assert not os.path.exists(local_store.root)
    local_store.write_bytes("a/b.txt", b"x")
    assert os.path.isdir(local_store.root)


def test_write_leaves_no_temporary_files_and_overwrites(local_store):
    local_store.write_bytes("runs/r1/blob.bin", b"first")
    local_store.write_bytes("runs/r1/blob.bin", b"second")
    local_store.write_json("runs/r1/run.json", {"b": 1, "a": 2})
    assert all_files(local_store.root) == ["runs/r1/blob.bin", "runs/r1/run.json"]
    assert local_store.read_bytes("runs/r1/blob.bin") == b"second"


def test_overwrite_is_atomic_for_concurrent_readers(local_store):
    payloads = [b"A" * 200_000, b"B" * 300_000]
    local_store.write_bytes("big.bin", payloads[0])
    stop = threading.Event()
    seen: set[bytes] = set()

    def read() -> None:
        while not stop.is_set():
            data = local_store.read_bytes("big.bin")
            assert data in payloads
            seen.add(data[:1])

    with ThreadPoolExecutor(2) as pool:
        reader = pool.submit(read)
        for i in range(60):
            local_store.write_bytes("big.bin", payloads[i % 2])
        stop.set()
        reader.result()
    assert seen <= {b"A", b"B"}
    assert all_files(local_store.root) == ["big.bin"]


def test_failed_write_keeps_the_old_content_and_no_temporary(local_store, monkeypatch):
    local_store.write_bytes("x.json", b"old")

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(StoreError, match="disk full") as caught:
        local_store.write_bytes("x.json", b"new")
    assert "x.json" in str(caught.value)
    monkeypatch.undo()
    assert local_store.read_bytes("x.json") == b"old"
    assert all_files(local_store.root) == ["x.json"]


def test_json_round_trip_is_canonical_utf8(local_store):
    value = {"z": [1, 2.5, None, True], "a": {"é": "naïve ☃"}}
    local_store.write_json("doc.json", value)
    assert local_store.read_json("doc.json") == value
    raw = local_store.read_bytes("doc.json")
    assert raw.decode("utf-8").index('"a"') < raw.decode("utf-8").index('"z"')
    assert "naïve ☃".encode() in raw


def test_missing_object_is_not_found(local_store):
    with pytest.raises(NotFoundError) as caught:
        local_store.read_bytes("runs/nope/run.json")
    assert isinstance(caught.value, LookupError)
    assert "runs/nope/run.json" in str(caught.value)
    assert not local_store.exists("runs/nope/run.json")


def test_invalid_json_is_a_store_error(local_store):
    local_store.write_bytes("bad.json", b"{not json")
    with pytest.raises(StoreError, match="invalid JSON"):
        local_store.read_json("bad.json")


@pytest.mark.parametrize("relpath", ["../escape", "/abs/path", "a/../b", "a//b"])
def test_paths_must_stay_inside_the_store(local_store, relpath):
    with pytest.raises(StoreError, match="invalid store path"):
        local_store.write_bytes(relpath, b"x")


def test_list_returns_relative_paths_without_temporaries(local_store):
    local_store.write_bytes("runs/r1/run.json", b"{}")
    local_store.write_bytes("cache/s/ab/abc.json", b"{}")
    os.makedirs(os.path.join(local_store.root, "runs", "r2"))
    with open(os.path.join(local_store.root, "runs", "r2", ".cases.parquet.1234.tmp"), "wb"):
        pass
    assert local_store.list_paths() == ["cache/s/ab/abc.json", "runs/r1/run.json"]
    assert local_store.list_paths("runs") == ["runs/r1/run.json"]
    assert local_store.list_paths("diagnoses") == []


def test_check_writable_rejects_a_root_under_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    store = ResultsStore(str(tmp_path / "file" / "results"))
    with pytest.raises(StoreError, match="not a directory") as caught:
        store.check_writable()
    assert str(tmp_path / "file" / "results") in str(caught.value)


# -- stage records -----------------------------------------------------------


def test_records_put_get_and_layout(local_store):
    key = "ab" + "0" * 62
    assert local_store.get_record("retrieve", key) is None
    local_store.put_record("retrieve", key, {"candidates": [1, 2], "ms": 3.5})
    assert local_store.get_record("retrieve", key) == {"candidates": [1, 2], "ms": 3.5}
    assert cache_path("retrieve", key) == f"cache/retrieve/ab/{key}.json"
    assert os.path.isfile(os.path.join(local_store.root, "cache", "retrieve", "ab", f"{key}.json"))


def test_get_records_fetches_many_and_skips_missing(local_store):
    keys = [uuid.uuid4().hex for _ in range(20)]
    for i, key in enumerate(keys[:15]):
        local_store.put_record("generate", key, {"i": i})
    found = local_store.get_records("generate", keys + keys[:3])
    assert found == {key: {"i": i} for i, key in enumerate(keys[:15])}
    assert local_store.get_records("generate", []) == {}


def test_records_are_thread_safe(local_store):
    keys = [uuid.uuid4().hex for _ in range(200)]

    def work(key: str) -> dict | None:
        local_store.put_record("judge", key, {"key": key})
        local_store.put_record("judge", key, {"key": key, "again": True})
        return local_store.get_record("judge", key)

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(work, keys))
    assert all(r == {"key": k, "again": True} for r, k in zip(results, keys, strict=True))
    assert len(local_store.get_records("judge", keys)) == 200
    assert not [f for f in all_files(local_store.root) if f.endswith(".tmp")]


@pytest.mark.parametrize("stage, key", [("retrieve", "../x"), ("a/b", "abcd"), ("s", "a")])
def test_record_names_are_checked(local_store, stage, key):
    with pytest.raises(StoreError):
        local_store.put_record(stage, key, {})


def test_record_must_be_an_object(local_store):
    with pytest.raises(StoreError, match="must be a dict"):
        local_store.put_record("s", "abcd", [1, 2])  # type: ignore[arg-type]


# -- tables ----------------------------------------------------------------


def test_table_round_trip_with_json_columns(local_store, write_run):
    write_run(local_store, "r1")
    rows = local_store.read_table(run_table("r1", "cases"))
    assert [row["case_id"] for row in rows] == ["c1", "c2"]
    first = rows[0]
    assert list(first) == list(CASES.names)
    assert first["input"] == {"question": "Qu'est-ce que c1?"}
    assert first["context"] == [{"doc_id": "d1", "chunk_id": "c1", "position": 1}]
    assert first["dropped"] == []
    assert first["best_relevant_position"] == 1 and rows[1]["best_relevant_position"] is None
    assert first["generate_hit"] is True and first["retrieve_hit"] is None
    assert first["generate_ms"] == 20.25
    judgments = local_store.read_table(run_table("r1", "judgments"))
    assert judgments[0]["detail"] == {"matched": True}


def test_table_types_and_special_values(local_store):
    schema = TableSchema(
        "t", (("s", "VARCHAR"), ("n", "BIGINT"), ("x", "DOUBLE"), ("b", "BOOLEAN"),
              ("j", "JSON"), ("at", "TIMESTAMP"))
    )  # fmt: skip
    rows = [
        {"s": "ünï\ncode \"q\"", "n": 2**53 + 1, "x": float("nan"), "b": False,
         "j": "just a string", "at": "2025-01-01T00:00:00Z"},
        {"s": None, "n": -1, "x": float("inf"), "b": None, "j": [1, {"k": None}]},
    ]  # fmt: skip
    local_store.write_table("t.parquet", rows, schema)
    back = local_store.read_table("t.parquet")
    assert back[0]["s"] == rows[0]["s"] and back[0]["n"] == 2**53 + 1
    assert math.isnan(back[0]["x"]) and back[1]["x"] == math.inf
    assert back[0]["j"] == "just a string" and back[1]["j"] == [1, {"k": None}]
    assert back[0]["at"] == "2025-01-01T00:00:00Z" and back[1]["at"] is None


@pytest.mark.parametrize("schema", list(TABLES.values()), ids=list(TABLES))
def test_zero_rows_give_a_typed_empty_table(local_store, schema):
    local_store.write_table("empty.parquet", [], schema)
    assert local_store.read_table("empty.parquet") == []
    import duckdb

    described = duckdb.sql(
        f"DESCRIBE SELECT * FROM read_parquet('{local_store.full_path('empty.parquet')}')"
    ).fetchall()
    assert [(name, kind) for name, kind, *_ in described] == [
        (name, schema.storage_type(name)) for name in schema.names
    ]


def test_rows_that_do_not_fit_the_schema_are_rejected(local_store):
    with pytest.raises(StoreError, match="unknown column") as caught:
        local_store.write_table("x.parquet", [{"run_id": "r", "nope": 1}], CASES)
    assert "x.parquet" in str(caught.value)
    with pytest.raises(StoreError, match="scalar column"):
        local_store.write_table("x.parquet", [{"run_id": {"a": 1}}], CASES)
    with pytest.raises(StoreError, match="cannot write table"):
        local_store.write_table("x.parquet", [{"position": "not a number"}], TABLES["retrievals"])
    assert not local_store.exists("x.parquet")


def test_missing_table_is_not_found(local_store):
    with pytest.raises(NotFoundError):
        local_store.read_table("runs/r9/cases.parquet")


# -- views and queries -----------------------------------------------------


def test_views_exist_and_are_empty_on_an_empty_store(local_store):
    con = local_store.connect()
    try:
        for view in ["runs", "all_runs", "cases", "retrievals", "generations", "judgments", "case_samples", "metrics",
                     "diagnoses", "diagnosis_labels", "comparisons", "decisions"]:  # fmt: skip
            assert con.execute(f"SELECT count(*) FROM {view}").fetchone() == (0,)
        described = con.execute("DESCRIBE decisions").fetchall()
        assert [row[0] for row in described] == list(DECISIONS.names)
        assert {row[0]: row[1] for row in described}["paired"] == "BIGINT"
    finally:
        con.close()


def test_views_show_only_complete_runs(local_store, write_run):
    write_run(local_store, "done")
    write_run(local_store, "interrupted", complete=False)
    con = oloproof.store.connect(local_store.url)
    try:
        runs = con.execute(
            "SELECT run_id, created_at, system_name, system_version, index_version, status "
            "FROM runs"
        ).fetchall()
        assert runs == [("done", "2025-01-02T03:04:05+00:00", "demo", "1.0", "ix-7", "complete")]
        for view in ["cases", "retrievals", "judgments", "metrics", "generations"]:
            ids = {row[0] for row in con.execute(f"SELECT DISTINCT run_id FROM {view}").fetchall()}
            assert ids == {"done"}, view
        output = con.execute(
            "SELECT output->>'$.answer' FROM generations WHERE case_id = 'c1'"
        ).fetchone()
        assert output == ("42",)
        manifest = con.execute("SELECT manifest->>'$.dataset.path' FROM runs").fetchone()
        assert manifest == ("cases.jsonl",)
    finally:
        con.close()


def test_diagnoses_and_comparisons_views(local_store, write_run):
    write_run(local_store, "r1")
    dx, cx = "d" * 64, "c" * 64
    local_store.write_table(
        diagnosis_labels(dx),
        # Content-addressed ids read as they are printed, sha256:<hex>, in every view.
        [{"diagnosis_id": f"sha256:{dx}", "case_id": "c1", "label": "retrieval_miss",
          "best_relevant_position": None, "control_passed": False,
          "intervention_passed": True}],
        LABELS,
    )  # fmt: skip
    local_store.write_json(
        diagnosis_manifest(dx),
        {"parent_run_id": "r1", "criterion": "exact", "intervention": {"kind": "oracle"}},
    )
    local_store.write_table(
        comparison_decisions(cx),
        [{"comparison_id": f"sha256:{cx}", "rule": "no_regression", "verdict": "pass", "paired": 2}],
        DECISIONS,
    )
    # an incomplete comparison: decisions written, manifest not yet
    local_store.write_table(comparison_decisions("e" * 64), [{"comparison_id": "e"}], DECISIONS)
    local_store.write_json(
        comparison_manifest(cx),
        {"candidate_run_id": "r1", "baseline_run_id": "r0", "gate": "default"},
    )
    columns, rows = local_store.query(
        "SELECT d.parent_run_id, d.intervention, l.label FROM diagnoses d "
        "JOIN diagnosis_labels l USING (diagnosis_id)"
    )
    assert columns == ["parent_run_id", "intervention", "label"]
    assert rows == [("r1", '{"kind":"oracle"}', "retrieval_miss")]
    _, rows = local_store.query(
        "SELECT c.candidate_run_id, c.gate, d.verdict, d.paired FROM comparisons c "
        "JOIN decisions d USING (comparison_id)"
    )
    assert rows == [("r1", "default", "pass", 2)]
    assert local_store.query("SELECT count(*) FROM decisions")[1] == [(1,)]


def test_query_binds_parameters(local_store, write_run):
    write_run(local_store, "r1")
    write_run(local_store, "r2")
    hostile = "r1' OR '1'='1"
    assert local_store.query("SELECT count(*) FROM cases WHERE run_id = ?", [hostile])[1] == [(0,)]
    columns, rows = local_store.query(
        "SELECT run_id, case_id FROM cases WHERE run_id = $run AND case_id = $case",
        {"run": "r2", "case": "c2"},
    )
    assert columns == ["run_id", "case_id"]
    assert rows == [("r2", "c2")]
    assert local_store.query("SELECT run_id FROM runs ORDER BY run_id")[1] == [("r1",), ("r2",)]


def test_bad_sql_is_a_one_line_store_error(local_store):
    with pytest.raises(StoreError) as caught:
        local_store.query("SELEC nonsense")
    assert "\n" not in str(caught.value)
    assert "syntax error" in str(caught.value).lower()
    with pytest.raises(StoreError, match="nope"):
        local_store.query("SELECT nope FROM cases")
    with pytest.raises(StoreError):
        local_store.query("SELECT ?", "not a list")  # type: ignore[arg-type]


def test_memory_filesystem_store_through_registered_fs(write_run):
    store = ResultsStore(f"memory://oloproof-test-{uuid.uuid4().hex}/results")
    write_run(store, "m1")
    write_run(store, "m2", complete=False)
    key = uuid.uuid4().hex
    store.put_record("retrieve", key, {"ok": True})
    assert store.get_records("retrieve", [key, "ff" * 8]) == {key: {"ok": True}}
    assert store.query("SELECT DISTINCT run_id FROM judgments")[1] == [("m1",)]
    assert store.read_table(run_table("m1", "judgments"))[0]["detail"] == {"matched": True}


def test_schema_rejects_unknown_types():
    with pytest.raises(StoreError, match="unknown column type"):
        TableSchema("t", (("a", "TEXT"),))
    assert JUDGMENTS.json_columns == ("detail",)
    assert CASES.storage_type("input") == "VARCHAR"
