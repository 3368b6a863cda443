"""The first derivative call switches jax to float64 for the whole process, and says so once.

Oracles: jax's own default dtype (``jnp.ones(2).dtype``) before and after, in a fresh process;
the derivative itself (``dtau/dqdd``) against Pinocchio's ``crba`` matched by joint name.
"""
import os
import subprocess
import sys

import pytest

pytest.importorskip("jax")
pytest.importorskip("pinocchio")

CODE = """
import numpy as np, pybullet_data, os
import jax.numpy as jnp
import pinocchio as pin
import simbench
from simbench.dynamics import inverse_dynamics_derivatives
print(jnp.ones(2).dtype)
m = simbench.RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf", floating_base=False)
pm = pin.buildModelFromUrdf(os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf"))
rng = np.random.default_rng(1)
worst, n = 0.0, 0
for _ in range(3):
    q, v, a = rng.uniform(-1, 1, (3, 7))
    qp = np.zeros(pm.nq)
    for name in m.joint_names:
        qp[pm.joints[pm.getJointId(name)].idx_q] = q[m.joint_index(name)]
    M = pin.crba(pm, pm.createData(), qp)
    M = np.triu(M) + np.triu(M, 1).T
    iv = [pm.joints[pm.getJointId(name)].idx_v for name in m.joint_names]
    dq, dv, da = inverse_dynamics_derivatives(m, q, v, a)
    worst, n = max(worst, abs(da - M[np.ix_(iv, iv)]).max()), n + 1
print(jnp.ones(2).dtype)
print(n, worst < 1e-9, da.dtype)
"""


def _run(x64: bool):
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "OPENBLAS_NUM_THREADS": "1"}
    env.pop("JAX_ENABLE_X64", None)
    if x64:
        env["JAX_ENABLE_X64"] = "1"
    return subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=600)


def _x64_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "jax_enable_x64" in ln]


def test_first_derivative_call_switches_jax_to_float64_with_one_line():
    r = _run(x64=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["float32", "float64", "3", "True", "float64"]
    lines = _x64_lines(r.stderr)
    assert len(lines) == 1, r.stderr
    assert "float64" in lines[0] and "whole process" in lines[0]


def test_no_line_when_the_process_had_x64_on():
    r = _run(x64=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["float64", "float64", "3", "True", "float64"]
    assert _x64_lines(r.stderr) == [], r.stderr
