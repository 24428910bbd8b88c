"""``oloproof query`` is a reader, safe behind a dashboard: one SELECT over the views,
no other file (whatever the current folder holds, whatever links the store holds),
no write, no attach, no extension, no setting loosened."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from judged_runs import judged_run, write_run

from oloproof._exceptions import StoreError
from oloproof.store import ResultsStore
from oloproof.store._inside import read_inside


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


def test_duckdbs_temporary_folder_in_the_current_folder_is_not_readable(store, tmp_path, monkeypatch):
    # DuckDB allows its temporary folder, by default ".tmp" under the current folder.
    here = tmp_path / "elsewhere"
    (here / ".tmp").mkdir(parents=True)
    (here / ".tmp" / "creds.csv").write_text("user,secret\nalice,hunter2\n")
    monkeypatch.chdir(here)
    with pytest.raises(StoreError, match="file system operations are disabled"):
        store.query(f"SELECT * FROM read_csv('{here}/.tmp/creds.csv')")
    _, [(allowed,)] = store.query("SELECT current_setting('allowed_directories')")
    assert not any(str(here) in folder for folder in allowed), allowed
    spill = [folder for folder in allowed if "oloproof-query-" in folder]
    assert len(allowed) == 2 and len(spill) == 1  # the store and the query's private spill folder
    assert not os.path.exists(spill[0])  # gone with the query


@pytest.fixture
def outside(tmp_path):
    """A folder beside the store with a secret file, a JSON object and a complete run of its own."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.csv").write_text("user,secret\nalice,hunter2\n")
    (folder / "secret.json").write_text(json.dumps({"status": "complete", "token": "hunter2"}))
    elsewhere = ResultsStore(str(folder / "other"))
    write_run(elsewhere, judged_run("run_OUT", [5, 5, 5, 5]))
    return folder


def test_a_link_out_of_the_store_is_refused(store, outside):
    root = Path(store.root)
    (root / "runs" / "run_Q" / "secret.csv").symlink_to(outside / "secret.csv")
    (root / "peek").symlink_to(outside)
    for path in (root / "runs" / "run_Q" / "secret.csv", root / "peek" / "secret.csv",
                 root / "runs" / "run_Q" / ".." / ".." / "peek" / "secret.csv"):  # fmt: skip
        with pytest.raises(StoreError, match="file system operations are disabled"):
            store.query(f"SELECT * FROM read_csv('{path}')")
    with pytest.raises(StoreError, match="file system operations are disabled"):
        store.query(f"SELECT * FROM read_csv('{root}/*/secret.csv')")
    # A link that stays inside the store reads as the file it points to.
    (root / "runs" / "run_Q" / "again.parquet").symlink_to(root / "runs" / "run_Q" / "cases.parquet")
    assert store.query(f"SELECT count(*) FROM read_parquet('{root}/runs/run_Q/again.parquet')")[1] == [(3,)]


def test_the_views_never_follow_a_link_out_of_the_store(store, outside):
    root = Path(store.root)
    planted = root / "runs" / "run_LINKED"
    planted.mkdir()
    (planted / "run.json").symlink_to(outside / "secret.json")
    (planted / "cases.parquet").symlink_to(outside / "other" / "runs" / "run_OUT" / "cases.parquet")
    (root / "runs" / "run_OUT").symlink_to(outside / "other" / "runs" / "run_OUT")
    (root / "runs" / "run_Q" / "judgments.parquet").unlink()
    (root / "runs" / "run_Q" / "judgments.parquet").symlink_to(
        outside / "other" / "runs" / "run_OUT" / "judgments.parquet")
    _, rows = store.query("SELECT run_id, manifest FROM all_runs")
    assert [run_id for run_id, _ in rows] == ["run_Q"] and "hunter2" not in rows[0][1]
    assert store.query("SELECT DISTINCT run_id FROM cases")[1] == [("run_Q",)]
    assert store.query("SELECT count(*) FROM judgments")[1] == [(0,)]  # run_Q's own file is a link out


def test_a_store_whose_runs_folder_leaves_it_has_no_runs(tmp_path, outside):
    root = tmp_path / "linked"
    root.mkdir()
    (root / "runs").symlink_to(outside / "other" / "runs")
    assert ResultsStore(str(root)).query("SELECT count(*) FROM all_runs")[1] == [(0,)]
    assert ResultsStore(str(root)).query("SELECT count(*) FROM cases")[1] == [(0,)]


def test_a_manifest_swapped_for_a_link_after_the_listing_is_refused(store, outside):
    # The listing saw a file; by the time it is read it leads out of the store.
    manifest = Path(store.root) / "runs" / "run_Q" / "run.json"
    manifest.unlink()
    manifest.symlink_to(outside / "secret.json")
    with pytest.raises(StoreError, match="leads out of the store"):
        read_inside(store.location, ["runs/run_Q/run.json"])
    manifest.unlink()
    os.mkfifo(manifest)  # nothing ever writes it: reading it must not wait
    with pytest.raises(StoreError, match="not a regular file"):
        read_inside(store.location, ["runs/run_Q/run.json"])
    assert read_inside(store.location, ["runs/run_Q/none.json"]) == {}
