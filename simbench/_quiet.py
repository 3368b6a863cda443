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
def filtered_stdout(drop: re.Pattern[str]) -> Iterator[None]:
    """Inside the block, C-level output on stdout (fd 1) is held back; afterwards it is written
    out without the matches of ``drop`` (PyBullet's warnings that simbench says in its own words)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no real descriptor (e.g. captured): nothing to filter
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 1)
        try:
            yield
        finally:
            _flush_c_stdio()
            os.dup2(saved, 1)
            os.close(saved)
            held.seek(0)
            text = drop.sub("", held.read().decode(errors="replace"))
            if text:
                os.write(1, text.encode())


def import_pybullet() -> ModuleType:
    if "pybullet" not in sys.modules:
        with quiet_fds():
            import pybullet  # noqa: F401
    return sys.modules["pybullet"]
