"""simbench.dynamics.autodiff (jax) against its oracles (named to run after test_collision*: a
process that has loaded jax should not fork, and the collision workers fork).

* Adam Heins's closed forms for his planar mobile manipulator ("Lagrangian dynamics of a planar
  mobile manipulator with manual, automatic and symbolic differentiation"): the post's
  ManualDynamics, as transcribed in ``test_dynamics_closed_form.heins_manual_dynamics``;
* Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives``, ``crba``,
  ``computeGeneralizedGravity``, ``rnea`` on every ``pybullet_data`` robot with a movable joint
  that both load, with the base fixed and floating (joints matched by name);
* central finite differences of simbench's numba dynamics (moving q along ``integrate``), where
  Pinocchio cannot load the file (spherical joints);
* subprocesses for what importing does (no jax without the extra, one line when it is missing).

Tolerance 1e-9 relative to the largest magnitude of the compared quantity (forward dynamics:
times sqrt(cond M), as ``test_dynamics_pinocchio``).
"""
from __future__ import annotations

import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

from _dyn_helpers import asset, movable_corpus, rel_err
from test_dynamics_closed_form import PG, heins_manual_dynamics

import pinocchio as pin
import simbench.dynamics as dyn
import simbench.dynamics.autodiff as ad
from simbench.dynamics.configuration import integrate
from simbench.errors import ShapeError, SimbenchError
from simbench.model import RobotModel
from simbench.paths import resolve_urdf

TOL = 1e-9
#: pybullet_data files with a movable joint that simbench and Pinocchio both load
CORPUS_SIZE = 38


# ---------------------------------------------------------------------- Pinocchio by joint name
class PinMap:
    """Our q / v order <-> a Pinocchio model built from the same URDF (free-flyer first when
    floating; continuous joints are (cos, sin) in Pinocchio's q)."""

    def __init__(self, model: RobotModel, pm):
        self.model, self.pm = model, pm
        self.joints = []            # (our q index, pin q index, pin nq)
        cols = []                   # pin v index of each of our v entries
        if model.floating_base:
            assert pm.joints[1].shortname() == "JointModelFreeFlyer"
            self.joints += [(i, i, 1) for i in range(7)]
            cols += list(range(6))
        for name in model.joint_names:
            assert pm.getJointId(name) < pm.njoints, f"Pinocchio has no joint {name!r}"
            j = pm.joints[pm.getJointId(name)]
            assert j.nv == 1, (name, j.shortname())
            self.joints.append((model.joint_q_start[model.joint_all_names.index(name)], j.idx_q, j.nq))
            cols.append(j.idx_v)
        assert pm.nv == model.nv
        self.P = np.zeros((pm.nv, model.nv))     # v_pin = P v
        self.P[cols, np.arange(model.nv)] = 1.0

    def q(self, q):
        out = np.zeros(self.pm.nq)
        for i, iq, nq in self.joints:
            out[iq:iq + nq] = (np.cos(q[i]), np.sin(q[i])) if nq == 2 else q[i]
        return out

    def v(self, v):
        return self.P @ v

    def back(self, x):
        return self.P.T @ x

    def mat(self, X, upper=False):
        X = np.asarray(X)
        if upper:   # Pinocchio fills the upper triangle of M and M^-1
            X = np.triu(X) + np.triu(X, 1).T
        return self.P.T @ X @ self.P


def _pair(path, floating=False):
    path = str(resolve_urdf(path))
    model = RobotModel.from_urdf(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else \
        pin.buildModelFromUrdf(path)
    return model, pm, PinMap(model, pm)


def _both_load(path):
    try:
        RobotModel.from_urdf(path)
        pin.buildModelFromUrdf(path)
    except Exception:   # simbench's URDFError, or Pinocchio's urdfdom being stricter
        return False
    return True


def _against_pinocchio(path, floating, n=3):
    """Derivatives of ID and FD for n random states against Pinocchio; the number of states
    where forward dynamics was compared (M well conditioned)."""
    model, pm, mp = _pair(path, floating)
    pd = pm.createData()
    rng = np.random.default_rng(zlib.crc32(path.encode()))
    Q = model.random_configuration(rng, n)
    V, A, T = (rng.normal(size=(n, model.nv)) for _ in range(3))
    did = ad.inverse_dynamics_derivatives(model, Q, V, A)      # batched
    for s in range(n):
        want = pin.computeRNEADerivatives(pm, pd, mp.q(Q[s]), mp.v(V[s]), mp.v(A[s]))
        _close([x[s] for x in did], [mp.mat(x, upper=k == 2) for k, x in enumerate(want)], TOL, path)
    # forward dynamics where M is well conditioned (massless moving links make it singular)
    w = np.linalg.eigvalsh(did[2])
    ok = np.flatnonzero(w[:, 0] > 1e-7 * w[:, -1])
    if ok.size == 0:
        return 0
    dfd = ad.forward_dynamics_derivatives(model, Q[ok], V[ok], T[ok])
    for i, s in enumerate(ok):
        want = pin.computeABADerivatives(pm, pd, mp.q(Q[s]), mp.v(V[s]), mp.v(T[s]))
        _close([x[i] for x in dfd], [mp.mat(x, upper=k == 2) for k, x in enumerate(want)],
               TOL * (w[s, -1] / w[s, 0]) ** 0.5, path)
    return ok.size


def _close(ours, want, tol, what):
    """Each of the three derivatives within ``tol`` relative to the largest entry of the three
    (one of them, d tau/dq of a robot without gravity torques, can be all zeros)."""
    scale = max(np.abs(x).max() for x in want)
    for k, (a, b) in enumerate(zip(ours, want)):
        err = np.abs(a - b).max() / scale
        assert err < tol, (what, k, err)


# ---------------------------------------------------------------------- the post's robot
@pytest.fixture(scope="module")
def mobile():
    return RobotModel.from_urdf(asset("mobile_manipulator.urdf"))


def test_mobile_manipulator_closed_forms_of_the_post(mobile):
    """M, the Christoffel array, C, g and tau of the post's ManualDynamics, by jax."""
    grav = (0.0, 0.0, -PG)
    rng = np.random.default_rng(4)
    Q = np.c_[rng.uniform(-2, 2, 8), rng.uniform(-np.pi, np.pi, (8, 2))]
    DQ, DDQ = rng.normal(size=(8, 3)), rng.normal(size=(8, 3))
    M_b, G_b = ad.mass_matrix(mobile, Q), ad.christoffel_matrix(mobile, Q)
    for s in range(8):
        M, C, g, dMdq = heins_manual_dynamics(Q[s], DQ[s])
        tau = M @ DDQ[s] + C @ DQ[s] + g
        assert rel_err(M_b[s], M) < 1e-12
        assert rel_err(ad.mass_matrix(mobile, Q[s]), M) < 1e-12
        # the array the post's code builds (dMdq[k] = dM/dq_k): Gamma = dMdq.T - 0.5 dMdq
        assert rel_err(G_b[s], dMdq.T - 0.5 * dMdq) < 1e-12
        assert rel_err(ad.coriolis_matrix(mobile, Q[s], DQ[s]) @ DQ[s], C @ DQ[s]) < 1e-12
        assert rel_err(ad.gravity_torques(mobile, Q[s], gravity=grav), g) < 1e-12
        lag = ad.lagrangian_inverse_dynamics(mobile, Q[s], DQ[s], DDQ[s], gravity=grav)
        assert rel_err(lag, tau) < 1e-12
        assert rel_err(ad.inverse_dynamics(mobile, Q[s], DQ[s], DDQ[s], gravity=grav), tau) < 1e-12
        assert rel_err(ad.forward_dynamics(mobile, Q[s], DQ[s], tau, gravity=grav), DDQ[s]) < 1e-10


def test_coriolis_matrix_is_the_same_matrix_as_the_numeric_and_pinocchios():
    """``autodiff.coriolis_matrix`` and ``dynamics.coriolis_matrix``: one name, one matrix (the
    jax one was the post's C, whose ``M' - 2C`` is not skew: 0.013 apart on a user's arm).
    Oracle: Pinocchio's computeCoriolisMatrix (joints matched by name), and M' - 2C skew with
    M' from finite differences of Pinocchio's crba; 3 robots x 5 states."""
    from simbench.oracles.pinocchio import PinocchioMap, symmetric, urdf_model

    compared = 0
    for name in ("kuka_iiwa/model.urdf", "franka_panda/panda.urdf", "TwoJointRobot_wo_fixedJoints.urdf"):
        model = RobotModel.from_urdf(f"pybullet_data:{name}")
        pm = urdf_model(model)
        pmap, data = PinocchioMap(model, pm), pm.createData()
        rng = np.random.default_rng(11)
        for _ in range(5):
            q = model.random_configuration(rng)
            qd = rng.normal(size=model.nv)
            C = ad.coriolis_matrix(model, q, qd)
            ref = pmap.back_matrix(np.array(pin.computeCoriolisMatrix(pm, data, pmap.q(q), pmap.v(qd))))
            assert rel_err(C, ref) < 1e-10, name
            assert rel_err(C, dyn.coriolis_matrix(model, q, qd)) < 1e-10, name
            h = 1e-6
            Mdot = (symmetric(pin.crba(pm, data, pmap.q(q + h * qd)).copy())
                    - symmetric(pin.crba(pm, data, pmap.q(q - h * qd)).copy())) / (2 * h)
            S = pmap.back_matrix(Mdot) - 2 * C
            assert np.abs(S + S.T).max() < 1e-6 * max(1.0, np.abs(C).max()), name
            compared += 1
    assert compared == 15


def test_christoffel_index_convention_of_the_post(mobile):
    """The post's text prints Gamma_ijk = dM_ik/dq_j - 1/2 dM_ij/dq_k; contracted as the post
    does (C_ik = sum_j Gamma_ijk q'_j) that gives a wrong C q', while the array of its code (ours)
    gives the closed form's. The convention matters: this pins it."""
    q, dq = np.array([0.3, 0.7, -1.1]), np.array([0.5, -1.2, 0.8])
    M, C, g, dMdq = heins_manual_dynamics(q, dq)
    D = np.einsum("kij->ijk", dMdq)                     # D[i, j, k] = dM_ij/dq_k
    text = np.einsum("ikj->ijk", D) - 0.5 * D
    ours = ad.christoffel_matrix(mobile, q)
    assert rel_err(np.einsum("j,ijk->ik", dq, ours) @ dq, C @ dq) < 1e-12
    assert rel_err(np.einsum("j,ijk->ik", dq, text) @ dq, C @ dq) > 0.1


# ---------------------------------------------------------------------- Pinocchio, every robot
def test_derivatives_against_pinocchio_on_the_corpus():
    files = [f for f in movable_corpus() if _both_load(f)]
    assert len(files) == CORPUS_SIZE, [os.path.basename(f) for f in files]
    fd = sum(_against_pinocchio(f, floating=False) for f in files)
    assert fd >= 2 * CORPUS_SIZE, fd     # forward dynamics compared where M is well conditioned


def test_floating_base_derivatives_against_pinocchio_on_the_corpus():
    files = [f for f in movable_corpus() if _both_load(f)]
    assert len(files) == CORPUS_SIZE
    fd = sum(_against_pinocchio(f, floating=True) for f in files)
    assert fd >= 2 * CORPUS_SIZE, fd


def test_gravity_argument_and_model_gravity_against_pinocchio():
    model, pm, mp = _pair("pybullet_data:kuka_iiwa/model.urdf")
    pd = pm.createData()
    rng = np.random.default_rng(7)
    Q, V, A = model.random_configuration(rng, 2), *rng.normal(size=(2, 2, 7))
    g = np.array([1.5, -2.0, -7.0])
    pm.gravity.linear = g
    for got in (ad.inverse_dynamics_derivatives(model, Q, V, A, gravity=g),
                ad.inverse_dynamics_derivatives(model.replace(gravity=tuple(g)), Q, V, A)):
        want = pin.computeRNEADerivatives(pm, pd, mp.q(Q[1]), mp.v(V[1]), mp.v(A[1]))
        assert rel_err(got[0][1], mp.mat(want[0])) < TOL
    got = ad.forward_dynamics_derivatives(model, Q, V, A, gravity=tuple(g))
    want = pin.computeABADerivatives(pm, pd, mp.q(Q[1]), mp.v(V[1]), mp.v(A[1]))
    assert rel_err(got[0][1], mp.mat(want[0])) < TOL
    tau = pin.rnea(pm, pd, mp.q(Q[1]), mp.v(V[1]), mp.v(A[1]))
    assert rel_err(ad.inverse_dynamics(model, Q, V, A, gravity=g)[1], mp.back(tau)) < TOL


@pytest.mark.parametrize("name", ["kuka_iiwa/model.urdf", "laikago/laikago_toes_zup.urdf"])
def test_lagrangian_terms_against_pinocchio(name):
    """The post's formulation on a chain and a tree, through its tau = M q'' + C q' + g alone
    (one compilation): M from unit accelerations, g from rest, C q' without gravity."""
    model, pm, mp = _pair("pybullet_data:" + name)
    pd = pm.createData()
    n = model.nv
    rng = np.random.default_rng(3)
    q, v, a = model.random_configuration(rng), *rng.normal(size=(2, n))
    qp, vp, ap = mp.q(q), mp.v(v), mp.v(a)
    tau = ad.lagrangian_inverse_dynamics
    zero = np.zeros(n)
    assert rel_err(tau(model, q, zero, np.eye(n), gravity=(0, 0, 0)),
                   mp.mat(pin.crba(pm, pd, qp), upper=True)) < TOL              # rows of M
    assert rel_err(tau(model, q, zero, zero), mp.back(pin.computeGeneralizedGravity(pm, pd, qp))) < TOL
    assert rel_err(tau(model, q, v, a), mp.back(pin.rnea(pm, pd, qp, vp, ap))) < TOL
    pm.gravity.linear = np.zeros(3)
    assert rel_err(tau(model, q, v, zero, gravity=[0, 0, 0]),
                   mp.back(pin.rnea(pm, pd, qp, vp, 0 * vp))) < TOL             # C q'


def test_floating_base_mass_matrix_and_gravity_against_pinocchio():
    """M = sum J^T G J and g = dP/dq by jacfwd along the tangent space of the free-flyer."""
    model, pm, mp = _pair("pybullet_data:kuka_iiwa/model.urdf", floating=True)
    pd = pm.createData()
    Q = model.random_configuration(np.random.default_rng(8), 2)
    M, g = ad.mass_matrix(model, Q), ad.gravity_torques(model, Q)
    for s in range(2):
        assert rel_err(M[s], mp.mat(pin.crba(pm, pd, mp.q(Q[s])), upper=True)) < TOL
        assert rel_err(g[s], mp.back(pin.computeGeneralizedGravity(pm, pd, mp.q(Q[s])))) < TOL


# ---------------------------------------------------------------------- finite differences
def _central(f, x, h):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))], axis=-1)


@pytest.mark.parametrize("path, floating", [
    (asset("defects/spherical_joint.urdf"), False),
    ("pybullet_data:humanoid/humanoid.urdf", True),
    ("pybullet_data:kuka_iiwa/model.urdf", True),
    (asset("mobile_manipulator.urdf"), False)])
def test_derivatives_against_finite_differences_of_numba(path, floating):
    """d tau and d qdd by central differences of simbench.dynamics (numba), q moved along
    integrate(q, dq): the tangent-space derivative, also for quaternions (spherical joints).
    Two states in one batched call."""
    model = RobotModel.from_urdf(path, floating_base=floating)
    rng = np.random.default_rng(11)
    Q = model.random_configuration(rng, 2)
    V, A, T = rng.normal(size=(3, 2, model.nv))
    z, h = np.zeros(model.nv), 1e-6
    got_id = ad.inverse_dynamics_derivatives(model, Q, V, A)
    got_fd = ad.forward_dynamics_derivatives(model, Q, V, T)
    for s in range(2):
        q, v, a, tau = Q[s], V[s], A[s], T[s]
        tau_of = [lambda d: dyn.inverse_dynamics(model, integrate(model, q, d), v, a),
                  lambda x: dyn.inverse_dynamics(model, q, x, a),
                  lambda x: dyn.inverse_dynamics(model, q, v, x)]
        for f, x, ours in zip(tau_of, (z, v, a), got_id):
            assert rel_err(ours[s], _central(f, x, h)) < 1e-6
        qdd_of = [lambda d: dyn.forward_dynamics(model, integrate(model, q, d), v, tau),
                  lambda x: dyn.forward_dynamics(model, q, x, tau),
                  lambda x: dyn.forward_dynamics(model, q, v, x)]
        for f, x, ours in zip(qdd_of, (z, v, tau), got_fd):
            assert rel_err(ours[s], _central(f, x, h)) < 1e-5
        assert rel_err(got_fd[2][s], np.linalg.inv(dyn.mass_matrix(model, q))) < 1e-9


# ---------------------------------------------------------------------- the public API
def test_batches_broadcast_and_blocks_against_numba():
    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    rng = np.random.default_rng(5)
    Q = model.random_configuration(rng, 40).reshape(2, 20, model.nq)   # 40 rows: a block of 128
    v = rng.normal(size=model.nv)                                        # broadcast
    A = rng.normal(size=(2, 20, model.nv))
    tau = ad.inverse_dynamics(model, Q, v, A)
    assert tau.shape == (2, 20, model.nv) and tau.flags.writeable
    assert rel_err(tau, dyn.inverse_dynamics(model, Q, v, A)) < TOL
    d = ad.inverse_dynamics_derivatives(model, Q[:, :3], v, A[:, :3])   # 6 rows: a block of 16
    assert [x.shape for x in d] == [(2, 3, 7, 7)] * 3
    assert rel_err(d[2], dyn.mass_matrix(model, Q[:, :3])) < TOL       # d tau / d qdd = M
    one = ad.inverse_dynamics_derivatives(model, Q[1, 2], v, A[1, 2])   # a block of 1
    assert all(rel_err(x[1, 2], y) < 1e-13 for x, y in zip(d, one))
    f = ad.forward_dynamics_derivatives(model, Q[:, :3], v, tau[:, :3])
    assert rel_err(f[2], np.linalg.inv(dyn.mass_matrix(model, Q[:, :3]))) < 1e-8   # M^-1
    empty = ad.inverse_dynamics_derivatives(model, np.zeros((0, 7)), np.zeros((0, 7)), np.zeros((0, 7)))
    assert [x.shape for x in empty] == [(0, 7, 7)] * 3


def test_public_names_in_simbench_dynamics():
    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    q, v, a = model.neutral() + 0.2, np.ones(7), np.ones(7)
    ours = dyn.inverse_dynamics_derivatives(model, q, v, a)
    assert rel_err(ours[2], dyn.mass_matrix(model, q)) < TOL
    dqdd_dq, dqdd_dqd, dqdd_dtau = dyn.forward_dynamics_derivatives(model, q, v, a)
    assert rel_err(dqdd_dtau, np.linalg.inv(dyn.mass_matrix(model, q))) < 1e-10
    assert {"inverse_dynamics_derivatives", "forward_dynamics_derivatives"} <= set(dyn.__all__)


def test_jax_functions_compose_with_grad_and_vmap():
    """jax.grad of w . tau(q) is dtau_dq^T w (Pinocchio's, revolute joints: tangent = q)."""
    from simbench.dynamics.autodiff._jax import jax, jnp

    model, pm, mp = _pair("pybullet_data:kuka_iiwa/model.urdf")
    pd = pm.createData()
    J = ad.jax_dynamics(model)
    rng = np.random.default_rng(2)
    q, v, a, w = model.random_configuration(rng), *rng.normal(size=(3, 7))
    g = jnp.asarray(model.gravity)
    grad = jax.grad(lambda x: jnp.dot(w, J.inverse_dynamics(x, v, a, g)))(jnp.asarray(q))
    dtau_dq = pin.computeRNEADerivatives(pm, pd, mp.q(q), v, a)[0]
    assert rel_err(np.asarray(grad), dtau_dq.T @ w) < TOL
    Q = model.random_configuration(rng, 4)
    taus = jax.vmap(J.inverse_dynamics, in_axes=(0, None, None, None))(jnp.asarray(Q), v, a, g)
    assert rel_err(np.asarray(taus), [pin.rnea(pm, pd, x, v, a) for x in Q]) < TOL


def test_bad_input_one_clear_line():
    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    with pytest.raises(ShapeError, match=r"q has shape \(6,\); expected \(\.\.\., 7\)"):
        ad.inverse_dynamics_derivatives(model, np.zeros(6), np.zeros(7), np.zeros(7))
    floating = model.with_floating_base()
    with pytest.raises(SimbenchError, match="minimal coordinates") as err:
        ad.christoffel_matrix(floating, floating.neutral())
    assert "\n" not in str(err.value)
    light = model.with_link_inertial("lbr_iiwa_link_7", mass=0.0, inertia=np.zeros((3, 3)))
    with pytest.raises(SimbenchError, match="singular .*massless links: .'lbr_iiwa_link_7'.") as err:
        ad.forward_dynamics(light, light.neutral(), np.zeros(7), np.zeros(7))
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------------- importing
def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"}, timeout=300)


def test_importing_simbench_dynamics_does_not_import_jax():
    r = _run("import sys, numpy as np, simbench, simbench.dynamics as d\n"
             "m = simbench.RobotModel.from_urdf('pybullet_data:kuka_iiwa/model.urdf')\n"
             "d.inverse_dynamics(m, np.zeros(7), np.zeros(7), np.zeros(7))\n"
             "print(sorted(k for k in sys.modules if k == 'jax' or k.startswith('jax.')))\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_missing_jax_is_one_line_naming_the_extra():
    r = _run("import sys; sys.modules['jax'] = None\n"
             "import simbench.dynamics as d, simbench\n"
             "m = simbench.RobotModel.from_urdf('pybullet_data:kuka_iiwa/model.urdf')\n"
             "try:\n"
             "    d.inverse_dynamics_derivatives(m, [0] * 7, [0] * 7, [0] * 7)\n"
             "except ImportError as e:\n"
             "    print(type(e).__name__, isinstance(e, simbench.SimbenchError)); print(e)\n")
    assert r.returncode == 0, r.stderr
    kind, message = r.stdout.strip().split("\n")
    assert kind == "MissingExtraError True"
    assert "'autodiff' extra" in message and "pip install 'simbench[autodiff]'" in message
