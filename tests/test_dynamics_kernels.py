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
    assert "simbench.dynamics: compiling simbench dynamics kernel crba_fast once (about" in first
    assert str(tmp_path) in first and "compiled crba_fast in" in first
    second = _run(code, NUMBA_CACHE_DIR=str(tmp_path)).stderr
    assert "compiling" not in second
