"""What a user walkthrough of simbench.dynamics.autodiff found (named to run after the collision
tests, as test_dynamics_autodiff: a process that has loaded jax should not fork).

* ``jax_dynamics(model)`` functions given q, v, a of the wrong length: one ShapeError at trace
  time, also under jit / vmap / grad (they padded or cut and answered wrongly);
* the module-level functions inside ``jax.grad`` / ``jit``: they run on tracers, checked against
  Pinocchio's ``computeRNEADerivatives``;
* ``damping=`` / ``friction=`` of the derivatives: Pinocchio's derivatives plus the closed-form
  damping term, and central differences of the damped numba ``inverse_dynamics`` /
  ``forward_dynamics``.
"""
from __future__ import annotations

import os
import numpy as np
import pytest

from _dyn_helpers import require

pin = require("pinocchio")
jax_ = require("jax")

import simbench.dynamics as dyn  # noqa: E402
import simbench.dynamics.autodiff as ad  # noqa: E402
from simbench.dynamics.autodiff._jax import jax, jnp  # noqa: E402
from simbench.errors import ShapeError, SimbenchError  # noqa: E402
from simbench.model import RobotModel  # noqa: E402
from simbench.paths import resolve_urdf  # noqa: E402

IIWA = "pybullet_data:kuka_iiwa/model.urdf"


@pytest.fixture(scope="module")
def iiwa():
    path = str(resolve_urdf(IIWA))
    model = RobotModel.from_urdf(path)
    pm = pin.buildModelFromUrdf(path)
    assert [pm.names[i] for i in range(1, pm.njoints)] == list(model.joint_names)
    return model, pm, pm.createData()


def test_wrong_lengths_are_one_line_under_jit_vmap_grad(iiwa):
    model, _, _ = iiwa
    jd = ad.jax_dynamics(model)
    q, z, g = model.random_configuration(0), np.zeros(7), np.asarray(model.gravity)
    order = r"with joints in order \['lbr_iiwa_joint_1'"
    cases = [  # (call, message)
        (lambda: jd.inverse_dynamics(q[:6], z, z, g), r"^q has shape \(6,\); expected \(7,\) " + order),
        (lambda: jd.inverse_dynamics(q, np.zeros(5), z, g), r"^v has shape \(5,\); expected \(7,\) "),
        (lambda: jd.inverse_dynamics(q, z, np.zeros(9), g), r"^a has shape \(9,\); expected \(7,\) "),
        (lambda: jd.forward_dynamics(q, z, np.zeros(8), g), r"^tau has shape \(8,\); expected \(7,\) "),
        (lambda: jd.inverse_dynamics(q, z, z, g[:2]), r"^g has shape \(2,\); expected \(3,\) with gravity"),
        (lambda: jd.mass_matrix(q[:5]), r"^q has shape \(5,\); expected \(7,\) " + order),
        (lambda: jd.coriolis_matrix(q, z[:6]), r"^v has shape \(6,\)"),
        (lambda: jd.inverse_dynamics_derivatives(q[:6], z, z, g), r"^q has shape \(6,\)"),
        (lambda: jax.jit(jd.inverse_dynamics)(q[:6], z, z, g), r"^q has shape \(6,\)"),
        (lambda: jax.vmap(jd.mass_matrix)(np.zeros((3, 5))), r"^q has shape \(5,\)"),
        (lambda: jax.grad(lambda x: jd.inverse_dynamics(x, z, z, g).sum())(q[:6]), r"^q has shape \(6,\)"),
        (lambda: jd.inverse_dynamics(np.zeros((2, 7)), z, z, g), r"jax.vmap it for a batch"),
    ]
    for call, message in cases:
        with pytest.raises(ShapeError, match=message) as err:
            call()
        assert "\n" not in str(err.value)
    assert len(cases) == 12


def test_module_functions_take_tracers_against_pinocchio(iiwa):
    """jax.grad of w . tau(q) through ad.inverse_dynamics (once raising 'a jax tracer; for
    jax.grad use simbench.dynamics.autodiff') equals dtau_dq^T w from Pinocchio; jit of
    ad.mass_matrix over a batch equals pin.crba."""
    model, pm, pd = iiwa
    rng = np.random.default_rng(4)
    n = 0
    for _ in range(3):
        q, v, a, w = model.random_configuration(rng), *rng.normal(size=(3, 7))
        grad = jax.grad(lambda x: jnp.dot(w, ad.inverse_dynamics(model, x, v, a)))(jnp.asarray(q))
        want = pin.computeRNEADerivatives(pm, pd, q, v, a)[0].T @ w
        assert np.abs(np.asarray(grad) - want).max() < 1e-9 * np.abs(want).max()
        n += 1
    Q = model.random_configuration(rng, 4)
    M = np.asarray(jax.jit(lambda x: ad.mass_matrix(model, x))(jnp.asarray(Q)))
    for k in range(4):
        want = pin.crba(pm, pd, Q[k])
        want = np.triu(want) + np.triu(want, 1).T
        assert np.abs(M[k] - want).max() < 1e-9 * np.abs(want).max()
        n += 1
    with pytest.raises(ShapeError, match=r"q has shape \(6,\); expected \(\.\.\., 7\)"):
        jax.grad(lambda x: ad.inverse_dynamics(model, x, v, a).sum())(jnp.asarray(q[:6]))
    with pytest.raises(SimbenchError, match="f_ext with jax-traced inputs"):
        jax.grad(lambda x: ad.inverse_dynamics(model, x, v, a, f_ext={"lbr_iiwa_link_7": np.ones(6)}).sum())(q)
    assert n == 7


def _central(f, x, h=1e-6):
    cols = []
    for i in range(x.shape[0]):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


def test_damping_and_friction_derivatives(iiwa):
    """``damping=True, friction=True``: against Pinocchio plus D (ID) / -M^-1 D (FD), and
    central differences of the damped numba dynamics (velocities away from 0, where the
    friction sign is constant)."""
    model, pm, pd = iiwa
    rng = np.random.default_rng(5)
    lossy = model.replace(joint_damping=rng.uniform(0.1, 2.0, 7), joint_friction=rng.uniform(0.1, 1.0, 7))
    D = np.asarray(lossy.joint_damping)
    kw = dict(damping=True, friction=True)
    n = err_pin = err_fd = 0.0
    for _ in range(3):
        q, a, tau = model.random_configuration(rng), *rng.normal(size=(2, 7))
        v = rng.choice([-1, 1], 7) * rng.uniform(0.3, 2.0, 7)
        dq, dv, da = ad.inverse_dynamics_derivatives(lossy, q, v, a, **kw)
        want = pin.computeRNEADerivatives(pm, pd, q, v, a)
        Mp = np.triu(want[2]) + np.triu(want[2], 1).T
        for ours, ref in ((dq, want[0]), (dv, want[1] + np.diag(D)), (da, Mp)):
            err_pin = max(err_pin, np.abs(ours - ref).max() / np.abs(ref).max())
            n += 1
        fq, fv, ft = ad.forward_dynamics_derivatives(lossy, q, v, tau, **kw)
        loss = D * v + np.asarray(lossy.joint_friction) * np.sign(v)
        want = pin.computeABADerivatives(pm, pd, q, v, tau - loss)
        Minv = np.triu(want[2]) + np.triu(want[2], 1).T
        for ours, ref in ((fq, want[0]), (fv, want[1] - Minv @ np.diag(D)), (ft, Minv)):
            err_pin = max(err_pin, np.abs(ours - ref).max() / np.abs(ref).max())
            n += 1
        # central differences of the numba functions with the same flags
        fd_v = _central(lambda x: dyn.inverse_dynamics(lossy, q, x, a, **kw), v)
        fd_q = _central(lambda x: dyn.inverse_dynamics(lossy, x, v, a, **kw), q)
        ff_v = _central(lambda x: dyn.forward_dynamics(lossy, q, x, tau, **kw), v)
        ff_q = _central(lambda x: dyn.forward_dynamics(lossy, x, v, tau, **kw), q)
        for ours, ref in ((dv, fd_v), (dq, fd_q), (fv, ff_v), (fq, ff_q)):
            err_fd = max(err_fd, np.abs(ours - ref).max() / np.abs(ref).max())
            n += 1
    print(f"{int(n)} comparisons, max error {err_pin:.1e} against Pinocchio, {err_fd:.1e} against central differences")
    assert err_pin < 1e-9, err_pin
    assert err_fd < 1e-6, err_fd
    assert n == 30
    # without the flags: Pinocchio's undamped derivatives (the default is unchanged)
    assert np.abs(ad.inverse_dynamics_derivatives(lossy, q, v, a)[1] - pin.computeRNEADerivatives(
        pm, pd, q, v, a)[1]).max() < 1e-9 * 100
    with pytest.raises(SimbenchError, match=r"^damping = 'yes'; expected True or False"):
        ad.inverse_dynamics_derivatives(lossy, q, v, a, damping="yes")


def test_the_dynamics_modules_derivatives_take_damping_too(iiwa):
    """``simbench.dynamics.inverse_dynamics_derivatives(..., damping=True)`` (the names the
    README shows) raised TypeError while the autodiff module's took it: dtau/dqd gains diag(D)
    over Pinocchio's undamped derivative, dqdd/dqd gains -M^-1 D."""
    model, pm, pd = iiwa
    rng = np.random.default_rng(8)
    lossy = model.replace(joint_damping=rng.uniform(0.1, 2.0, 7))
    D = np.diag(lossy.joint_damping)
    q, v, a = model.random_configuration(rng), rng.normal(size=7), rng.normal(size=7)
    _, dv, _ = dyn.inverse_dynamics_derivatives(lossy, q, v, a, damping=True)
    assert np.abs(dv - (pin.computeRNEADerivatives(pm, pd, q, v, a)[1] + D)).max() < 1e-9
    _, fv, ft = dyn.forward_dynamics_derivatives(lossy, q, v, a, damping=True)
    want = pin.computeABADerivatives(pm, pd, q, v, a - lossy.joint_damping * v)
    Minv = np.triu(want[2]) + np.triu(want[2], 1).T
    assert np.abs(fv - (want[1] - Minv @ D)).max() < 1e-9 and np.abs(ft - Minv).max() < 1e-9


def test_compiled_derivatives_are_kept_between_runs(tmp_path):
    """jax compiled the derivatives again in every new process (3-14 s each run, walkthrough R):
    simbench's autodiff turns on jax's persistent compilation cache in the user's cache folder,
    unless the user chose one, set SIMBENCH_JAX_CACHE=0 or imported jax first. Oracle: jax's own config and the
    files jax writes there."""
    import subprocess
    import sys

    code = ("import numpy as np\n"   # jax not imported before simbench's autodiff: a jax user's is left alone
            "from simbench.model import RobotModel\n"
            "from simbench.dynamics import inverse_dynamics_derivatives\n"
            "m = RobotModel.from_urdf('simbench:planar_2r.urdf')\n"
            "inverse_dynamics_derivatives(m, np.zeros(2), np.zeros(2), np.zeros(2))\n"
            "import jax\n"
            "print(jax.config.values.get('jax_compilation_cache_dir'))\n")

    def run(**env):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), **env})
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip().splitlines()[-1]

    folder = tmp_path / "cache" / "simbench" / "jax"
    assert run() == str(folder) and any(folder.iterdir())       # compilations over 1 s are kept
    assert run(SIMBENCH_JAX_CACHE="0") == "None"
    mine = tmp_path / "mine"
    assert run(JAX_COMPILATION_CACHE_DIR=str(mine)) == str(mine)   # the user's choice stands
