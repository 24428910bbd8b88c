"""The README's first command on a fresh, busy machine: no Prefect server, no bytecode.

A new ``HOME`` (so Prefect creates and migrates its database on the first start),
``PYTHONDONTWRITEBYTECODE=1`` with an empty bytecode cache (so every process, the
temporary server included, compiles Prefect from source), and two other processes
keeping the CPUs busy. Prefect's own wait for its temporary server (20 s, counted in
sleeps) ended such runs in a traceback; Oloproof's wait is on the clock.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from processes import clean_env, stop_process
from projects import copy_project

pytestmark = [pytest.mark.slow, pytest.mark.services]

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "support_rag"
CLI = [sys.executable, "-m", "oloproof._cli.main"]


@pytest.fixture
def busy_cpus() -> Iterator[None]:
    """Two CPU-bound processes for the test's duration."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(2)
    ]
    try:
        yield
    finally:
        for burner in burners:
            stop_process(burner, grace=5)


def test_the_first_command_works_on_a_fresh_busy_machine(tmp_path, busy_cpus):
    project = copy_project(EXAMPLE, tmp_path / "support_rag", batched=False)
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env()
    env.update(
        HOME=str(home),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPYCACHEPREFIX=str(tmp_path / "no-bytecode"),  # an empty cache: nothing compiled is found
        COLUMNS="200",
    )
    for attempt in ("first", "second"):  # the second in the same HOME, with its database made
        ran = subprocess.run([*CLI, "run", str(project)], env=env,
                             check=False, capture_output=True, text=True, timeout=1500)  # fmt: skip
        assert ran.returncode == 0, f"{attempt} run: {ran.stderr[-3000:]}"
        assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
        assert "│ answer_correct  │ 69.2%    │ [38.5%, 91.0%]  │" in ran.stdout, ran.stdout
    assert (home / ".prefect").is_dir()  # the temporary server's database was made here, fresh
