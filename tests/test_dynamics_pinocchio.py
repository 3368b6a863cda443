"""simbench.dynamics against Pinocchio on every fixed-base robot of pybullet_data that both load.

Oracle: ``pin.rnea``, ``pin.crba``, ``pin.aba``, ``pin.getFrameJacobian(LOCAL_WORLD_ALIGNED)``;
joints matched by name, continuous joints as (cos, sin). Tolerance 1e-9 relative to the largest
magnitude of the compared quantity.
"""
import os
import zlib

import numpy as np
import pytest

from _dyn_helpers import PinMap, asset, movable_corpus, rel_err
from simbench.errors import SimbenchError, URDFError
from simbench.model import RobotModel

pin = pytest.importorskip("pinocchio")

import simbench.dynamics as dyn  # noqa: E402

TOL = 1e-9
FILES = movable_corpus() + [asset("planar_2r.urdf"), asset("mobile_manipulator.urdf"),
                            asset("anthropomorphic_3link.urdf")]
COMPARED: list[str] = []


def _load_pair(path):
    try:
        model = RobotModel.from_urdf(path)
        dyn.packing.kernel_model(model)
    except (URDFError, SimbenchError) as exc:
        pytest.skip(f"simbench does not model it: {exc}"[:200])
    if model.dof == 0:
        pytest.skip("no movable joint")
    try:
        pm = pin.buildModelFromUrdf(path)
    except Exception as exc:  # Pinocchio's urdfdom is stricter than PyBullet
        pytest.skip(f"Pinocchio cannot load it: {str(exc).splitlines()[0][:150]}")
    return model, pm


def _jac(pm, pd, fid):
    J = pin.getFrameJacobian(pm, pd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    return np.asarray(J).reshape(6, pm.nv)   # [linear; angular]


@pytest.mark.parametrize("path", FILES, ids=[os.path.relpath(f).replace(os.sep, "/")[-50:]
                                             for f in FILES])
def test_against_pinocchio(path):
    model, pm = _load_pair(path)
    pd = pm.createData()
    mp = PinMap(model, pm)
    rng = np.random.default_rng(zlib.crc32(os.path.basename(path).encode()))
    n = 3
    Q = model.random_configuration(rng, n)
    QD = rng.normal(size=(n, model.dof))
    QDD = rng.normal(size=(n, model.dof))
    TAU_b = dyn.inverse_dynamics(model, Q, QD, QDD)          # batched path
    M_b = dyn.mass_matrix(model, Q)
    T_all = dyn.forward_kinematics(model, Q)
    for s in range(n):
        q, qd, qdd = Q[s], QD[s], QDD[s]
        qp, vp, ap = mp.q(q), mp.v(qd), mp.v(qdd)
        tau_pin = mp.back(pin.rnea(pm, pd, qp, vp, ap))
        assert rel_err(TAU_b[s], tau_pin) < TOL
        assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd), tau_pin) < TOL   # single call
        M_pin = mp.back_matrix(pin.crba(pm, pd, qp))
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        assert rel_err(M_b[s], M_pin) < TOL
        assert rel_err(dyn.mass_matrix(model, q), M_pin) < TOL
        # forward dynamics where M is well conditioned (massless moving links make it singular)
        w = np.linalg.eigvalsh(M_pin)
        if w[0] > 1e-7 * w[-1]:
            tau = rng.normal(size=model.dof) * 10
            qdd_pin = mp.back(pin.aba(pm, pd, qp, vp, mp.v(tau)))
            assert rel_err(dyn.forward_dynamics(model, q, qd, tau), qdd_pin) < TOL * (w[-1] / w[0]) ** 0.5
        # Jacobians of every link, and the link poses
        pin.computeJointJacobians(pm, pd, qp)
        pin.updateFramePlacements(pm, pd)
        for k, name in enumerate(model.link_names):
            if not pm.existFrame(name, pin.FrameType.BODY):
                continue
            fid = pm.getFrameId(name, pin.FrameType.BODY)
            oMf = pd.oMf[fid]
            assert rel_err(T_all[s, k, :3, :3], oMf.rotation) < TOL
            assert np.allclose(T_all[s, k, :3, 3], oMf.translation, atol=1e-10)
            Jp = _jac(pm, pd, fid) @ mp.P
            J = dyn.link_jacobian(model, q, name)
            assert rel_err(J, np.vstack([Jp[3:], Jp[:3]])) < TOL, name
    # external wrench on the last link: tau - J^T F (J from Pinocchio)
    name = model.link_names[-1]
    if pm.existFrame(name, pin.FrameType.BODY):
        q, qd, qdd = Q[0], QD[0], QDD[0]
        F = rng.normal(size=6)
        pin.computeJointJacobians(pm, pd, mp.q(q))
        pin.updateFramePlacements(pm, pd)
        Jp = _jac(pm, pd, pm.getFrameId(name, pin.FrameType.BODY)) @ mp.P
        expected = dyn.inverse_dynamics(model, q, qd, qdd) - np.vstack([Jp[3:], Jp[:3]]).T @ F
        got = dyn.inverse_dynamics(model, q, qd, qdd, f_ext={name: F})
        assert rel_err(got, expected) < TOL
    # a different gravity vector
    g = np.array([1.5, -2.0, -7.0])
    pm.gravity.linear = g
    tau_pin = mp.back(pin.rnea(pm, pd, mp.q(Q[1]), mp.v(QD[1]), mp.v(QDD[1])))
    assert rel_err(dyn.inverse_dynamics(model, Q[1], QD[1], QDD[1], gravity=g), tau_pin) < TOL
    COMPARED.append(os.path.basename(path))


def test_com_jacobian_against_pinocchio():
    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    pm = pin.buildModelFromUrdf(model.source)
    pd = pm.createData()
    mp = PinMap(model, pm)
    q = model.random_configuration(np.random.default_rng(3))
    Jc = pin.jacobianCenterOfMass(pm, pd, mp.q(q)) @ mp.P
    assert rel_err(dyn.com_jacobian(model, q), Jc) < TOL
    assert np.allclose(dyn.center_of_mass(model, q), pd.com[0], atol=1e-12)
    # energies: Pinocchio's computeKineticEnergy / computePotentialEnergy
    qd = np.random.default_rng(4).normal(size=model.dof)
    ke = pin.computeKineticEnergy(pm, pd, mp.q(q), mp.v(qd))
    pe = pin.computePotentialEnergy(pm, pd, mp.q(q))
    assert abs(dyn.kinetic_energy(model, q, qd) - ke) < 1e-9 * abs(ke)
    assert abs(dyn.potential_energy(model, q) - pe) < 1e-9 * max(abs(pe), 1.0)


def test_coriolis_matrix_against_pinocchio():
    """Pinocchio's C (computeCoriolisMatrix) also makes M' - 2C skew; C q' must agree."""
    model = RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")
    pm = pin.buildModelFromUrdf(model.source)
    pd = pm.createData()
    mp = PinMap(model, pm)
    rng = np.random.default_rng(5)
    q, qd = model.random_configuration(rng), rng.normal(size=model.dof)
    C_pin = mp.back_matrix(pin.computeCoriolisMatrix(pm, pd, mp.q(q), mp.v(qd)))
    C = dyn.coriolis_matrix(model, q, qd)
    assert rel_err(C @ qd, C_pin @ qd) < TOL
    assert rel_err(C, C_pin) < TOL


def test_external_wrench_on_fixed_links_against_pinocchio():
    """Wrenches on links attached by fixed joints (merged into their parent body for the dynamics
    kernels): tau = ID - sum J^T F with Pinocchio's frame Jacobians; batched and single."""
    model = RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")
    pm = pin.buildModelFromUrdf(model.source)
    pd = pm.createData()
    mp = PinMap(model, pm)
    rng = np.random.default_rng(11)
    Q = model.random_configuration(rng, 2)
    QD, QDD = rng.normal(size=(2, model.dof)), rng.normal(size=(2, model.dof))
    links = ["panda_hand", "panda_link8", "panda_link3"]
    F = {name: rng.normal(size=(2, 6)) for name in links}
    got = dyn.inverse_dynamics(model, Q, QD, QDD, f_ext=F)
    for s in range(2):
        pin.computeJointJacobians(pm, pd, mp.q(Q[s]))
        pin.updateFramePlacements(pm, pd)
        expected = mp.back(pin.rnea(pm, pd, mp.q(Q[s]), mp.v(QD[s]), mp.v(QDD[s])))
        for name in links:
            Jp = _jac(pm, pd, pm.getFrameId(name, pin.FrameType.BODY)) @ mp.P
            expected = expected - np.vstack([Jp[3:], Jp[:3]]).T @ F[name][s]
        assert rel_err(got[s], expected) < TOL
        single = dyn.inverse_dynamics(model, Q[s], QD[s], QDD[s], f_ext={k: v[s] for k, v in F.items()})
        assert rel_err(single, expected) < TOL
        # forward dynamics with the same wrenches inverts it
        qdd = dyn.forward_dynamics(model, Q[s], QD[s], expected, f_ext={k: v[s] for k, v in F.items()})
        assert rel_err(qdd, QDD[s]) < 1e-8
