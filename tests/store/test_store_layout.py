"""Where everything lives inside a results store."""

from __future__ import annotations

import pytest

from oloproof._exceptions import StoreError
from oloproof.store import _layout


def test_every_helper_gives_a_valid_relative_path():
    hexid = "ab" * 32
    paths = [
        _layout.run_dir("r1"),
        _layout.run_manifest("r1"),
        *(_layout.run_table("r1", table) for table in _layout.RUN_TABLES),
        _layout.diagnosis_dir(hexid),
        _layout.diagnosis_manifest(hexid),
        _layout.diagnosis_labels(hexid),
        _layout.diagnosis_request(hexid),
        _layout.comparison_dir(hexid),
        _layout.comparison_manifest(hexid),
        _layout.comparison_decisions(hexid),
        _layout.cache_path("retrieve", hexid),
    ]
    assert [_layout.validate_relpath(path) for path in paths] == paths


def test_paths_are_the_documented_ones():
    assert _layout.run_table("r1", "cases") == "runs/r1/cases.parquet"
    assert _layout.run_manifest("r1") == "runs/r1/run.json"
    assert _layout.diagnosis_labels("d1") == "diagnoses/d1/labels.parquet"
    assert _layout.comparison_decisions("c1") == "comparisons/c1/decisions.parquet"
    assert _layout.diagnosis_request("f00d") == "diagnoses/requests/f00d.json"
    assert _layout.VALIDATIONS_DIR == "validations"
    assert _layout.PREFECT_DIR == "prefect"


def test_a_diagnosis_request_is_never_a_diagnosis_entry():
    container, _name, filename = _layout.split_entry_file(_layout.diagnosis_request("f00d"))
    assert container == _layout.DIAGNOSES_DIR
    assert filename != _layout.DIAGNOSIS_MANIFEST


def test_entry_files_split_back_into_their_parts():
    path = _layout.entry_file(_layout.RUNS_DIR, "r1", _layout.RUN_MANIFEST)
    assert path == _layout.run_manifest("r1")
    assert _layout.split_entry_file(path) == ("runs", "r1", "run.json")
    assert _layout.split_entry_file("runs/r1") is None
    assert _layout.split_entry_file("runs/r1/sub/file.json") is None


def test_entry_files_take_listed_names_as_they_are():
    # A directory someone else made must still be addressable to be skipped or read.
    assert _layout.entry_file("runs", "my run", "run.json") == "runs/my run/run.json"


@pytest.mark.parametrize("table", ["nope", "cases.parquet", ""])
def test_unknown_run_tables_are_rejected(table):
    with pytest.raises(StoreError, match="unknown run table"):
        _layout.run_table_file(table)


@pytest.mark.parametrize("bad", ["../x", "a/b", "", ".hidden", "a..b"])
def test_ids_must_be_safe_names(bad):
    for helper in (_layout.run_dir, _layout.diagnosis_dir, _layout.comparison_dir,
                   _layout.diagnosis_request):  # fmt: skip
        with pytest.raises(StoreError, match="invalid name"):
            helper(bad)


@pytest.mark.parametrize(
    "relpath, expected", [("a/b/", "a/b"), ("a\\b", "a/b"), ("x", "x")]
)
def test_relative_paths_are_normalised(relpath, expected):
    assert _layout.validate_relpath(relpath) == expected
