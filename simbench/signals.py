"""SIGTERM as Ctrl-C: one handler for every command that stops its workers and writes its
reports when it is stopped (exit status 130 after SIGINT, 143 after SIGTERM)."""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["sigterm_interrupts"]


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[list[int]]:
    """SIGTERM raises ``KeyboardInterrupt`` as Ctrl-C does, so that a command stops its workers
    and writes its reports; the list it yields is non-empty after SIGTERM (exit status 143).
    SIGINT ignored by inheritance (a command started with ``&`` from a script, POSIX) is restored
    to Ctrl-C's ``KeyboardInterrupt``. Outside the main thread: nothing is installed."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return

    def handler(signum: int, frame: Any) -> None:
        got.append(signum)
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    old_int = signal.getsignal(signal.SIGINT)
    if old_int == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield got
    finally:
        signal.signal(signal.SIGTERM, old)
        if old_int == signal.SIG_IGN:
            signal.signal(signal.SIGINT, old_int)
