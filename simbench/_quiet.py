"""Import PyBullet without its "pybullet build time" banner."""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from types import ModuleType


def _flush_c_stdio() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


@contextlib.contextmanager
def quiet_fds(*fds: int) -> Iterator[None]:
    """Silence C-level output on file descriptors ``fds`` (default 1 and 2) inside the block."""
    fds = fds or (1, 2)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = [os.dup(fd) for fd in fds]
    except (OSError, ValueError):  # no real descriptors (e.g. captured): nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in fds:
            os.dup2(devnull, fd)
        yield
    finally:
        _flush_c_stdio()  # C stdio may buffer: drop what was written while silenced
        for fd, copy in zip(fds, saved):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(devnull)


@contextlib.contextmanager
def filtered_fd(fd: int, drop: re.Pattern[str], kept: list[str] | None = None) -> Iterator[None]:
    """Inside the block, C-level output on ``fd`` is held back; afterwards it is written out
    without the matches of ``drop``, and appended whole to ``kept`` when given."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(fd)
    except (OSError, ValueError):  # no real descriptor (e.g. captured): nothing to filter
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), fd)
        try:
            yield
        finally:
            _flush_c_stdio()
            os.dup2(saved, fd)
            os.close(saved)
            held.seek(0)
            whole = held.read().decode(errors="replace")
            if kept is not None:
                kept.append(whole)
            text = drop.sub("", whole)
            if text:
                os.write(fd, text.encode())


def filtered_stdout(drop: re.Pattern[str]) -> contextlib.AbstractContextManager[None]:
    """:func:`filtered_fd` on stdout (PyBullet's warnings that simbench says in its own words)."""
    return filtered_fd(1, drop)


def import_pybullet() -> ModuleType:
    if "pybullet" not in sys.modules:
        with quiet_fds():
            import pybullet  # noqa: F401
    return sys.modules["pybullet"]
