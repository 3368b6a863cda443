"""Collision queries on floating robots: a ``q`` with ``nq`` columns poses the base too.

Oracle: direct ``getClosestPoints`` in a separate DIRECT server holding the same bodies, after
``resetBasePositionAndOrientation`` (the base's inertial frame ``p + R c``, ``R R_in`` from
``getDynamicsInfo``, written out here) and ``resetJointState``.
"""
import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.bullet.records import ContactPoint, dynamics_info
from simbench.errors import ShapeError
from simbench.paths import resolve_urdf

A1 = "pybullet_data:a1/a1.urdf"
CUBE = "pybullet_data:cube.urdf"
CUBE_AT = [0.9, 0.0, 0.5]
SCENE = {"gravity": [0, 0, -9.81],
         "body": [{"name": "robot", "urdf": A1, "position": [0, 0, 0.6]},
                  {"name": "cube", "urdf": CUBE, "position": CUBE_AT, "fixed_base": True, "scale": 0.5}]}
PAIRS = [("robot", "cube"), (("robot", "FR_lower"), "cube"), (("robot", "trunk"), "cube")]
MAX_D = 0.5


def oracle_client():
    """The same bodies in a fresh DIRECT server, loaded by hand."""
    c = p.connect(p.DIRECT)
    flags = p.URDF_USE_INERTIA_FROM_FILE
    robot = p.loadURDF(str(resolve_urdf(A1)), [0, 0, 0.6], flags=flags, physicsClientId=c)
    cube = p.loadURDF(str(resolve_urdf(CUBE)), CUBE_AT, useFixedBase=True, globalScaling=0.5, flags=flags,
                      physicsClientId=c)
    links = {p.getJointInfo(robot, j, physicsClientId=c)[12].decode(): j
             for j in range(p.getNumJoints(robot, physicsClientId=c))}
    return c, robot, cube, links


def oracle_distances(c, robot, cube, links, movable, q):
    info = dynamics_info(robot, -1, c)
    # the base's inertial (COM) pose in float64, (p + R c, q q_c): PyBullet's multiplyTransforms rounds to float32
    x, y, z, w = q[3:7] / np.linalg.norm(q[3:7])
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    bx, by, bz, bw = info.local_inertial_orientation
    pos = (q[:3] + R @ np.array(info.local_inertial_position)).tolist()
    orn = [w * bx + x * bw + y * bz - z * by, w * by - x * bz + y * bw + z * bx,
           w * bz + x * by - y * bx + z * bw, w * bw - x * bx - y * by - z * bz]
    p.resetBasePositionAndOrientation(robot, pos, orn, physicsClientId=c)
    for j, x in zip(movable, q[7:]):
        p.resetJointState(robot, j, float(x), physicsClientId=c)
    out = []
    for link in (-2, links["FR_lower"], -1):
        kw = {} if link == -2 else {"linkIndexA": link}
        pts = [ContactPoint(*pt) for pt in p.getClosestPoints(robot, cube, MAX_D, physicsClientId=c, **kw)]
        out.append(min([pt.distance for pt in pts], default=MAX_D))
    return np.minimum(out, MAX_D)


def random_q(model, rng, n):
    q = np.empty((n, model.nq))
    q[:, :3] = CUBE_AT + rng.uniform(-0.7, 0.7, (n, 3))
    quat = rng.normal(size=(n, 4))
    q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    q[:, 7:] = rng.uniform(-0.8, 0.8, (n, model.nv - 6))
    return q


def test_distances_with_base_pose_against_getClosestPoints():
    rng = np.random.default_rng(3)
    c, robot, cube, links = oracle_client()
    try:
        with simbench.Simulation(SCENE, gui=False) as sim:
            model = sim.model
            det = sim.detector(PAIRS)
            assert (det.dof, det.nq) == (12, 19) and model.nq == 19
            base_before = sim.base_pose("robot")
            q = random_q(model, rng, 40)
            batch = det.compute_distances(q, MAX_D)
            one = np.array([det.compute_distances(row, MAX_D) for row in q[:5]])
            movable = sim.robot.body.movable_indices
            expected = np.array([oracle_distances(c, robot, cube, links, movable, row) for row in q])
            np.testing.assert_allclose(batch, expected, atol=1e-9)
            np.testing.assert_allclose(one, expected[:5], atol=1e-9)
            near = (expected < MAX_D).sum()
            assert near >= 20 and (expected < 0).sum() >= 3  # close and penetrating cases were compared
            assert det.in_collision(q).tolist() == (expected < 0).any(axis=1).tolist()
            cp = det.closest_points(q[0], MAX_D)
            np.testing.assert_allclose([r.distance for r in cp], expected[0], atol=1e-9)
            # the query leaves the collision server's base where the main world has it
            pos, orn = p.getBasePositionAndOrientation(sim.robot.id, physicsClientId=sim.collision_client)
            np.testing.assert_allclose(pos, p.getBasePositionAndOrientation(sim.robot.id, physicsClientId=sim.client)[0],
                                       atol=1e-12)
            # joints only (dof columns): today's behaviour, the base where the simulation has it
            q_now, _ = sim.robot.model_state()
            for row in q[:5]:
                full = np.r_[q_now[:7], row[7:]]
                np.testing.assert_allclose(det.compute_distances(row[7:], MAX_D),
                                           oracle_distances(c, robot, cube, links, movable, full), atol=1e-9)
            np.testing.assert_allclose(sim.base_pose("robot")[0], base_before[0], atol=1e-12)
    finally:
        p.disconnect(physicsClientId=c)
    assert len(expected) == 40


def test_base_pose_columns_refused_where_they_cannot_apply():
    with simbench.Simulation(SCENE, gui=False) as sim:
        det = sim.detector(PAIRS)
        q = np.zeros(19)
        with pytest.raises(ShapeError, match=r"base quaternion of body 'robot'; expected a non-zero quaternion"):
            det.compute_distances(q)
        with pytest.raises(ShapeError, match=r"shape \(13,\); expected \(12,\) or \(N, 12\).*or 19 columns"):
            det.compute_distances(np.zeros(13))
        with pytest.raises(ShapeError, match=r"shape \(19,\); expected \(12,\)"):
            det.path_is_free(np.r_[0, 0, 1, 0, 0, 0, 1, np.zeros(12)], np.r_[0, 0, 1, 0, 0, 0, 1, np.zeros(12)])
    fixed = {**SCENE, "body": [{**SCENE["body"][0], "fixed_base": True}, SCENE["body"][1]]}
    with simbench.Simulation(fixed, gui=False) as sim:
        det = sim.detector(PAIRS)
        assert det.nq == det.dof == 12
        with pytest.raises(ShapeError, match=r"shape \(19,\); expected \(12,\) or \(N, 12\) with joints"):
            det.compute_distances(np.r_[0, 0, 1, 0, 0, 0, 1, np.zeros(12)])
