"""Private copies of the example projects for tests."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

__all__ = ["BATCH_SIZE", "copy_project", "count_calls", "counted_calls"]

BATCH_SIZE = 8
"""Cases per batch task in copied projects: a few task runs per stage, not one per
case, each of which the Prefect server must ingest. The shipped default (one task
run per case for small runs) is exercised by the page and the UI tests."""


def copy_project(source: Path, target: Path, *, batched: bool = True) -> Path:
    """Copy a project folder without its store; ``batched`` appends ``batch_size``.

    The setting is appended, so every line of the original file keeps its number
    (bad-input tests name lines).
    """
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".oloproof", "__pycache__"))
    if batched:
        config = target / "oloproof.yaml"
        text = config.read_text(encoding="utf-8")
        if re.search(r"^batch_size:", text, flags=re.MULTILINE):  # a key may appear once
            text = re.sub(r"^batch_size:.*$", f"batch_size: {BATCH_SIZE}", text, flags=re.MULTILINE)
        else:
            text = f"{text.rstrip()}\nbatch_size: {BATCH_SIZE}\n"
        config.write_text(text, encoding="utf-8")
    return target


_COUNTER = """

_LOG = Path(__file__).with_name("calls.log")


def _counted(name, method):
    def call(self, *args, **kwargs):
        with _LOG.open("a", encoding="utf-8") as log:
            log.write(name + "\\n")
        return method(self, *args, **kwargs)

    return call


{system}.retrieve = _counted("retrieve", {system}.retrieve)
{system}.generate = _counted("generate", {system}.generate)
"""


def count_calls(module: Path, system: str) -> None:
    """Make the RAG system class ``system`` of ``module`` log each retrieve and generate call
    beside the module (``calls.log``, one line a call), for `counted_calls`."""
    module.write_text(module.read_text(encoding="utf-8") + _COUNTER.format(system=system), encoding="utf-8")


def counted_calls(project: Path) -> dict[str, int]:
    """The calls `count_calls` logged in ``project``, by stage."""
    log = project / "calls.log"
    lines = log.read_text(encoding="utf-8").split() if log.exists() else []
    return {name: lines.count(name) for name in ("retrieve", "generate")}
