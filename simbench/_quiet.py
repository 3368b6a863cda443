"""Import PyBullet without its "pybullet build time" banner on stdout."""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from types import ModuleType


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Silence file descriptor 1 (C-level prints from PyBullet) inside the block."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no real stdout (e.g. captured): nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        _flush_c_stdio()  # C printf output is buffered: drop it while fd 1 is /dev/null
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _flush_c_stdio() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


def import_pybullet() -> ModuleType:
    if "pybullet" not in sys.modules:
        with quiet_stdout():
            import pybullet  # noqa: F401
    return sys.modules["pybullet"]
