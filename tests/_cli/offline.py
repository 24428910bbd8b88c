"""The command line in-process for bad-input tests: refusals need no Prefect server.

A plain module (not a conftest): a test module that imports ``offline_run_cli`` has it as its
``run_cli`` fixture, in place of the session's (which starts a Prefect server).
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["line_of", "offline_run_cli"]


@pytest.fixture(name="run_cli")
def offline_run_cli(request, capsys):
    """``oloproof`` in-process, as conftest's ``run_cli``, but with a Prefect server only for the slow tests.

    Bad input is refused before the command connects to Prefect, so a refusal needs no server. The API
    given instead answers nothing: input that got past validation by mistake fails its test with that
    one line, rather than starting a temporary server.
    """
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from oloproof._cli.main import main

    if request.node.get_closest_marker("slow"):
        request.getfixturevalue("prefect_api")
        api = PREFECT_API_URL.value()
    else:
        api = "http://127.0.0.1:9/api"  # the discard port: nothing listens there

    def invoke(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        with temporary_settings(updates={PREFECT_API_URL: api}):
            code = main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return invoke


def line_of(path: Path, needle: str) -> int:
    """The 1-based number of the first line of ``path`` containing ``needle``."""
    return next(n for n, text in enumerate(path.read_text().splitlines(), start=1) if needle in text)
