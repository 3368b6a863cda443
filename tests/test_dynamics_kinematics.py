"""simbench.dynamics.kinematics: poses, Jacobians, centre of mass, energies. Oracles: Pinocchio
(``jacobianCenterOfMass``, ``computeKineticEnergy``, ``computePotentialEnergy``) and central
differences of the forward kinematics along the manifold (``integrate``), which check the
Jacobian columns of a floating base and of spherical joints independently of their formulas."""
import numpy as np
import pytest

from _dyn_helpers import rel_err, require
from simbench.oracles.pinocchio import PinocchioMap
from simbench.model import RobotModel
from simbench.spatial import so3_log
import simbench.dynamics as dyn

IIWA = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")


def test_com_jacobian_and_energies_against_pinocchio():
    pin = require("pinocchio")
    model = IIWA
    pm = pin.buildModelFromUrdf(model.source)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    q = model.random_configuration(np.random.default_rng(3))
    Jc = pin.jacobianCenterOfMass(pm, pd, mp.q(q)) @ mp.P
    assert rel_err(dyn.com_jacobian(model, q), Jc) < 1e-9
    assert np.allclose(dyn.center_of_mass(model, q), pd.com[0], rtol=0, atol=1e-12)
    qd = np.random.default_rng(4).normal(size=model.dof)
    ke = pin.computeKineticEnergy(pm, pd, mp.q(q), mp.v(qd))
    pe = pin.computePotentialEnergy(pm, pd, mp.q(q))
    assert abs(dyn.kinetic_energy(model, q, qd) - ke) < 1e-9 * abs(ke)
    assert abs(dyn.potential_energy(model, q) - pe) < 1e-9 * max(abs(pe), 1.0)


@pytest.mark.parametrize("path", ["pybullet_data:a1/a1.urdf", "pybullet_data:humanoid/humanoid.urdf"])
def test_jacobians_are_derivatives_of_the_forward_kinematics(path):
    """Column i of every link's Jacobian = d/dh of the link pose at q (+) h e_i (central
    differences, h = 1e-6): world angular velocity from log(R(+h) R(-h)^T) / 2h."""
    model = RobotModel.from_urdf(path, floating_base=True)
    rng = np.random.default_rng(8)
    q = model.random_configuration(rng)
    h = 1e-6
    T0 = dyn.forward_kinematics(model, q)
    count = 0
    for k, name in enumerate(model.link_names):
        J = dyn.link_jacobian(model, q, name)
        for i in range(model.nv):
            e = np.zeros(model.nv)
            e[i] = h
            Tp = dyn.forward_kinematics(model, dyn.integrate(model, q, e))[k]
            Tm = dyn.forward_kinematics(model, dyn.integrate(model, q, -e))[k]
            w = so3_log(Tp[:3, :3] @ Tm[:3, :3].T) / (2 * h)
            v = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
            assert np.allclose(J[:, i], np.r_[w, v], rtol=0, atol=1e-7), (name, i)
            count += 1
    assert count == model.nlinks * model.nv
    assert np.allclose(T0[0, :3, 3], q[:3])


def test_floating_base_pose_is_q():
    model = RobotModel.from_urdf("pybullet_data:laikago/laikago.urdf", floating_base=True)
    q = model.neutral()
    q[:3] = [0.4, -1.0, 0.7]
    q[3:7] = [0.0, 0.0, np.sin(0.3), np.cos(0.3)]   # 0.6 rad about z
    T = dyn.forward_kinematics(model, q)[0]
    c, s = np.cos(0.6), np.sin(0.6)
    assert np.allclose(T[:3, :3], [[c, -s, 0], [s, c, 0], [0, 0, 1]], rtol=0, atol=1e-15)
    assert np.allclose(T[:3, 3], q[:3], rtol=0, atol=0)
