"""Shared test set-up: single-threaded BLAS (numba brings its own threads), quiet PyBullet."""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import shutil  # noqa: E402

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
