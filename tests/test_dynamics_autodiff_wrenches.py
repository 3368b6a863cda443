"""Derivatives of the dynamics with external wrenches (``f_ext``), against Pinocchio.

simbench's ``f_ext`` is a wrench [torque, force] fixed in the world, acting about the link's
origin, which moves with the link. Pinocchio's ``rnea(..., fext)`` takes wrenches in the joints'
local frames, so the oracle turns the world wrench into the joint frame at every configuration
(``R_j^T f``, ``R_j^T (n + (p_link - p_joint) x f)``, from Pinocchio's own placements) and
differentiates by central differences along ``pin.integrate`` (the tangent space). dtau/dv and
M do not depend on the wrench; dtau/dq does (by -J(q)^T w). A walkthrough found no ``f_ext``
on the derivative functions, which Pinocchio's have.
"""
from __future__ import annotations

import numpy as np
import pytest

from _dyn_helpers import rel_err, require

pin = require("pinocchio")
require("jax")

import simbench.dynamics as dyn  # noqa: E402
from simbench.model import RobotModel  # noqa: E402
from simbench.oracles.pinocchio import PinocchioMap  # noqa: E402
from simbench.paths import resolve_urdf  # noqa: E402

CASES = {   # robot, floating, the links pushed
    "iiwa": ("pybullet_data:kuka_iiwa/model.urdf", False, ("lbr_iiwa_link_7", "lbr_iiwa_link_4")),
    "a1": ("pybullet_data:a1/a1.urdf", True, ("FR_lower", "trunk", "imu_link")),   # imu_link: a fixed link
}


def _pinocchio_tau(pm, pd, links, wrenches, q, v, a, fd=False):
    """pin.rnea (or pin.aba when ``fd``, a = tau) with the world wrenches on ``links`` about their
    origins, turned into the joints' local frames at q."""
    pin.forwardKinematics(pm, pd, q)
    pin.updateFramePlacements(pm, pd)
    fext = [pin.Force.Zero() for _ in range(pm.njoints)]
    for link, w in zip(links, wrenches):
        frame = pm.frames[pm.getFrameId(link)]
        oMj, p_link = pd.oMi[frame.parentJoint], pd.oMf[pm.getFrameId(link)].translation
        n = w[:3] + np.cross(p_link - oMj.translation, w[3:])
        fext[frame.parentJoint] += pin.Force(oMj.rotation.T @ w[3:], oMj.rotation.T @ n)
    return (pin.aba if fd else pin.rnea)(pm, pd, q, v, a, fext)


@pytest.mark.parametrize("name", list(CASES))
def test_derivatives_with_wrenches_against_pinocchios_finite_differences(name):
    path, floating, links = CASES[name]
    model = RobotModel.from_urdf(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(str(resolve_urdf(path)), *([pin.JointModelFreeFlyer()] if floating else []))
    pd, mp = pm.createData(), PinocchioMap(RobotModel.from_urdf(path, floating_base=floating), pm)
    rng = np.random.default_rng(5)
    Q = model.random_configuration(rng, 2)
    V, A, T = rng.normal(size=(3, 2, model.nv))
    W = rng.normal(size=(len(links), 2, 6)) * [1, 1, 1, 20, 20, 20]
    f_ext = {link: W[i] for i, link in enumerate(links)}
    got_id = dyn.inverse_dynamics_derivatives(model, Q, V, A, f_ext=f_ext)
    got_fd = dyn.forward_dynamics_derivatives(model, Q, V, T, f_ext=f_ext)
    plain = dyn.inverse_dynamics_derivatives(model, Q, V, A)
    h, compared = 1e-6, 0
    for s in range(2):
        qp, vp, ap, tp = mp.q(Q[s]), mp.v(V[s]), mp.v(A[s]), mp.v(T[s])
        ws = W[:, s]
        for k, (ours_id, ours_fd) in enumerate(zip(got_id, got_fd)):
            if k == 0:    # d/dq along pin.integrate, each of our tangent directions
                def move(f, d):
                    return f(pin.integrate(pm, qp, mp.v(d)), vp)
            elif k == 1:
                def move(f, d):
                    return f(qp, vp + mp.v(d))
            else:
                def move(f, d):
                    return f(qp, vp, extra=mp.v(d))
            tau = lambda q_, v_, extra=0.0: _pinocchio_tau(pm, pd, links, ws, q_, v_, ap + extra)  # noqa: E731
            acc = lambda q_, v_, extra=0.0: _pinocchio_tau(pm, pd, links, ws, q_, v_, tp + extra, fd=True)  # noqa: E731
            for f, ours, tol in ((tau, ours_id, 1e-6), (acc, ours_fd, 1e-5)):
                cols = [(move(f, h * e) - move(f, -h * e)) / (2 * h) for e in np.eye(model.nv)]
                want = np.stack([mp.back(c) for c in cols], axis=-1)   # rows in our order
                assert rel_err(ours[s], want) < tol, (name, k, rel_err(ours[s], want))
                compared += 1
        # the wrenches matter to d/dq only
        assert rel_err(got_id[0][s], plain[0][s]) > 1e-3
        np.testing.assert_allclose(got_id[1][s], plain[1][s], atol=1e-12)
        np.testing.assert_allclose(got_id[2][s], plain[2][s], atol=1e-12)
    assert compared == 2 * 3 * 2


def test_wrenches_on_a_mounted_model_are_in_the_world():
    """sim.model of a wall-mounted iiwa (root_pose: roll 90 degrees): its derivatives with a world
    wrench equal those of the same robot upright with the wrench turned into the base frame,
    and central differences of simbench's own inverse_dynamics (numba) with the world wrench."""
    import simbench
    from simbench.dynamics.configuration import integrate

    scene = {"body": [{"name": "arm", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "fixed_base": True,
                       "position": [0, 0, 1], "orientation": [np.pi / 2, 0, 0]}]}
    with simbench.Simulation(scene, gui=False) as sim:
        model = sim.model
    R = model.root_pose[:3, :3]
    rng = np.random.default_rng(8)
    q, v, a = model.random_configuration(rng), rng.normal(size=7), rng.normal(size=7)
    w = np.r_[rng.normal(size=3), 30 * rng.normal(size=3)]
    got = dyn.inverse_dynamics_derivatives(model, q, v, a, f_ext={"lbr_iiwa_link_6": w})
    upright = model.replace(root_pose=None, gravity=model.gravity)   # the same robot, unplaced
    turned = dyn.inverse_dynamics_derivatives(upright, q, v, a, f_ext={"lbr_iiwa_link_6": np.r_[R.T @ w[:3], R.T @ w[3:]]})
    for x, y in zip(got, turned):
        np.testing.assert_allclose(x, y, atol=1e-10)
    h = 1e-6
    fd = np.stack([(dyn.inverse_dynamics(model, integrate(model, q, h * e), v, a, f_ext={"lbr_iiwa_link_6": w})
                    - dyn.inverse_dynamics(model, integrate(model, q, -h * e), v, a, f_ext={"lbr_iiwa_link_6": w}))
                   / (2 * h) for e in np.eye(7)], axis=-1)
    assert rel_err(got[0], fd) < 1e-6


def test_bad_wrenches_are_one_line():
    from simbench.errors import ShapeError, UnknownNameError

    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    z = np.zeros(7)
    with pytest.raises(UnknownNameError, match="unknown link 'lbr_iiwa_link_9'.*did you mean 'lbr_iiwa_link_7'"):
        dyn.inverse_dynamics_derivatives(model, z, z, z, f_ext={"lbr_iiwa_link_9": np.zeros(6)})
    with pytest.raises(ShapeError, match=r"f_ext\['lbr_iiwa_link_7'\] has shape \(3,\); expected \(\.\.\., 6\)"):
        dyn.forward_dynamics_derivatives(model, z, z, z, f_ext={"lbr_iiwa_link_7": np.zeros(3)})


@pytest.mark.parametrize("name", list(CASES))
def test_jax_dynamics_take_wrenches_as_the_numba_ones_do(name):
    """``simbench.dynamics.autodiff.inverse_dynamics`` / ``forward_dynamics`` had no ``f_ext``
    while the numba functions and the derivatives took it (walkthrough O). Oracle: pin.rnea /
    pin.aba with the same world wrenches turned into joint-frame forces, joints by name; a
    wrench on a fixed link (a1's imu_link) included."""
    from simbench.dynamics import autodiff
    path, floating, links = CASES[name]
    model = RobotModel.from_urdf(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(str(resolve_urdf(path)), *([pin.JointModelFreeFlyer()] if floating else []))
    pd, mp = pm.createData(), PinocchioMap(model, pm)
    rng = np.random.default_rng(12)
    Q = model.random_configuration(rng, 3)
    V, A, T = rng.normal(size=(3, 3, model.nv))
    W = rng.normal(size=(len(links), 3, 6)) * [1, 1, 1, 20, 20, 20]
    f_ext = {link: W[i] for i, link in enumerate(links)}
    tau = autodiff.inverse_dynamics(model, Q, V, A, f_ext=f_ext)
    acc = autodiff.forward_dynamics(model, Q, V, T, f_ext=f_ext)
    compared = 0
    for s in range(3):
        qp, vp = mp.q(Q[s]), mp.v(V[s])
        assert rel_err(tau[s], mp.back(_pinocchio_tau(pm, pd, links, W[:, s], qp, vp, mp.v(A[s])))) < 1e-10
        assert rel_err(acc[s], mp.back(_pinocchio_tau(pm, pd, links, W[:, s], qp, vp, mp.v(T[s]), fd=True))) < 1e-9
        compared += 2
    assert compared == 6
    assert rel_err(tau, autodiff.inverse_dynamics(model, Q, V, A)) > 1e-3   # the wrenches matter
