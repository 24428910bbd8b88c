"""`oloproof.stages` and `oloproof.sweep` are pure: importing either brings in no Prefect and no store."""

from __future__ import annotations

import subprocess
import sys

import oloproof.stages

_CHECK = """
import sys
import oloproof.stages
loaded = sorted(name for name in sys.modules
                if name.split(".")[0] in ("prefect", "duckdb", "s3fs", "fsspec") or name.startswith("oloproof.store"))
print(",".join(loaded))
"""


def test_importing_the_stages_loads_neither_prefect_nor_a_store():
    loaded = subprocess.run([sys.executable, "-c", _CHECK], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == ""


def test_importing_the_sweep_core_loads_neither_prefect_nor_a_store():
    check = _CHECK.replace("import oloproof.stages", "import oloproof.sweep")
    loaded = subprocess.run([sys.executable, "-c", check], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == ""


def test_the_check_sees_a_module_that_does_load_prefect():
    # The same check, on a module that does import Prefect, finds it: the test above can fail.
    check = _CHECK.replace("import oloproof.stages", "import oloproof.tasks")
    loaded = subprocess.run([sys.executable, "-c", check], check=True, capture_output=True, text=True).stdout
    assert "prefect" in loaded.split(",")


def test_the_public_names_are_sorted_and_importable():
    assert oloproof.stages.__all__ == sorted(oloproof.stages.__all__, key=lambda name: (not name.isupper(), name))
    assert all(hasattr(oloproof.stages, name) for name in oloproof.stages.__all__)
