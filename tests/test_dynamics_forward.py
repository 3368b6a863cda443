"""simbench.dynamics.forward: forward dynamics. Oracles: the RNEA (``ID(q, q', FD(tau)) = tau``),
Pinocchio (``crba``, ``nonLinearEffects`` and frame Jacobians with external wrenches and joint
losses), closed forms (a floating robot in free fall: base acceleration g, joint accelerations zero), and
the singular mass matrix of a massless moving link."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _dyn_helpers import asset, rel_err, require
from simbench.errors import SimbenchError
from simbench.model import RobotModel
from simbench.oracles.pinocchio import PinocchioMap, symmetric
from simbench.spatial import quat_to_matrix
import simbench.dynamics as dyn

MODELS = {
    "kuka": RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf"),
    "panda": RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf"),
    "mobile": RobotModel.from_urdf(asset("mobile_manipulator.urdf")),
    "arm3": RobotModel.from_urdf(asset("anthropomorphic_3link.urdf")),
    "laikago-floating": RobotModel.from_urdf("pybullet_data:laikago/laikago.urdf", floating_base=True),
    "humanoid-spherical": RobotModel.from_urdf("pybullet_data:humanoid/humanoid.urdf", floating_base=True),
}
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.sampled_from(sorted(MODELS)), st.integers(0, 2**32 - 1))
def test_inverse_of_forward_dynamics(name, s):
    model = MODELS[name]
    rng = np.random.default_rng(s)
    q, qd, tau = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv) * 5
    qdd = dyn.forward_dynamics(model, q, qd, tau)
    assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd), tau) < 1e-9
    # with damping, friction and an external wrench as well
    F = {model.link_names[-1]: rng.normal(size=6)}
    qdd = dyn.forward_dynamics(model, q, qd, tau, f_ext=F, damping=True, friction=True)
    assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd, f_ext=F, damping=True, friction=True), tau) < 1e-9


@pytest.mark.parametrize("name", ["laikago-floating", "humanoid-spherical"])
def test_free_fall_closed_form(name):
    """No torque, no contact, from rest: the base falls with g and the joints do not move
    relative to it."""
    model = MODELS[name]
    rng = np.random.default_rng(4)
    Q = model.random_configuration(rng, 4)
    qdd = dyn.forward_dynamics(model, Q, np.zeros(model.nv), np.zeros(model.nv))
    R = quat_to_matrix(Q[:, 3:7])
    a_world = np.einsum("nij,nj->ni", R, qdd[:, :3])
    assert np.allclose(a_world, [0.0, 0.0, -9.81], rtol=0, atol=1e-12)
    assert np.abs(qdd[:, 3:]).max() < 1e-12


def test_singular_mass_matrix():
    """A massless moving leaf link: M is singular, forward dynamics says so."""
    model = RobotModel.from_urdf(asset("planar_2r.urdf")).with_link_inertial("link2", mass=0.0)
    with pytest.raises(SimbenchError, match="singular.*link2"):
        dyn.forward_dynamics(model, np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(SimbenchError, match="singular"):
        dyn.forward_dynamics(model, np.zeros((3, 2)), np.zeros(2), np.zeros(2))
    with pytest.raises(SimbenchError, match="singular"):
        dyn.forward_dynamics(model, np.zeros((900, 2)), np.zeros(2), np.zeros(2))
    with pytest.raises(SimbenchError, match="singular.*900 configuration"):   # a plain float64 batch
        dyn.forward_dynamics(model, np.zeros((900, 2)), np.zeros((900, 2)), np.zeros((900, 2)))


def test_singular_mass_matrix_names_a_negative_mass(tmp_path):
    """A URDF link with mass -0.3 kg: forward dynamics names it as it is (it said 'massless
    links: ['link2']', a user's walkthrough); the other link's point mass (zero inertia) is not
    blamed. Oracle: the file as written."""
    text = Path(asset("planar_2r.urdf")).read_text()
    assert text.count('<mass value="0.8"/>') == 1
    (tmp_path / "neg.urdf").write_text(text.replace('<mass value="0.8"/>', '<mass value="-0.3"/>'))
    model = RobotModel.from_urdf(tmp_path / "neg.urdf")
    with pytest.raises(SimbenchError) as err:
        dyn.forward_dynamics(model, [0.1, 0.2], [0.0, 0.0], [0.0, 0.0])
    assert str(err.value).endswith("so forward dynamics is undefined; negative mass: 'link2' (-0.3 kg)"), err.value


def test_batched_serial_and_threaded_equal_single():
    model = MODELS["laikago-floating"]
    rng = np.random.default_rng(5)
    for n in (7, 1200):
        Q = model.random_configuration(rng, n)
        QD, TAU = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
        qdd = dyn.forward_dynamics(model, Q, QD, TAU)
        for i in (0, n - 1):
            assert rel_err(qdd[i], dyn.forward_dynamics(model, Q[i], QD[i], TAU[i])) < 1e-12


@pytest.mark.parametrize("name", ["kuka", "laikago-floating"])
def test_wrenches_and_losses_on_one_configuration_against_pinocchio(name):
    """One configuration with external wrenches, damping and friction (the fast path of
    :func:`simbench.inputs.fast_wrenches`): in every input form (float64 arrays, lists,
    tuples), ``q'' = M^-1 (tau - D q' - f_c sign(q') - h + sum J^T F)`` and ``tau = M q'' + h +
    D q' + f_c sign(q') - sum J^T F`` with Pinocchio's ``crba``, ``nonLinearEffects`` and
    frame Jacobians (LOCAL_WORLD_ALIGNED: world axes, about the link origin)."""
    pin = require("pinocchio")
    base = MODELS[name]
    n = len(base.joint_all_names)
    model = base.replace(joint_damping=np.linspace(0.1, 0.7, n), joint_friction=np.linspace(0.05, 0.4, n))
    floating = model.floating_base
    pm = pin.buildModelFromUrdf(str(model.source), *([pin.JointModelFreeFlyer()] if floating else []))
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    mov = model.movable
    D, Fc = np.zeros(model.nv), np.zeros(model.nv)
    D[model.joint_v_start[mov]] = model.joint_damping[mov]
    Fc[model.joint_v_start[mov]] = model.joint_friction[mov]
    rng = np.random.default_rng(21)
    links = [model.link_names[-1], model.link_names[len(model.link_names) // 2]]
    compared = 0
    for _ in range(3):
        q, qd, tau = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv) * 5
        F = {k: rng.normal(size=6) * 10 for k in links}
        pq, pv = mp.q(q), mp.v(qd)
        M = mp.back_matrix(symmetric(pin.crba(pm, pd, pq)))
        h = mp.back(pin.nonLinearEffects(pm, pd, pq, pv))
        pin.computeJointJacobians(pm, pd, pq)
        pin.updateFramePlacements(pm, pd)
        JtF = np.zeros(model.nv)
        for k, w in F.items():
            J = pin.getFrameJacobian(pm, pd, pm.getFrameId(k, pin.FrameType.BODY),
                                     pin.ReferenceFrame.LOCAL_WORLD_ALIGNED) @ mp.P
            JtF += np.vstack([J[3:], J[:3]]).T @ w
        losses = D * qd + Fc * np.sign(qd)
        want_qdd = np.linalg.solve(M, tau - losses - h + JtF)
        want_tau = M @ want_qdd + h + losses - JtF
        for form in (lambda x: x, lambda x: x.tolist(), tuple):
            Fx = {k: form(w) for k, w in F.items()}
            got = dyn.forward_dynamics(model, form(q), form(qd), form(tau), f_ext=Fx, damping=True,
                                       friction=True)
            assert got.shape == (model.nv,) and rel_err(got, want_qdd) < 1e-9
            got = dyn.inverse_dynamics(model, form(q), form(qd), form(want_qdd), f_ext=Fx, damping=True,
                                       friction=True)
            assert got.shape == (model.nv,) and rel_err(got, want_tau) < 1e-9
            # the losses alone (the C entry's result plus D q' + f_c sign(q'))
            got = dyn.forward_dynamics(model, form(q), form(qd), form(tau), damping=True, friction=True)
            assert rel_err(got, np.linalg.solve(M, tau - losses - h)) < 1e-9
            compared += 3
    assert compared == 27


def test_wrench_and_loss_errors_on_the_fast_path():
    """Bad values beside wrenches and losses still get the general path's clear error, not an
    overflow or a singular mass matrix."""
    model = MODELS["kuka"]
    z = np.zeros(model.nv)
    link = model.link_names[-1]
    with pytest.raises(SimbenchError, match=r"f_ext\[.*non-finite"):
        dyn.forward_dynamics(model, z, z, z, f_ext={link: [0, 0, np.nan, 0, 0, 0]})
    with pytest.raises(SimbenchError, match="qd.*non-finite"):
        dyn.forward_dynamics(model, z, [0.0] * 6 + [np.inf], z, damping=True)
    with pytest.raises(SimbenchError, match=r"qd.*\(\.\.\., 7\)"):
        dyn.forward_dynamics(model, z, np.zeros(3), z, friction=True)
    with pytest.raises(SimbenchError, match=r"qd.*\(\.\.\., 7\)"):
        dyn.inverse_dynamics(model, z, np.zeros(1), z, damping=True)
    light = RobotModel.from_urdf(asset("planar_2r.urdf")).with_link_inertial("link2", mass=0.0)
    with pytest.raises(SimbenchError, match="singular.*link2"):
        dyn.forward_dynamics(light, np.zeros(2), np.zeros(2), np.zeros(2), f_ext={"link2": np.ones(6)})
