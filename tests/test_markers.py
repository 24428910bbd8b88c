"""The test markers the fast lane selects by, and the lane itself.

The README's fast lane is ``pytest -m "not slow and not services"``: the markers must stay
declared (``--strict-markers`` refuses an undeclared one), be used, and leave a lane to run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LANE = "not slow and not services"
"""The fast lane's selection, as the README gives it."""


def test_the_lane_s_markers_are_declared(pytestconfig):
    declared = {line.split(":", 1)[0].strip() for line in pytestconfig.getini("markers")}
    assert {"slow", "services"} <= declared


def test_the_readme_gives_the_lane():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f'.venv/bin/python -m pytest -m "{LANE}"' in readme


@pytest.mark.slow
def test_the_lane_selects_some_tests_and_leaves_some_out():
    # A session of its own: without this one's xdist settings, and under its own process mark, or at its end it
    # would take this session's other workers for processes left behind and kill them (conftest.py).
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTEST_", "XDIST_")) and key != "TESTS_PROCESS_MARK"}  # fmt: skip
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", LANE],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    counts = re.search(r"^(\d+)/(\d+) tests collected \((\d+) deselected\)", collected.stdout, flags=re.MULTILINE)
    assert counts is not None, collected.stdout[-2000:]
    selected, total, deselected = map(int, counts.groups())
    assert 0 < selected < total
    assert selected + deselected == total
