"""``oloproof query`` is a reader, safe behind a dashboard: one SELECT over the views,
no other file, no write, no attach, no extension, no setting loosened."""

from __future__ import annotations

import pytest
from judged_runs import judged_run, write_run

from oloproof._exceptions import StoreError
from oloproof.store import ResultsStore


@pytest.fixture
def store(tmp_path):
    store = ResultsStore(str(tmp_path / "store"))
    write_run(store, judged_run("run_Q", [5, 1, 4]))
    return store


def test_the_views_answer(store):
    columns, rows = store.query("SELECT count(*) AS n FROM judgments WHERE run_id = $1", ["run_Q"])
    assert (columns, rows) == (["n"], [(6,)])


@pytest.mark.parametrize("sql, message", [
    ("SELECT * FROM read_text('/etc/passwd')", "file system operations are disabled"),
    ("SELECT * FROM read_csv('/etc/hosts')", "file system operations are disabled"),
    ("COPY (SELECT 1) TO '{root}/runs/run_Q/evil.csv'", "a COPY statement is refused"),
    ("ATTACH '{root}/x.db'", "a ATTACH statement is refused"),
    ("INSTALL httpfs", "statement is refused"),
    ("SET enable_external_access = true", "a SET statement is refused"),
    ("CREATE TABLE t AS SELECT 1", "a CREATE statement is refused"),
    ("SELECT 1; SELECT 2", "one SQL statement per query, got 2"),
])
def test_anything_but_reading_the_views_is_refused(store, sql, message):
    with pytest.raises(StoreError, match=message):
        store.query(sql.format(root=store.root))
    assert not any(path.endswith(("evil.csv", "x.db")) for path in store.list_paths(""))


def test_a_select_cannot_loosen_the_lock(store):
    with pytest.raises(StoreError, match="locked|disabled|refused"):
        store.query("SELECT current_setting('enable_external_access'), * FROM read_parquet('/etc/passwd')")
