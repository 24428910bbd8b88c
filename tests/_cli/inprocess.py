"""Calling ``oloproof`` in-process from tests, outside pytest's output capture.

Module-scoped setups cannot use the function-scoped ``run_cli`` fixture, so
they call these directly.
"""

from __future__ import annotations

import contextlib
import io

__all__ = ["invoke_cli", "invoke_ok"]


def invoke_cli(*argv: str) -> tuple[int, str, str]:
    """Run ``oloproof ARGV``; returns (exit code, stdout, stderr)."""
    from oloproof._cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def invoke_ok(*argv: str) -> str:
    """Run ``oloproof ARGV``, which must succeed; returns its stdout."""
    code, out, err = invoke_cli(*argv)
    assert code == 0, (argv, err[-3000:])
    return out
