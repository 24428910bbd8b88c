"""Runs of each kind in the views: the user's runs in ``runs``, every run in ``all_runs``.

A diagnosis's child runs re-execute a few cases each; a trend over ``runs`` must not
read them as runs of the system. Manifests written before runs recorded their kind
read by their ``parent``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oloproof.store import ResultsStore, run_manifest

README = Path(__file__).resolve().parents[2] / "README.md"

PARENT = {"run_id": "run_A", "diagnosis_request": "f00d", "role": "control"}

# run id -> (what its manifest adds to the base one, the kind it reads as)
MANIFESTS = {
    "run_A": ({"kind": "run"}, "run"),
    "run_B": ({"kind": "diagnosis_child", "parent": PARENT}, "diagnosis_child"),
    "run_C": ({}, "run"),  # written before kinds: no parent
    "run_D": ({"parent": PARENT}, "diagnosis_child"),  # written before kinds: a parent
    "run_E": ({"parent": None}, "run"),  # written before kinds: no parent, said so
}


def readme_query(heading: str) -> str:
    """The SQL of the ``oloproof query`` example under ``heading`` in the README."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index(heading):].split("```sh\n", 1)[1].split("```", 1)[0]
    found = re.search(r'oloproof query "(.*?)"', block, re.DOTALL)
    if found is None:
        raise LookupError(f"no oloproof query under {heading!r} in the README")
    return found.group(1).replace("\\$", "$")


@pytest.fixture
def kinds_store(local_store: ResultsStore, write_run) -> ResultsStore:
    """A store holding a run of each kind, and older manifests without one."""
    for number, (run_id, (extra, _)) in enumerate(MANIFESTS.items()):
        write_run(local_store, run_id)
        manifest = local_store.read_json(run_manifest(run_id))
        created = f"2025-01-0{number + 1}T00:00:00+00:00"
        local_store.write_json(run_manifest(run_id), {**manifest, "created_at": created, **extra})
    return local_store


def test_runs_holds_the_users_runs_and_all_runs_every_run_with_its_kind(kinds_store):
    users = [(run_id, kind) for run_id, (_, kind) in MANIFESTS.items() if kind == "run"]
    every = [(run_id, kind) for run_id, (_, kind) in MANIFESTS.items()]
    assert kinds_store.query("SELECT run_id, kind FROM runs")[1] == users
    assert kinds_store.query("SELECT run_id, kind FROM all_runs")[1] == every


def test_runs_has_the_columns_of_all_runs(kinds_store):
    assert kinds_store.query("SELECT * FROM runs LIMIT 0")[0] == kinds_store.query(
        "SELECT * FROM all_runs LIMIT 0"
    )[0]


def test_the_readme_trend_query_reads_the_users_runs_only(kinds_store):
    sql = readme_query("Metric trend across nightly runs")
    assert "JOIN runs" in sql
    names, rows = kinds_store.query(sql, ["exact"])
    assert names[0] == "created_at"
    assert [row[0] for row in rows] == [
        "2025-01-01T00:00:00+00:00", "2025-01-03T00:00:00+00:00", "2025-01-05T00:00:00+00:00",
    ]  # fmt: skip


def test_table_views_hold_every_runs_rows(kinds_store):
    for view in ("cases", "retrievals", "generations", "judgments", "metrics"):
        rows = kinds_store.query(f"SELECT DISTINCT run_id FROM {view} ORDER BY run_id")[1]
        assert [row[0] for row in rows] == list(MANIFESTS), view
    joined = kinds_store.query("SELECT DISTINCT run_id FROM judgments JOIN runs USING (run_id) ORDER BY 1")[1]
    assert [row[0] for row in joined] == ["run_A", "run_C", "run_E"]


def test_a_kind_a_manifest_records_is_shown_as_written(local_store, write_run):
    write_run(local_store, "run_F")
    manifest = local_store.read_json(run_manifest("run_F"))
    local_store.write_json(run_manifest("run_F"), {**manifest, "kind": "sweep_setting", "parent": PARENT})
    assert local_store.query("SELECT run_id, kind FROM all_runs")[1] == [("run_F", "sweep_setting")]
    assert local_store.query("SELECT count(*) FROM runs")[1] == [(0,)]
