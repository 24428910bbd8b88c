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
    _views,
    diagnosis_request,
    run_manifest,
)
from oloproof.store._views import VIEW_NAMES, views_named_in


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


@pytest.mark.parametrize(
    ("sql", "views"),
    [
        ("SELECT count(*) FROM judgments", {"judgments"}),
        ('SELECT * FROM "Judgments" j JOIN RUNS r USING (run_id)', {"judgments", "runs"}),
        ("SELECT kind FROM all_runs", {"all_runs"}),
        ("SELECT * FROM query_table('metrics')", {"metrics"}),
        ("SELECT * FROM cases /* runs */ -- decisions", {"cases"}),
        ("SELECT * FROM generations", {"generations"}),
        ("SELECT table_name FROM information_schema.tables", set(VIEW_NAMES)),
        ("SELECT 1", set(VIEW_NAMES)),
    ],
)
def test_a_statement_gets_the_views_it_names(sql, views):
    assert views_named_in(sql) == views


def test_a_query_reads_only_the_manifests_it_names(queries, tmp_path):
    queries.objects.write_json(run_manifest("r1"), {"status": "complete"})
    queries.objects.write_bytes(run_manifest("bad"), b"{")
    # Completeness comes from the listing: both runs are complete, neither has judgments.
    assert queries.query("SELECT count(*) FROM judgments")[1] == [(0,)]
    assert queries.query("SELECT count(*) FROM generations")[1] == [(0,)]
    with pytest.raises(StoreError, match="invalid manifest JSON"):
        queries.query("SELECT count(*) FROM runs")
    with pytest.raises(StoreError, match="invalid manifest JSON"):
        queries.query("SELECT count(*) FROM all_runs")


@pytest.mark.slow
def test_many_manifests_fill_their_view(queries):
    for n in range(1203):  # more than one INSERT's worth of rows
        queries.objects.write_json(run_manifest(f"r{n:04d}"), {"status": "complete", "dataset": {"n": n}})
    _names, rows = queries.query("SELECT count(*), min(run_id), max(run_id), count(DISTINCT dataset) FROM runs")
    assert rows == [(1203, "r0000", "r1202", 1203)]


def test_a_query_lists_only_the_folders_its_views_read(queries, monkeypatch):
    listed = []
    real = _views.list_entries  # a local store is listed without following links out of it
    monkeypatch.setattr(_views, "list_entries",
                        lambda where, container, **kw: (listed.append(container), real(where, container, **kw))[1])
    queries.query("SELECT count(*) FROM generations")
    assert listed == ["runs"]
    listed.clear()
    queries.query("SELECT count(*) FROM decisions JOIN diagnoses ON true")
    assert sorted(listed) == ["comparisons", "diagnoses"]


@pytest.mark.slow
def test_a_statement_s_thread_is_gone_when_its_answer_is_back(queries):
    # A thread still inside DuckDB when the interpreter finalizes aborts the process
    # ("terminate called ... exception not rethrown"), after the output was printed.
    queries.objects.write_json(run_manifest("r1"), {"status": "complete"})
    for _ in range(60):
        queries.query("SELECT run_id FROM runs")
        assert not oloproof.store.statements_running()


def test_a_judgments_table_written_before_requests_were_counted_reads_beside_a_new_one(tmp_path):
    # Tables of earlier versions have no `requests` column: the view reads them by name, as null.
    from dataclasses import replace

    from judged_runs import judged_run, write_run

    from oloproof.store import JUDGMENTS, ResultsStore, run_table

    store = ResultsStore(str(tmp_path / "results"))
    new, old = judged_run("run_new", [4, 2]), judged_run("run_old", [5, 1])
    for row in new["judgments"]:
        row["requests"] = 1
    write_run(store, new)
    earlier = replace(JUDGMENTS, columns=tuple(column for column in JUDGMENTS.columns if column[0] != "requests"))
    assert len(earlier.columns) == len(JUDGMENTS.columns) - 1
    write_run(store, old)
    store.write_table(run_table("run_old", "judgments"), old["judgments"], earlier)  # over the new-schema one
    _, rows = store.query("select run_id, count(*), count(requests), sum(requests) from judgments group by 1 order by 1")
    assert rows == [("run_new", 4, 4, 4), ("run_old", 4, 0, None)]


def _builds(monkeypatch) -> list[bool]:
    """Records each connection a query builds: whether its views were bound by the first file."""
    from oloproof.store import _queries

    built: list[bool] = []
    real = _queries.build_connection

    def spy(*args, by_first_file=False, **kwargs):
        built.append(by_first_file)
        return real(*args, by_first_file=by_first_file, **kwargs)

    monkeypatch.setattr(_queries, "build_connection", spy)
    return built


def _view_sql(store, view: str) -> str:
    con = _views.build_connection(store.objects, {view}, by_first_file=True)
    try:
        ((sql,),) = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = ?", [view]).fetchall()
    finally:
        con.close()
    return str(sql)


def _store_with_a_file_lacking_requests(tmp_path, lacking: str):
    """Runs ``run_a`` and ``run_b`` (sorted in that order), ``lacking``'s judgments without ``requests``."""
    from dataclasses import replace

    from judged_runs import judged_run, write_run

    from oloproof.store import JUDGMENTS, ResultsStore, run_table

    store = ResultsStore(str(tmp_path / "results"))
    earlier = replace(JUDGMENTS, columns=tuple(column for column in JUDGMENTS.columns if column[0] != "requests"))
    for run_id, passes in (("run_a", [4, 2]), ("run_b", [5, 1])):
        run = judged_run(run_id, passes)
        for row in run["judgments"]:
            row["requests"] = 2
        write_run(store, run)
        if run_id == lacking:
            rows = [{k: v for k, v in row.items() if k != "requests"} for row in run["judgments"]]
            store.write_table(run_table(run_id, "judgments"), rows, earlier)
    return store


def test_a_store_of_current_tables_is_queried_on_views_bound_by_their_first_file(tmp_path, monkeypatch):
    store = _store_with_a_file_lacking_requests(tmp_path, lacking="none")
    built = _builds(monkeypatch)
    _, rows = store.query("select run_id, count(*), sum(requests) from judgments group by 1 order by 1")
    assert rows == [("run_a", 4, 8), ("run_b", 4, 8)]
    assert built == [True]
    assert "union_by_name" not in _view_sql(store, "judgments")


def test_a_newer_table_lacking_a_column_the_statement_reads_runs_it_again_on_united_views(tmp_path, monkeypatch):
    store = _store_with_a_file_lacking_requests(tmp_path, lacking="run_b")
    built = _builds(monkeypatch)
    _, rows = store.query("select run_id, count(*), count(requests), sum(requests) from judgments group by 1 order by 1")
    assert rows == [("run_a", 4, 4, 8), ("run_b", 4, 0, None)]
    assert built == [True, False]
    built.clear()
    # A statement that does not read the missing column needs no second try.
    _, rows = store.query("select run_id, count(*) from judgments group by 1 order by 1")
    assert (rows, built) == ([("run_a", 4), ("run_b", 4)], [True])


def test_an_oldest_table_lacking_a_column_unites_the_files_at_once(tmp_path, monkeypatch):
    store = _store_with_a_file_lacking_requests(tmp_path, lacking="run_a")
    built = _builds(monkeypatch)
    _, rows = store.query("select run_id, count(requests), sum(requests) from judgments group by 1 order by 1")
    assert rows == [("run_a", 0, None), ("run_b", 4, 8)]
    assert built == [True]  # the first file's columns fail the bind: the same connection unites the files
    assert "union_by_name" in _view_sql(store, "judgments")


def test_a_failing_statement_reports_the_united_views_error_once(tmp_path, monkeypatch):
    store = _store_with_a_file_lacking_requests(tmp_path, lacking="none")
    built = _builds(monkeypatch)
    with pytest.raises(StoreError) as caught:
        store.query("select no_such_column from judgments")
    assert built == [True, False]
    assert "no_such_column" in str(caught.value) and "\n" not in str(caught.value)
