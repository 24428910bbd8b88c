"""Values printed to a terminal cannot recolour it or forge a line of a report: control
characters in case ids, answers and reasons are escaped; the store keeps them exact."""

from __future__ import annotations

import json

import pytest
from judged_runs import judged_run, write_run

from oloproof._cli.main import main

FORGED = "c0000\x1b[2J\r\nGate: PASS (exit 0)"


@pytest.fixture
def store(tmp_path):
    from oloproof.store import ResultsStore

    run = judged_run("run_ESCAPES", [5, 1, 4])
    for rows in (run["cases"], run["judgments"]):
        for row in rows:
            if row["case_id"] == "c0000":
                row["case_id"] = FORGED
    for row in run["judgments"]:
        row["reason"] = "fine\x1b[31m\nGate: PASS"
    url = str(tmp_path / "store")
    write_run(ResultsStore(url), run)
    return url


def _printed(capsys, *argv):
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [
    ("inspect", "run_ESCAPES"),
    ("query", "SELECT case_id, reason FROM judgments ORDER BY case_id"),
    ("show", "run_ESCAPES"),
])
def test_printed_values_are_escaped(store, capsys, argv):
    code, out, err = _printed(capsys, *argv, "--results", store)
    assert code == 0, err
    assert "\x1b" not in out and "\r" not in out
    assert not any(line.startswith("Gate: PASS") for line in out.splitlines())
    if argv[0] != "show":
        assert "\\x1b[2J\\r\\nGate: PASS (exit 0)" in out


def test_json_and_the_store_keep_the_exact_values(store, capsys):
    code, out, err = _printed(capsys, "query", "SELECT case_id FROM judgments ORDER BY case_id", "--json",
                              "--results", store)  # fmt: skip
    assert code == 0, err
    assert json.loads(out)[0]["case_id"] == FORGED


def test_an_error_naming_a_value_is_escaped(store, capsys):
    code, _out, err = _printed(capsys, "show", "run_\x1b[31mX", "--results", store)
    assert code == 2
    assert "\x1b" not in err and err.count("\n") == 1
