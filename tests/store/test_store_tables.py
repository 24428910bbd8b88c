"""Parquet tables, on their own."""

from __future__ import annotations

import uuid

import pytest

from oloproof._exceptions import NotFoundError, StoreError
from oloproof.store import ObjectStore, StoreLocation, TableSchema, TableStore
from oloproof.store._tables import decode_parquet, encode_chunk, encode_parquet, parquet_from_chunks

SCHEMA = TableSchema("t", (("id", "VARCHAR"), ("n", "BIGINT"), ("doc", "JSON")))


@pytest.fixture(params=["local", "memory"])
def tables(request, tmp_path) -> TableStore:
    if request.param == "local":
        url = str(tmp_path / "results")
    else:
        url = f"memory://oloproof-{uuid.uuid4().hex}/results"
    return TableStore(ObjectStore(StoreLocation(url)))


def test_rows_from_a_generator_round_trip(tables):
    rows = ({"id": f"r{i}", "n": i, "doc": {"i": [i]}} for i in range(3))
    tables.write_table("x/t.parquet", rows, SCHEMA)
    assert tables.read_table("x/t.parquet") == [
        {"id": f"r{i}", "n": i, "doc": {"i": [i]}} for i in range(3)
    ]


def test_only_the_columns_asked_for_are_read(tables):
    tables.write_table("x/t.parquet", [{"id": "a", "n": 1, "doc": {"k": [1]}}, {"id": "b", "n": 2}], SCHEMA)
    assert tables.read_table("x/t.parquet", ["doc", "id"]) == [{"doc": {"k": [1]}, "id": "a"},
                                                                {"doc": None, "id": "b"}]  # fmt: skip
    # A column the file lacks (written before it existed) is absent from the rows.
    assert tables.read_table("x/t.parquet", ["n", "later"]) == [{"n": 1}, {"n": 2}]
    assert tables.read_table("x/t.parquet", ["later"]) == [{}, {}]
    assert tables.read_table("x/t.parquet", ['odd "name']) == [{}, {}]
    odd = TableSchema("o", (("_none", "VARCHAR"), ("k", "BIGINT")))
    tables.write_table("x/o.parquet", [{"_none": "kept", "k": 1}], odd)
    assert tables.read_table("x/o.parquet", ["_none"]) == [{"_none": "kept"}]


def test_json_columns_are_known_from_the_file_itself(tmp_path):
    tables = TableStore(ObjectStore(StoreLocation(str(tmp_path))))
    tables.write_table("t.parquet", [{"id": "a", "doc": [1, "é"]}], SCHEMA)
    assert decode_parquet(str(tmp_path / "t.parquet")) == [{"id": "a", "n": None, "doc": [1, "é"]}]


def test_a_row_that_does_not_fit_names_the_table_url(tables):
    with pytest.raises(StoreError, match="unknown column") as caught:
        tables.write_table("x/t.parquet", [{"nope": 1}], SCHEMA)
    assert caught.value.path == tables.objects.location.url_for("x/t.parquet")
    assert caught.value.field == "t"
    assert not tables.objects.exists("x/t.parquet")


def test_a_value_with_no_json_form_names_the_table_url(tables):
    with pytest.raises(StoreError, match="not JSON-serialisable") as caught:
        tables.write_table("x/t.parquet", [{"doc": {"x": object()}}], SCHEMA)
    assert caught.value.path == tables.objects.location.url_for("x/t.parquet")


def test_a_file_that_is_not_parquet_names_its_url(tables):
    tables.objects.write_bytes("x/t.parquet", b"not parquet")
    with pytest.raises(StoreError, match="cannot read table") as caught:
        tables.read_table("x/t.parquet")
    assert caught.value.path == tables.objects.location.url_for("x/t.parquet")


def test_a_missing_table_is_not_found(tables):
    with pytest.raises(NotFoundError) as caught:
        tables.read_table("x/none.parquet")
    assert caught.value.path == tables.objects.location.url_for("x/none.parquet")


def _rows(start: int, stop: int) -> list[dict]:
    return [{"id": f"r{i}", "n": i, "doc": {"i": [i], "t": "é\n\u2028"}} for i in range(start, stop)]


def test_chunks_written_as_one_table_keep_their_order(tables):
    chunks = [encode_chunk(_rows(0, 3), SCHEMA), encode_chunk([], SCHEMA), encode_chunk(_rows(3, 7), SCHEMA)]
    tables.write_table_chunks("x/t.parquet", iter(chunks), SCHEMA)
    assert tables.read_table("x/t.parquet") == _rows(0, 7)
    # The same file as the rows written at once: one encoding, two ways in.
    assert parquet_from_chunks(chunks, SCHEMA) == encode_parquet(_rows(0, 7), SCHEMA)



def test_a_chunk_compresses_blocks_of_rows_not_each_row(monkeypatch):
    import oloproof.store._tables as codec

    calls = []
    real = codec.zlib.compressobj

    class Counting:
        def __init__(self, level):
            self.inner = real(level)

        def compress(self, data):
            calls.append(len(data))
            return self.inner.compress(data)

        def flush(self):
            return self.inner.flush()

    monkeypatch.setattr(codec.zlib, "compressobj", Counting)
    monkeypatch.setattr(codec, "_BLOCK_BYTES", 4096)
    rows = [{"id": f"r{i}", "n": i, "doc": {"t": "x" * 90}} for i in range(300)]
    chunk = encode_chunk(rows, SCHEMA)
    # About 40 kB of lines in blocks of 4 kB, and every row back in order.
    assert 5 < len(calls) < 20 and sum(calls) > 300 * 100
    assert parquet_from_chunks([chunk], SCHEMA) == encode_parquet(rows, SCHEMA)

def test_a_chunk_is_much_smaller_than_its_rows():
    rows = [{"id": f"case-{i}", "n": i, "doc": {"text": "the same passage text " * 20}} for i in range(500)]
    chunk = encode_chunk(rows, SCHEMA)
    assert len(chunk) * 20 < sum(len(str(row)) for row in rows)


def test_a_bad_row_or_a_damaged_chunk_is_an_error_naming_the_table(tables):
    with pytest.raises(StoreError, match="unknown column"):
        encode_chunk([{"id": "a", "nope": 1}], SCHEMA)
    with pytest.raises(StoreError, match="chunk 1 of table 't' is damaged") as raised:
        tables.write_table_chunks("x/t.parquet", [encode_chunk(_rows(0, 1), SCHEMA), b"not a chunk"], SCHEMA)
    assert raised.value.path.endswith("x/t.parquet")
    assert not tables.objects.exists("x/t.parquet")


def test_a_row_larger_than_the_readers_usual_buffer_is_written_whole(tmp_path):
    from oloproof.store._tables import _USUAL_OBJECT_SIZE

    schema = TableSchema("big", (("key", "VARCHAR"), ("text", "VARCHAR")))
    text = "x" * (3 * _USUAL_OBJECT_SIZE)
    rows = [{"key": "a", "text": "small"}, {"key": "b", "text": text}, {"key": "c", "text": "small"}]
    path = tmp_path / "t.parquet"
    path.write_bytes(encode_parquet(rows, schema))
    assert decode_parquet(str(path)) == rows
