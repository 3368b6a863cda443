"""Base poses reach PyBullet in float64: PyBullet's ``multiplyTransforms``/``invertTransform``
round to float32, so composing the base link frame with the base's inertial frame through them
moved a floating a1's pose by ~5e-8 on a round trip (walkthrough Q). Oracles: PyBullet's own
stored base pose (``getBasePositionAndOrientation``, float64), the pose composed in closed form
(p + R c, q q_c) from ``getDynamicsInfo``'s local inertial frame, and the state the user set."""
from __future__ import annotations

import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.errors import ShapeError

A1 = "pybullet_data:a1/a1.urdf"


def rot(q):
    x, y, z, w = np.asarray(q) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_floating_state_round_trip_and_the_stored_com_pose_are_float64():
    scene = {"gravity": [0, 0, 0], "body": [{"name": "dog", "urdf": A1, "position": [0, 0, 0.5]}]}
    rng = np.random.default_rng(3)
    with simbench.Simulation(scene, gui=False) as sim:
        robot, bid, c = sim.robot, sim.bodies["dog"], sim.client
        assert robot.floating and sim.model.nq == 19
        info = p.getDynamicsInfo(bid, -1, physicsClientId=c)
        com_local, orn_local = np.array(info[3]), np.array(info[4])
        assert np.linalg.norm(com_local) > 1e-3   # the premise: the a1's base inertial frame is offset
        worst_q = worst_v = worst_com = 0.0
        for _ in range(20):
            q = sim.model.random_configuration(rng)
            q[3:7] *= rng.uniform(0.5, 2.0)                 # any norm: normalised
            v = rng.uniform(-1, 1, sim.model.nv)
            robot.set_model_state(q, v)
            got_q, got_v = robot.model_state()
            unit = q[3:7] / np.linalg.norm(q[3:7])
            worst_q = max(worst_q, np.abs(got_q[:3] - q[:3]).max(), np.abs(got_q[3:7] - unit).max(),
                          np.abs(got_q[7:] - q[7:]).max())
            worst_v = max(worst_v, np.abs(got_v - v).max())
            pos, orn = p.getBasePositionAndOrientation(bid, physicsClientId=c)
            R = rot(unit)
            worst_com = max(worst_com, np.abs(np.array(pos) - (q[:3] + R @ com_local)).max(),
                            np.abs(rot(orn) - R @ rot(orn_local)).max())
        assert worst_q < 1e-13 and worst_v < 1e-12 and worst_com < 1e-14, (worst_q, worst_v, worst_com)


def test_set_pose_with_a_zero_quaternion_says_it_is_zero():
    scene = {"body": [{"name": "dog", "urdf": A1, "position": [0, 0, 0.5]}]}
    with simbench.Simulation(scene, gui=False) as sim:
        with pytest.raises(ShapeError, match=r"^orientation = \[0\.0, 0\.0, 0\.0, 0\.0\] is a zero quaternion, which "
                                             r"names no rotation; expected a unit quaternion \(x, y, z, w\), e\.g\. "
                                             r"\(0, 0, 0, 1\)$"):
            sim.set_pose("dog", [0, 0, 1], [0, 0, 0, 0])
