"""Shared test set-up: single-threaded BLAS (numba brings its own threads), Ctrl-C delivered to
the commands the tests start, quiet PyBullet."""
import os
import signal

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import shutil  # noqa: E402

# A test run started in the background of a non-interactive shell (`.ci/run &`, nohup) ignores
# SIGINT, and every command it starts inherits that: the Ctrl-C tests (the command's exit status
# 130 and the results kept) then see no Ctrl-C at all. A Python handler is reset to the default at
# exec, so the commands start with Ctrl-C as in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import pytest  # noqa: E402


@pytest.fixture
def direct_client():
    """A fresh PyBullet DIRECT client, disconnected afterwards."""
    import pybullet as p

    client = p.connect(p.DIRECT)
    yield client
    p.disconnect(physicsClientId=client)


def require_xvfb() -> str:
    """Path of xvfb-run; in CI its absence is a failure, elsewhere a skip."""
    path = shutil.which("xvfb-run")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("xvfb-run is missing in CI (.ci/run installs the xvfb package)")
        pytest.skip("xvfb-run not installed")
    return path
