"""PyBullet's floating-base inverse dynamics and mass matrix, mapped to Pinocchio's free-flyer
conventions (the ones simbench's floating base will use), and PyBullet's defects demonstrated.

Oracle: Pinocchio's own URDF parser with ``JointModelFreeFlyer`` (q = [x y z qx qy qz qw,
joints], v = [v; w; rates] in the root link frame, spatial accelerations), joints matched by name.
"""
import numpy as np
import pinocchio as pin
import pybullet as p
import pytest

from simbench.check.bullet import BulletLoad, BulletRobot
from simbench.check.floating import FloatingBaseConvention, pybullet_quaternion
from simbench.model import RobotModel
from simbench.oracles.pinocchio import PinocchioDynamics
from simbench.paths import resolve_urdf

ROBOTS = ["pybullet_data:laikago/laikago_toes_zup.urdf",  # root inertial frame = link frame
          "pybullet_data:a1/a1.urdf",                      # root COM offset, principal axes rotated
          "pybullet_data:quadruped/minitaur.urdf"]        # 16 joints, a tree Pinocchio orders differently


def free_flyer(path, names):
    """Pinocchio's parse of the file with a free-flyer root, in our floating q, v order
    (simbench.oracles.pinocchio: joints by name, continuous joints as cos, sin)."""
    model = RobotModel.from_urdf(path, floating_base=True)
    assert list(model.joint_names) == list(names)  # our order is PyBullet's
    return PinocchioDynamics.from_urdf(model)


def states(n, k, rng):
    quat = rng.normal(size=(k, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    q = np.concatenate([rng.uniform(-1, 1, (k, 3)), quat, rng.uniform(-0.6, 0.6, (k, n))], axis=1)
    return q, rng.normal(size=(k, 6 + n)), rng.normal(size=(k, 6 + n))


@pytest.mark.parametrize("name", ROBOTS)
def test_floating_base_convention_matches_pinocchio_free_flyer(name):
    path = resolve_urdf(name)
    with BulletRobot(BulletLoad(path, fixed_base=False)) as robot:
        conv = FloatingBaseConvention(robot)
        ff = free_flyer(path, robot.joint_names)
        q, v, a = states(len(robot.joint_names), 6, np.random.default_rng(2))
        tau = conv.inverse_dynamics(robot, q, v, a)
        M = conv.mass_matrix(robot, q)
    compared = 0
    for k in range(len(q)):
        ref_tau, ref_M = ff.inverse_dynamics(q[k], v[k], a[k]), ff.mass_matrix(q[k])
        assert np.abs(tau[k] - ref_tau).max() < 1e-9 * max(1, np.abs(ref_tau).max()), (k, tau[k] - ref_tau)
        assert np.abs(M[k] - ref_M).max() < 1e-10 * max(1, np.abs(ref_M).max())
        compared += 1
    assert compared == 6


def test_pybullet_composes_the_base_euler_angles_in_the_wrong_order():
    """Handed the true quaternion, PyBullet's floating-base inverse dynamics uses Rx(r) Ry(p) Rz(y);
    only :func:`pybullet_quaternion` makes it use the intended orientation."""
    path = resolve_urdf(ROBOTS[0])  # root inertial frame = link frame: PyBullet's q is ours
    rng = np.random.default_rng(5)
    with BulletRobot(BulletLoad(path, fixed_base=False)) as robot:
        n = len(robot.joint_names)
        ff = free_flyer(path, robot.joint_names)
        q, _, _ = states(n, 1, rng)
        zero = np.zeros(6 + n)
        naive = np.array(p.calculateInverseDynamics(robot.body, list(q[0]), list(zero), list(zero),
                                                    physicsClientId=robot.client))
        ref = ff.inverse_dynamics(q[0], zero, zero)
        assert np.abs(naive[6:] - ref[6:]).max() > 1e-2  # the joints see gravity from elsewhere
        r, pitch, y = p.getEulerFromQuaternion(list(q[0, 3:7]))
        Rx, Ry, Rz = (np.array(p.getMatrixFromQuaternion(p.getQuaternionFromEuler(e))).reshape(3, 3)
                      for e in ([r, 0, 0], [0, pitch, 0], [0, 0, y]))
        used = q[0].copy()
        used[3:7] = pin.Quaternion(Rx @ Ry @ Rz).coeffs()  # what PyBullet computes with
        assert np.abs(naive[6:] - ff.inverse_dynamics(used, zero, zero)[6:]).max() < 1e-10
        fixed = q[0].copy()
        fixed[3:7] = pybullet_quaternion(np.array(p.getMatrixFromQuaternion(list(q[0, 3:7]))).reshape(3, 3))
        corrected = np.array(p.calculateInverseDynamics(robot.body, list(fixed), list(zero), list(zero),
                                                        physicsClientId=robot.client))
        assert np.abs(corrected[6:] - ref[6:]).max() < 1e-10


def test_pybullet_floating_base_input_lengths():
    path = resolve_urdf(ROBOTS[0])
    with BulletRobot(BulletLoad(path, fixed_base=False)) as robot:
        n = len(robot.joint_names)
        ok = p.calculateInverseDynamics(robot.body, [0.0] * 6 + [1.0] + [0.0] * n, [0.0] * (6 + n),
                                        [0.0] * (6 + n), physicsClientId=robot.client)
        assert len(ok) == 6 + n
        for lengths in [(n, n, n), (6 + n, 6 + n, 6 + n), (7 + n, 7 + n, 7 + n)]:
            with pytest.raises(SystemError):
                p.calculateInverseDynamics(robot.body, *[[0.0] * m for m in lengths], physicsClientId=robot.client)
        M = np.array(p.calculateMassMatrix(robot.body, [0.0] * n, physicsClientId=robot.client))
        assert M.shape == (6 + n, 6 + n)
        links = range(-1, p.getNumJoints(robot.body, physicsClientId=robot.client))
        mass = sum(p.getDynamicsInfo(robot.body, j, physicsClientId=robot.client)[0] for j in links)
        np.testing.assert_allclose(M[3:6, 3:6], mass * np.eye(3), rtol=1e-12, atol=1e-12)  # [angular; linear]
