"""A run killed during its final write leaves a folder no reader shows:
``oloproof runs --incomplete`` lists it and ``--remove`` cleans it, never a complete run
and never the folder of a run still writing, however old."""

from __future__ import annotations

import json
import os
import time

import pytest
from judged_runs import judged_run, write_run

from oloproof._cli.main import main
from oloproof.store import CASES, ResultsStore, run_table
from oloproof.store._lease import run_lease


def _cli(capsys, *argv):
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_incomplete_runs_are_listed_and_removed(tmp_path, capsys):
    url = str(tmp_path / "store")
    store = ResultsStore(url)
    write_run(store, judged_run("run_DONE", [5, 1]))
    store.write_json(run_table("run_KILLED", "cases").replace("cases.parquet", "cases.parquet.json"), {})
    fresh = judged_run("run_WRITING", [5])
    store.write_table(run_table("run_WRITING", "cases"), fresh["cases"], CASES)
    old = time.time() - 3 * 3600
    for path in (tmp_path / "store" / "runs" / "run_KILLED").iterdir():
        os.utime(path, (old, old))

    code, out, err = _cli(capsys, "runs", "--incomplete", "--results", url, "--json")
    assert code == 0, err
    listed = {row["run_id"]: row for row in json.loads(out)}
    assert set(listed) == {"run_KILLED", "run_WRITING"}  # run_DONE is complete
    assert listed["run_KILLED"]["age_minutes"] > 170

    code, out, err = _cli(capsys, "runs", "--incomplete", "--remove", "--results", url)
    assert code == 0, err
    assert "run_KILLED  incomplete: cases.parquet.json" in out and "· removed" in out
    assert "run_WRITING  incomplete: cases.parquet" in out and "kept (younger than 60 min)" in out
    assert not (tmp_path / "store" / "runs" / "run_KILLED").exists()
    assert (tmp_path / "store" / "runs" / "run_WRITING").exists() and (tmp_path / "store" / "runs" / "run_DONE").exists()
    code, out, err = _cli(capsys, "runs", "--results", url)
    assert code == 0 and out.startswith("run_DONE")


def test_remove_without_incomplete_is_refused(tmp_path, capsys):
    code, _out, err = _cli(capsys, "runs", "--remove", "--results", str(tmp_path))
    assert code == 2 and "pass --incomplete too" in err


@pytest.mark.parametrize("value", ["-5", "nan", "inf", "-inf"])
def test_older_than_must_be_a_finite_number_of_at_least_0(tmp_path, capsys, value):
    url = str(tmp_path / "store")
    store = ResultsStore(url)
    store.write_bytes("runs/run_OLD/cases.parquet", b"x")
    _backdate(tmp_path / "store" / "runs" / "run_OLD")
    code, out, err = _cli(capsys, "runs", "--incomplete", "--remove", f"--older-than={value}", "--results", url)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"oloproof: error: field '--older-than': must be a finite number of minutes, at least 0; got {float(value):g}"
    ]
    assert (tmp_path / "store" / "runs" / "run_OLD" / "cases.parquet").exists()


def test_a_folder_a_live_run_writes_is_kept_whatever_its_age(tmp_path, capsys):
    url = str(tmp_path / "store")
    store = ResultsStore(url)
    folder = tmp_path / "store" / "runs" / "run_LIVE"
    with run_lease(store, "run_LIVE"):
        store.write_bytes("runs/run_LIVE/cases.parquet", b"x")
        _backdate(folder)
        code, out, err = _cli(capsys, "runs", "--incomplete", "--remove", "--older-than", "0", "--results", url)
        assert code == 0, err
        assert "run_LIVE  incomplete: cases.parquet · last written 180 min ago · kept (a run is writing it)" in out
        assert (folder / "cases.parquet").exists()
    code, out, err = _cli(capsys, "runs", "--incomplete", "--remove", "--results", url, "--json")
    assert code == 0, err
    assert [(row["run_id"], row["removed"]) for row in json.loads(out)] == [("run_LIVE", True)]
    assert not folder.exists()


def _backdate(folder, hours: float = 3) -> None:
    old = time.time() - hours * 3600
    for path in folder.iterdir():
        os.utime(path, (old, old))
