"""simbench.dynamics.kernels: what the package does to the process (oracle: numba's own state,
the modules loaded, the log of a cold compile)."""
import os
import subprocess
import sys

import pytest


def _run(code, **env):
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                          env={**os.environ, **env})


def test_numba_threading_layer_is_never_touched():
    """Importing simbench.dynamics and running a large batch leave numba's process-wide
    threading layer alone (batches run on Python threads)."""
    code = ("import numba, numpy as np\n"
            "before = numba.config.THREADING_LAYER\n"
            "import simbench.dynamics as dyn\n"
            "from simbench.model import RobotModel\n"
            "m = RobotModel.from_urdf('pybullet_data:kuka_iiwa/model.urdf')\n"
            "Q = m.random_configuration(0, 3000)\n"
            "dyn.inverse_dynamics(m, Q, Q, Q); dyn.mass_matrix(m, Q); dyn.forward_dynamics(m, Q, Q, Q)\n"
            "from numba.np.ufunc import parallel\n"
            "print(before, numba.config.THREADING_LAYER, parallel._is_initialized)\n")
    before, after, started = _run(code).stdout.split()
    assert before == after == "default" and started == "False"


def test_dynamics_imports_neither_pybullet_nor_pinocchio():
    code = ("import sys, simbench.dynamics, simbench.dynamics.lagrange, simbench.dynamics.rigid_body, "
            "simbench.spatial; "
            "assert 'pybullet' not in sys.modules and 'pinocchio' not in sys.modules")
    _run(code)


@pytest.mark.slow
def test_first_compile_is_announced(tmp_path):
    """With an empty cache the first call logs what it compiles, for how long, and where the
    cache goes; the second process loads it and says nothing."""
    code = ("import logging, numpy as np\n"
            "logging.basicConfig(level=logging.INFO, format='%(name)s: %(message)s')\n"
            "import simbench.dynamics as dyn\n"
            "from simbench.model import RobotModel\n"
            "m = RobotModel.from_urdf('simbench:planar_2r.urdf')\n"
            "dyn.mass_matrix(m, np.zeros(2))\n")
    first = _run(code, NUMBA_CACHE_DIR=str(tmp_path)).stderr
    assert "simbench.dynamics: compiling simbench dynamics kernel crba_c once (about" in first
    assert str(tmp_path) in first and "compiled crba_c in" in first
    second = _run(code, NUMBA_CACHE_DIR=str(tmp_path)).stderr
    assert "compiling" not in second


def test_cache_of_changed_kernels_is_dropped(tmp_path):
    """numba checks only a function's own file; the package drops its whole cache when any of its
    sources changed (oracle: the files in the cache directory and the SHA-1 of the sources)."""
    import glob
    import hashlib

    import simbench.dynamics.kernels as K

    here = os.path.dirname(K.__file__)
    digest = hashlib.sha1()
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            digest.update(name.encode() + b"\0" + open(os.path.join(here, name), "rb").read())
    code = "import simbench.dynamics.kernels"
    _run(code, NUMBA_CACHE_DIR=str(tmp_path))            # writes the stamp of these sources
    (stamp,) = glob.glob(str(tmp_path / "*" / "simbench-kernels.sha1"))
    assert open(stamp).read().strip() == digest.hexdigest()
    cache = os.path.dirname(stamp)
    fake = [os.path.join(cache, f"rnea.rnea_span-1.py311.{ext}") for ext in ("nbi", "nbc")]
    for path in fake:
        open(path, "w").close()
    _run(code, NUMBA_CACHE_DIR=str(tmp_path))            # the same sources: the cache is kept
    assert all(os.path.exists(p) for p in fake)
    with open(stamp, "w") as fh:                         # as if a module had changed since
        fh.write("0" * 40 + "\n")
    _run(code, NUMBA_CACHE_DIR=str(tmp_path))
    assert not any(os.path.exists(p) for p in fake)
    assert open(stamp).read().strip() == digest.hexdigest()


def test_block_sines_and_cosines_against_numpy():
    """The vectorised sin q and 1 - cos q of the block kernels (Cephes' reduction and
    polynomials, ``kernels.blocks.sincos_lanes``) against numpy's libm: 2 ulp of sin where
    |sin q| > 1e-3, 2.5e-16 absolute everywhere (sin and 1 - cos), on angles in [-4, 4], at
    multiples of pi/4 and one ulp either side (where the octant changes), up to 1e7, and beyond
    1e7, where a block falls back on math.sin and math.cos (equal bits)."""
    import numpy as np

    from simbench.dynamics.kernels.blocks import sincos_lanes
    from simbench.dynamics.kernels.layout import BS

    rng = np.random.default_rng(3)
    k = np.arange(-40, 41) * np.pi / 4
    sets = {
        "[-4, 4]": rng.uniform(-4, 4, 20 * BS),
        "k pi/4": np.concatenate([k, np.nextafter(k, -np.inf), np.nextafter(k, np.inf)]),
        "[-1e7, 1e7]": rng.uniform(-1e7, 1e7, 20 * BS),
        "beyond 1e7": rng.uniform(1e7, 1e12, 2 * BS) * rng.choice([-1, 1], 2 * BS),
    }
    compared = 0
    SC = np.empty(2 * BS)
    for name, x in sets.items():
        x = np.concatenate([x, np.zeros(-len(x) % BS)])
        for b0 in range(0, len(x), BS):
            q = x[b0:b0 + BS].copy()
            sincos_lanes(q, np.uint64(0), SC)
            s, c = SC[:BS], SC[BS:]
            if name == "beyond 1e7":
                assert np.array_equal(s, np.sin(q)) and np.array_equal(c, 1.0 - np.cos(q)), name
            far = np.abs(np.sin(q)) > 1e-3
            assert np.all(np.abs(s - np.sin(q))[far] <= 2 * np.spacing(np.abs(np.sin(q)))[far]), name
            assert np.abs(s - np.sin(q)).max() <= 2.5e-16, name
            assert np.abs(c - (1.0 - np.cos(q))).max() <= 2.5e-16, name
            compared += BS
    assert compared == (20 + 4 + 20 + 2) * BS
