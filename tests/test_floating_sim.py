"""Floating bases in scenes: ``sim.model`` of a body with ``fixed_base = false`` is a free-flyer
model and ``sim.robot.model_state()`` / ``set_model_state(q, v)`` speak its conventions.

Oracles: direct PyBullet calls (``getBasePositionAndOrientation``, ``getBaseVelocity``,
``getJointState``, ``resetBasePositionAndOrientation``, ``resetBaseVelocity``) with the
rigid-body velocity transfer written out here, and PyBullet's own stepping of a quadruped in
zero gravity under joint torques against our forward dynamics from the same state.
"""
import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.bullet.records import JointState, dynamics_info
from simbench.dynamics import forward_dynamics, simulate_model
from simbench.dynamics.configuration import difference

#: PyBullet keeps poses and the base's local inertial frame to about single precision
#: (measured: 1.5e-8 on a quaternion written and read back, 1.4e-7 on a rotation entry)
TOL = 1e-6
ROBOTS = {"a1": "pybullet_data:a1/a1.urdf", "laikago": "pybullet_data:laikago/laikago_toes_zup.urdf"}


def scene(urdf, gravity=(0.0, 0.0, 0.0), scale=1.0, fixed=False):
    return {"gravity": list(gravity), "body": [{"name": "robot", "urdf": urdf, "position": [0.3, -0.2, 3.0],
                                                "orientation": [0.2, -0.1, 0.5], "scale": scale,
                                                "fixed_base": fixed}]}


def rot(quat):
    return np.array(p.getMatrixFromQuaternion(list(quat))).reshape(3, 3)


def random_state(model, rng):
    q = np.empty(model.nq)
    q[:3] = rng.uniform(-1, 1, 3) + [0, 0, 3]
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    lo, hi = model.lower[7:], model.upper[7:]
    lo, hi = np.where(np.isfinite(lo), lo, -1.0), np.where(np.isfinite(hi), hi, 1.0)
    q[7:] = lo + (hi - lo) * rng.uniform(0.4, 0.6, model.nv - 6)  # far from the limits
    return q, rng.normal(size=model.nv)


def pybullet_state(sim):
    """(COM position, COM quaternion, COM velocity, angular velocity, joint q, joint qd) by direct calls."""
    bid, c = sim.robot.id, sim.client
    pos, orn = p.getBasePositionAndOrientation(bid, physicsClientId=c)
    lin, ang = p.getBaseVelocity(bid, physicsClientId=c)
    js = [JointState(*p.getJointState(bid, j, physicsClientId=c)) for j in sim.robot.body.movable_indices]
    return (np.array(pos), np.array(orn), np.array(lin), np.array(ang),
            np.array([s.position for s in js]), np.array([s.velocity for s in js]))


@pytest.mark.parametrize("name", list(ROBOTS))
@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_model_state_against_direct_pybullet_calls(name, scale):
    """Write with set_model_state, read with PyBullet's calls, and the reverse; the base's COM
    is ``p + R c`` and moves at ``R v + (R w) x (R c)`` (c from getDynamicsInfo)."""
    rng = np.random.default_rng(1)
    cases = 0
    with simbench.Simulation(scene(ROBOTS[name], scale=scale), gui=False) as sim:
        robot, model = sim.robot, sim.model
        assert robot.floating and model.floating_base and (model.nq, model.nv) == (19, 18)
        info = dynamics_info(robot.id, -1, sim.client)
        c, R_in = np.array(info.local_inertial_position), rot(info.local_inertial_orientation)
        if name == "a1":  # a1's base COM is off the link origin: the velocity transfer matters
            assert np.linalg.norm(c) > 1e-3
        for _ in range(5):
            q, v = random_state(model, rng)
            robot.set_model_state(q, v)
            pos, orn, lin, ang, jq, jqd = pybullet_state(sim)
            R = rot(q[3:7])
            np.testing.assert_allclose(pos, q[:3] + R @ c, atol=TOL)
            np.testing.assert_allclose(rot(orn), R @ R_in, atol=TOL)
            np.testing.assert_allclose(ang, R @ v[3:6], atol=TOL)
            np.testing.assert_allclose(lin, R @ v[:3] + np.cross(R @ v[3:6], R @ c), atol=TOL)
            np.testing.assert_allclose(jq, q[7:], atol=1e-12)
            np.testing.assert_allclose(jqd, v[6:], atol=1e-12)
            # the reverse: PyBullet's own resets, read back as (q, v)
            q2, v2 = random_state(model, rng)
            R2 = rot(q2[3:7])
            w_world, v_com = rng.normal(size=3), rng.normal(size=3)
            p.resetBasePositionAndOrientation(robot.id, (q2[:3] + R2 @ c).tolist(),
                                              p.multiplyTransforms([0, 0, 0], q2[3:7], [0, 0, 0],
                                                                   info.local_inertial_orientation)[1],
                                              physicsClientId=sim.client)
            p.resetBaseVelocity(robot.id, v_com.tolist(), w_world.tolist(), physicsClientId=sim.client)
            for j, x, xd in zip(robot.body.movable_indices, q2[7:], v2[6:]):
                p.resetJointState(robot.id, j, x, xd, physicsClientId=sim.client)
            q3, v3 = robot.model_state()
            np.testing.assert_allclose(q3[:3], q2[:3], atol=TOL)
            np.testing.assert_allclose(rot(q3[3:7]), R2, atol=TOL)
            np.testing.assert_allclose(v3[3:6], R2.T @ w_world, atol=TOL)
            np.testing.assert_allclose(v3[:3], R2.T @ (v_com - np.cross(w_world, R2 @ c)), atol=TOL)
            np.testing.assert_allclose(q3[7:], q2[7:], atol=1e-12)
            np.testing.assert_allclose(v3[6:], v2[6:], atol=1e-12)
            cases += 2
    assert cases == 10


@pytest.mark.parametrize("name", list(ROBOTS))
def test_model_state_gives_back_the_quaternion_set_and_no_sign_jumps(name):
    """A rotation has two quaternions and PyBullet answers either (measured: the other one for
    101 of 200 random quaternions written to a1). set_model_state(q) then model_state() gives
    q's own quaternion back, whichever hemisphere; along a tumbling fall, each reported
    quaternion is the rotation PyBullet holds (getBasePositionAndOrientation composed with the
    inverse of the local inertial frame, here) and no two in a row are opposite."""
    rng = np.random.default_rng(7)
    with simbench.Simulation(scene(ROBOTS[name]), gui=False) as sim:
        robot, model = sim.robot, sim.model
        info = dynamics_info(robot.id, -1, sim.client)
        R_in = rot(info.local_inertial_orientation)
        negative_w = 0
        for _ in range(100):
            q, v = random_state(model, rng)
            negative_w += q[6] < 0
            robot.set_model_state(q, v)
            np.testing.assert_allclose(robot.model_state()[0][3:7], q[3:7], atol=TOL)
        assert 30 < negative_w < 70      # both hemispheres were written
        q, v = random_state(model, rng)
        v[3:6] = [3.0, -2.0, 4.0]        # a fast tumble: the quaternion goes around
        robot.set_model_state(q, v)
        last, turned = robot.model_state()[0][3:7], 0.0
        for _ in range(600):
            sim.step()
            quat = robot.model_state()[0][3:7]
            _, orn = p.getBasePositionAndOrientation(robot.id, physicsClientId=sim.client)
            np.testing.assert_allclose(rot(quat), rot(orn) @ R_in.T, atol=TOL)
            assert quat @ last > 0.9, (last, quat)
            turned += np.arccos(min(1.0, abs(quat @ last))) * 2
            last = quat
        assert turned > 2 * np.pi        # more than a full turn: a sign flip had its chances


def test_sim_model_follows_fixed_base():
    """fixed_base = false: free-flyer model with the world's gravity; true: the welded model with
    gravity in the (rotated) base frame, joints only in model_state."""
    g = (0.0, 0.0, -9.81)
    with simbench.Simulation(scene(ROBOTS["a1"], gravity=g), gui=False) as sim:
        assert sim.model.floating_base and sim.model.gravity == g
        q, v = sim.robot.model_state()
        assert q.shape == (19,) and v.shape == (18,)
    with simbench.Simulation(scene(ROBOTS["a1"], gravity=g, fixed=True), gui=False) as sim:
        model = sim.model
        assert not model.floating_base and not sim.robot.floating and (model.nq, model.nv) == (12, 12)
        R = rot(p.getQuaternionFromEuler([0.2, -0.1, 0.5]))
        np.testing.assert_allclose(model.gravity, R.T @ np.array(g), atol=1e-12)
        q, v = sim.robot.model_state()
        assert q.shape == (12,) and v.shape == (12,)


def test_set_model_state_refuses_a_wrong_length():
    with simbench.Simulation(scene(ROBOTS["a1"]), gui=False) as sim:
        with pytest.raises(simbench.errors.ShapeError, match=r"q has shape \(12,\); expected 19 finite numbers"):
            sim.robot.set_model_state(np.zeros(12))


def pybullet_vs_ours(urdf, dt, seconds=0.02):
    """PyBullet stepping (damping off, motors off, torques held) vs our semi-implicit Euler and
    RK4 from the same state in zero gravity: (one-step joint acceleration error relative to the
    largest acceleration, [dq, dv] after ``seconds`` against semi-implicit Euler)."""
    rng = np.random.default_rng(0)
    with simbench.Simulation(scene(urdf), gui=False, dt=dt) as sim:
        robot, model = sim.robot, sim.model
        robot.change_dynamics(linearDamping=0.0, angularDamping=0.0, jointDamping=0.0)
        q0, v0 = random_state(model, rng)
        v0 *= 0.5
        tau = rng.normal(size=model.nv - 6)
        full = np.r_[np.zeros(6), tau]
        robot.set_model_state(q0, v0)
        robot.set_torques(tau)
        a = forward_dynamics(model, q0, v0, full)
        sim.step()
        _, v1 = robot.model_state()
        accel_err = np.abs((v1 - v0)[6:] / dt - a[6:]).max() / np.abs(a).max()
        robot.set_model_state(q0, v0)
        n = round(seconds / dt)
        sim.step(n)
        qp, vp = robot.model_state()
        traj = simulate_model(model, q0, v0, dt, n, lambda t, q, v: full, method="semi_implicit")
        dq = difference(model, traj.q[-1], qp)
        return accel_err, np.abs(dq).max(), np.abs(vp - traj.qd[-1]).max(), np.abs(dq[6:]).max()


@pytest.mark.parametrize("name", list(ROBOTS))
def test_forward_dynamics_against_pybullet_stepping(name):
    """One PyBullet step gives the joint accelerations of our forward dynamics (measured relative
    1.0e-9 a1, 1.7e-10 laikago); over 0.02 s the joints of PyBullet and of our semi-implicit Euler
    agree to ~5e-11 rad and the base differs by the base integration only, a first-order effect: a
    quarter of the step, a quarter of the difference (a1: dq 1.7e-5, dv 2.5e-3 at 1/240 s;
    3.6e-6, 5.9e-4 at 1/960 s)."""
    coarse, fine = pybullet_vs_ours(ROBOTS[name], 1 / 240), pybullet_vs_ours(ROBOTS[name], 1 / 960)
    assert coarse[0] < 1e-8 and fine[0] < 1e-8
    assert coarse[3] < 1e-8 and fine[3] < 1e-8
    assert coarse[1] < 1e-4 and coarse[2] < 1e-2
    for k in (1, 2):
        assert fine[k] < coarse[k] / 3   # first-order convergence to the same motion
