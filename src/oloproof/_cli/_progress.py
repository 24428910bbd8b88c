"""A live progress bar on a terminal (stderr), fed by the tasks' progress hooks."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof.tasks import ProgressHook

__all__ = ["progress_bar"]

_LABELS = {"execute": "cached", "retrieve": "retrieve", "assemble": "assemble", "generate": "generate", "judge": "judge"}


@contextmanager
def progress_bar(total_cases: int, stages: list[str]) -> Iterator[ProgressHook | None]:
    """Show one bar per stage while the block runs, when stderr is a terminal.

    Yields:
        The hook to hand the run (``None`` off a terminal).
    """
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description:>10}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(file=sys.stderr), transient=True,
    )
    bars: dict[str, TaskID] = {stage: progress.add_task(_LABELS.get(stage, stage), total=None) for stage in stages}
    lock = threading.Lock()

    def hook(stage: str, count: int) -> None:
        with lock:
            if stage in bars:
                progress.advance(bars[stage], count)

    progress.start()
    try:
        yield hook
    finally:
        progress.stop()
