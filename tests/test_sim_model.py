"""``sim.model`` is the robot PyBullet simulates: base orientation (gravity in the base frame)
and ``scale`` (PyBullet's globalScaling) included.

Oracles: PyBullet's own stepping (computed torque holds a pose to round-off when the model is
right), PyBullet's link frames, masses, inertias and mass matrix of a body loaded with
``globalScaling``, and the closed form ``R^T g`` for a base rolled by a known angle.
"""
import math

import numpy as np
import pybullet as p
import pybullet_data
import pytest

import simbench
from simbench.dynamics import forward_kinematics, inverse_dynamics, mass_matrix
from simbench.errors import SimbenchError
from simbench.model import RobotModel

KUKA = "pybullet_data:kuka_iiwa/model.urdf"
Q_HOLD = np.array([0.3, 0.8, -0.4, -1.1, 0.5, 0.9, -0.2])


def kuka_scene(orientation=(0.0, 0.0, 0.0), scale=1.0, gravity=(0.0, 0.0, -9.81)):
    return {"gravity": list(gravity),
            "body": [{"name": "robot", "urdf": KUKA, "fixed_base": True, "position": [0, 0, 2.5],
                      "orientation": list(orientation), "scale": scale}]}


def hold_error(scene, seconds=2.0, kp=25.0, kd=10.0) -> float:
    """Largest |q - q_hold| over ``seconds`` of computed-torque control in PyBullet's torque
    mode with its damping off: tau = ID(sim.model, q, qd, kp (q* - q) - kd qd)."""
    with simbench.Simulation(scene, gui=False) as sim:
        robot = sim.robot
        robot.change_dynamics(linearDamping=0.0, angularDamping=0.0, jointDamping=0.0)
        robot.reset(Q_HOLD)
        model, err = sim.model, 0.0
        for _ in range(round(seconds / sim.dt)):
            q, qd = robot.state()
            robot.set_torques(inverse_dynamics(model, q, qd, kp * (Q_HOLD - q) - kd * qd))
            sim.step()
            err = max(err, float(np.abs(robot.q - Q_HOLD).max()))
        return err


CASES = {"upright": kuka_scene(), "wall (roll 90 deg)": kuka_scene((math.pi / 2, 0, 0)),
         "upside down": kuka_scene((math.pi, 0, 0)), "scale 2": kuka_scene(scale=2.0)}


@pytest.mark.parametrize("name", list(CASES))
def test_computed_torque_holds_the_pose_in_pybullet(name):
    """Measured before sim.model followed the scene: 1.22 rad (wall mount), 0.69 rad (scale 2)."""
    assert hold_error(CASES[name]) < 1e-6
    assert len(CASES) == 4


def test_gravity_in_the_base_frame_is_R_transpose_g():
    """Closed forms: rolled by a about x, g_base = (0, -g sin a, -g cos a); the scene's own
    gravity vector is used, not a constant."""
    cases = 0
    for a in (0.0, math.pi / 2, math.pi, 0.3):
        for g in ((0, 0, -9.81), (0, 0, -3.71), (1.0, 0, -9.81)):
            with simbench.Simulation(kuka_scene((a, 0, 0), gravity=g), gui=False) as sim:
                R = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
                assert np.allclose(sim.model.gravity, R.T @ np.array(g), atol=1e-12)
                assert sim.handle("robot").model is sim.model  # one model per body
                cases += 1
    assert cases == 12


def test_scaled_model_matches_pybullet_global_scaling(direct_client):
    """RobotModel.scaled(s) against a body loaded with globalScaling=s: masses, COM inertia
    diagonals, link frames over random configurations and the mass matrix."""
    base = RobotModel.from_urdf(KUKA)
    path = pybullet_data.getDataPath() + "/kuka_iiwa/model.urdf"
    rng = np.random.default_rng(3)
    compared = 0
    for s in (0.5, 2.0, 3.0):
        model = base.scaled(s)
        body = p.loadURDF(path, useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE, globalScaling=s,
                          physicsClientId=direct_client)
        for li in range(7):
            mass, _, inertia = p.getDynamicsInfo(body, li, physicsClientId=direct_client)[:3]
            k = model.link_index(p.getJointInfo(body, li, physicsClientId=direct_client)[12].decode())
            assert model.link_mass[k] == pytest.approx(mass)
            assert np.allclose(np.sort(np.linalg.eigvalsh(model.link_inertia[k])), np.sort(inertia), rtol=1e-9)
        for q in model.random_configuration(rng, n=20):
            for j, v in enumerate(q):
                p.resetJointState(body, j, float(v), physicsClientId=direct_client)
            frames = forward_kinematics(model, q)
            for li in range(7):
                pos = p.getLinkState(body, li, computeForwardKinematics=True, physicsClientId=direct_client)[4]
                k = model.link_index(p.getJointInfo(body, li, physicsClientId=direct_client)[12].decode())
                assert np.allclose(frames[k][:3, 3], pos, atol=2e-6)  # PyBullet reports float32 here
            M = np.array(p.calculateMassMatrix(body, q.tolist(), physicsClientId=direct_client))
            assert np.allclose(mass_matrix(model, q), M, atol=1e-9)
            compared += 1
        p.removeBody(body, physicsClientId=direct_client)
    assert compared == 60


def test_scaled_prismatic_limits_follow_pybullet(direct_client):
    """PyBullet reports a prismatic joint's limits times the scale (while q stays in metres)."""
    path = pybullet_data.getDataPath() + "/cartpole.urdf"
    model = RobotModel.from_urdf(path).scaled(2.0)
    body = p.loadURDF(path, useFixedBase=True, globalScaling=2.0, physicsClientId=direct_client)
    info = p.getJointInfo(body, 0, physicsClientId=direct_client)
    j = model.joint_all_names.index(info[1].decode())
    assert (model.joint_lower[j], model.joint_upper[j]) == pytest.approx((info[8], info[9]))
    assert info[9] == pytest.approx(30.0)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "big"])
def test_bad_scale_is_refused(bad):
    with pytest.raises(SimbenchError, match=r"scale = .*expected a finite positive number"):
        RobotModel.from_urdf(KUKA).scaled(bad)


# ---------------------------------------------------------------------------- kinematics in the world
def rpy_matrix(r, p_, y):
    """R = Rz(y) Ry(p) Rx(r), the URDF / scene convention, in closed form."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p_), math.sin(p_), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


MOUNTS = {"wall": ([0.0, 0.0, 1.0], (math.pi / 2, 0.0, 0.0)),
          "tilted, yawed, offset": ([0.4, -0.3, 0.2], (0.3, -0.5, 0.7))}


@pytest.mark.parametrize("mount", list(MOUNTS))
def test_kinematics_of_a_mounted_model_are_in_the_world(mount):
    """link_pose, link_jacobian, center_of_mass and f_ext of sim.model speak the world, as the
    docs say, for a fixed base mounted anywhere (before, they were in the base frame: link 7 at
    z = 1.261 where PyBullet had y = -1.261). Oracles: Pinocchio's oMf and LOCAL_WORLD_ALIGNED
    frame Jacobian of the same file, placed by the scene's pose written in closed form here,
    PyBullet's getLinkState, and pin.rnea with the wrench turned into the link's own frame."""
    from _dyn_helpers import require

    pin = require("pinocchio")
    from simbench.dynamics import center_of_mass, link_jacobian, link_pose
    from simbench.oracles.pinocchio import PinocchioMap

    position, rpy = MOUNTS[mount]
    T0 = np.eye(4)
    T0[:3, :3], T0[:3, 3] = rpy_matrix(*rpy), position
    scene = {"gravity": [0, 0, -9.81], "body": [{"name": "robot", "urdf": KUKA, "fixed_base": True,
                                                 "position": position, "orientation": list(rpy)}]}
    pm = pin.buildModelFromUrdf(str(simbench.paths.resolve_path(KUKA)))
    pd = pm.createData()
    rng = np.random.default_rng(3)
    cases = 0
    with simbench.Simulation(scene, gui=False) as sim:
        model, robot = sim.model, sim.robot
        mp = PinocchioMap(model, pm)
        pm.gravity.linear = np.array(model.gravity)          # the root frame's, R^T g
        for _ in range(5):
            q = rng.uniform(-1.5, 1.5, 7)
            robot.reset(q)
            qp = mp.q(q)
            pin.forwardKinematics(pm, pd, qp)
            pin.updateFramePlacements(pm, pd)
            for link in ("lbr_iiwa_link_0", "lbr_iiwa_link_3", "lbr_iiwa_link_7"):
                fid = pm.getFrameId(link)
                oMf = T0 @ pd.oMf[fid].homogeneous
                np.testing.assert_allclose(link_pose(model, q, link), oMf, atol=1e-12)
                if link != "lbr_iiwa_link_0":   # PyBullet's world frame of the link (float precision)
                    state = p.getLinkState(robot.id, robot.body.link_index(link), computeForwardKinematics=True,
                                           physicsClientId=sim.client)
                    np.testing.assert_allclose(link_pose(model, q, link)[:3, 3], state[4], atol=1e-6)
                J = pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL_WORLD_ALIGNED) @ mp.P
                R0 = T0[:3, :3]
                np.testing.assert_allclose(link_jacobian(model, q, link), np.vstack([R0 @ J[3:], R0 @ J[:3]]), atol=1e-12)
                cases += 1
            np.testing.assert_allclose(center_of_mass(model, q), T0[:3, :3] @ pin.centerOfMass(pm, pd, qp) + T0[:3, 3],
                                       atol=1e-12)
            # a world wrench [torque, force] on link 7, about its origin
            from simbench.dynamics import inverse_dynamics

            w = rng.normal(size=6)
            R7 = T0[:3, :3] @ pd.oMf[pm.getFrameId("lbr_iiwa_link_7")].rotation
            fext = [pin.Force.Zero() for _ in range(pm.njoints)]
            fext[pm.getJointId("lbr_iiwa_joint_7")] = pin.Force(R7.T @ w[3:], R7.T @ w[:3])
            qd, qdd = rng.normal(size=7), rng.normal(size=7)
            tau = mp.back(pin.rnea(pm, pd, qp, mp.v(qd), mp.v(qdd), fext))
            np.testing.assert_allclose(inverse_dynamics(model, q, qd, qdd, f_ext={"lbr_iiwa_link_7": w}), tau,
                                       atol=1e-10)
            np.testing.assert_allclose(inverse_dynamics(model, q[None], qd[None], qdd[None],
                                                        f_ext={"lbr_iiwa_link_7": w[None]})[0], tau, atol=1e-10)
    assert cases == 15


def test_sim_model_follows_a_moved_fixed_base():
    """set_pose on a fixed base: sim.model is placed where the base now is (PyBullet's
    getLinkState), and stays the same object while the base stays."""
    from simbench.dynamics import link_pose

    with simbench.Simulation(kuka_scene(), gui=False) as sim:
        first = sim.model
        assert sim.model is first
        q = np.array([0.2, 0.4, 0.0, -0.8, 0.3, 0.5, 0.0])
        sim.robot.reset(q)
        sim.set_pose("robot", [1.0, 2.0, 0.5], p.getQuaternionFromEuler([0.0, 0.4, 1.2]))
        moved = sim.model
        assert moved is not first and sim.model is moved
        for link in ("lbr_iiwa_link_2", "lbr_iiwa_link_7"):
            state = p.getLinkState(sim.robot.id, sim.robot.body.link_index(link), computeForwardKinematics=True,
                                   physicsClientId=sim.client)
            np.testing.assert_allclose(link_pose(moved, q, link)[:3, 3], state[4], atol=1e-6)
            R = np.array(p.getMatrixFromQuaternion(state[5])).reshape(3, 3)
            np.testing.assert_allclose(link_pose(moved, q, link)[:3, :3], R, atol=1e-6)
        np.testing.assert_allclose(moved.gravity, moved.root_pose[:3, :3].T @ [0, 0, -9.81], atol=1e-12)


def test_set_pose_takes_roll_pitch_yaw_as_a_scene_does():
    """sim.set_pose(body, position, [roll, pitch, yaw]) in radians (a walkthrough's [0, 0, 90]
    was refused as 'expected a quaternion'); the base link's world rotation (PyBullet's, through
    the helper's link frame) equals Rz Ry Rx in closed form, and degrees are refused with the hint."""
    from simbench.errors import ShapeError

    with simbench.Simulation(kuka_scene(), gui=False) as sim:
        for rpy in ((0.3, -0.2, 1.0), (0.0, 0.0, math.pi / 2), (-1.2, 0.4, -2.5)):
            sim.set_pose("robot", [0.5, -0.2, 1.5], list(rpy))
            pos, quat = sim.base_pose("robot")
            np.testing.assert_allclose(pos, [0.5, -0.2, 1.5], atol=1e-6)
            np.testing.assert_allclose(np.array(p.getMatrixFromQuaternion(quat.tolist())).reshape(3, 3),
                                       rpy_matrix(*rpy), atol=1e-6)
        with pytest.raises(ShapeError, match=r"orientation \[0\.0, 0\.0, 90\.0\]: 90 rad is more than a turn; "
                                             r"expected roll pitch yaw in radians \(90 degrees is 1\.571 rad\)"):
            sim.set_pose("robot", [0.0, 0.0, 1.0], [0, 0, 90])
        with pytest.raises(ShapeError, match=r"orientation \[0\.0, 0\.0, 90\.0, 1\.0\]: 90 is more than a turn: not a "
                                             r"quaternion"):
            sim.set_pose("robot", [0.0, 0.0, 1.0], [0, 0, 90, 1])      # degrees where a quaternion goes
        sim.set_pose("robot", [0.0, 0.0, 1.0], [0, 0, 2, 0])           # a scaled quaternion: normalised
        np.testing.assert_allclose(np.abs(sim.base_pose("robot")[1]), [0, 0, 1, 0], atol=1e-6)


def test_a_massless_base_left_free_is_held_still_and_the_model_says_so():
    """The iiwa's base link has no mass; a scene that leaves fixed_base out gives it a free base,
    which PyBullet keeps still (a massless base is static). sim.model used to float (nq 14) and
    predicted the arm falling at up to 210 rad/s^2 while PyBullet held it. Oracle: PyBullet's
    stepping: computed torque with sim.model holds the pose, and the base does not move."""
    scene = {"body": [{"name": "robot", "urdf": KUKA, "position": [0.2, -0.1, 0.3], "orientation": [0, 0, 0.7]}]}
    with simbench.Simulation(scene, gui=False) as sim:
        assert p.getDynamicsInfo(sim.bodies["robot"], -1, physicsClientId=sim.client)[0] == 0.0   # the premise
        robot = sim.robot
        assert not robot.floating and (sim.model.nq, sim.model.nv) == (7, 7)
        q, v = robot.model_state()
        assert q.shape == (7,) and v.shape == (7,)
        robot.change_dynamics(linearDamping=0.0, angularDamping=0.0, jointDamping=0.0)
        robot.reset(Q_HOLD)
        base = p.getBasePositionAndOrientation(sim.bodies["robot"], physicsClientId=sim.client)
        err = 0.0
        for _ in range(240):
            q, qd = robot.state()
            robot.set_torques(inverse_dynamics(sim.model, q, qd, 25.0 * (Q_HOLD - q) - 10.0 * qd))
            sim.step()
            err = max(err, float(np.abs(robot.q - Q_HOLD).max()))
        assert err < 1e-6, err
        after = p.getBasePositionAndOrientation(sim.bodies["robot"], physicsClientId=sim.client)
        np.testing.assert_allclose(np.r_[after[0], after[1]], np.r_[base[0], base[1]], atol=1e-12)


@pytest.mark.parametrize("damping", [True, False])
def test_gravity_compensation_needs_the_urdf_damping_pybullet_applies(damping):
    """PyBullet applies the iiwa's <dynamics damping="0.5">: gravity compensation from sim.model
    holds the arm still (PyBullet's stepping as the oracle) only with damping=True, as the docs
    say; without it the arm drifts from rest (a walkthrough measured 0.22 rad in 1 s, the joint
    speed at PyBullet's 100 rad/s cap)."""
    scene = {"body": [{"name": "robot", "urdf": KUKA, "fixed_base": True,
                       "joints": {"lbr_iiwa_joint_2": 0.7, "lbr_iiwa_joint_4": -0.5}}]}
    with simbench.Simulation(scene, gui=False) as sim:
        robot, q0 = sim.robot, sim.robot.q
        drift = 0.0
        for _ in range(240):
            q, qd = robot.state()
            robot.set_torques(inverse_dynamics(sim.model, q, qd, np.zeros(7), damping=damping))
            sim.step()
            drift = max(drift, float(np.abs(robot.q - q0).max()))
    assert (drift < 1e-9) if damping else (drift > 0.1), drift
