"""Ctrl-C and SIGTERM stop a run at once, whatever the engine is doing when they come."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Terminated", "interruption", "stop_on_signals"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be, so a run stops the same clean way."""


def interruption(signum: int) -> KeyboardInterrupt:
    """The exception a signal stands for."""
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


@contextmanager
def stop_on_signals(stop: Callable[[], None]) -> Iterator[list[int]]:
    """While the block runs, SIGINT and SIGTERM first call ``stop``, then raise.

    ``stop`` cancels the run's pending calls from the signal itself, so the run
    stops even where the engine would catch the exception the signal raises. A
    signal the process was started ignoring (a shell's background job) stays ignored.

    Yields:
        The signals received so far (the block can tell a stop it asked for).
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        stop()
        raise interruption(signum)

    previous = {
        signum: signal.signal(signum, handler)
        for signum in (signal.SIGINT, signal.SIGTERM)
        if signal.getsignal(signum) is not signal.SIG_IGN
    }
    try:
        yield received
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
