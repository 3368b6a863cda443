"""sim.robot on bodies with spherical joints (model_state / set_model_state / torques against
PyBullet's own link states), joint values set outside their limits, and a floating base's
torques given with the base's 6 entries."""
import logging
import subprocess
import sys

import numpy as np
import pytest

import simbench
from simbench.dynamics import forward_dynamics, forward_kinematics, link_jacobian
from simbench.errors import ShapeError

pb = pytest.importorskip("pybullet")

HUMANOID = "pybullet_data:humanoid/humanoid.urdf"
ARM = "simbench:urdf/defects/spherical_joint.urdf"   # inertial axes rotated: PyBullet's joint frame differs


def _compare_links(sim, q, v):
    """Max errors of PyBullet's link frames (position, rotation) and angular velocities against
    simbench.dynamics of the same (q, v); the number of links compared."""
    r, m = sim.robot, sim.model
    T = forward_kinematics(m, q)
    errs = np.zeros(3)
    n = pb.getNumJoints(r.id, physicsClientId=sim.client)
    for li in range(n):
        name = pb.getJointInfo(r.id, li, physicsClientId=sim.client)[12].decode()
        st = pb.getLinkState(r.id, li, computeLinkVelocity=1, computeForwardKinematics=1, physicsClientId=sim.client)
        k = m.link_names.index(name)
        R = np.array(pb.getMatrixFromQuaternion(st[5])).reshape(3, 3)
        w = (link_jacobian(m, q, name) @ v)[:3]
        errs = np.maximum(errs, [np.abs(np.array(st[4]) - T[k][:3, 3]).max(), np.abs(R - T[k][:3, :3]).max(),
                                 np.abs(np.array(st[7]) - w).max()])
    return errs, n


@pytest.mark.parametrize("urdf, fixed, links", [(HUMANOID, False, 15), (ARM, True, 3)])
def test_model_state_matches_pybullet_link_states(urdf, fixed, links):
    rng = np.random.default_rng(7)
    scene = {"gravity": [0, 0, 0], "body": [{"name": "robot", "urdf": urdf, "position": [0.1, -0.2, 1.5],
                                             "fixed_base": fixed}]}
    with simbench.Simulation(scene, gui=False) as sim:
        r, m = sim.robot, sim.model
        assert r.spherical_names and r.floating == (not fixed)
        assert m.nq == (7 if not fixed else 0) + r.dof + 4 * len(r.spherical_names)
        compared = 0
        for _ in range(6):
            q = m.random_configuration(rng)
            v = rng.normal(size=m.nv)
            r.set_model_state(q, v)
            errs, n = _compare_links(sim, q, v)
            assert n == links
            # PyBullet's frames go through float32 quaternion calls: 1e-6
            assert errs[0] < 1e-6 and errs[1] < 1e-6 and errs[2] < 1e-6, errs
            q2, v2 = r.model_state()
            assert np.abs(q2 - q).max() < 1e-12 and np.abs(v2 - v).max() < 1e-12
            compared += n
        assert compared == 6 * links


def test_spherical_torque_accelerates_as_the_model_says():
    """One step from rest with torques on the spherical joint only (gravity 0): PyBullet's joint
    velocities equal dt * M^-1 tau of sim.model (rotated inertial axes: the torque's frame)."""
    scene = {"gravity": [0, 0, 0], "body": [{"name": "robot", "urdf": ARM, "fixed_base": True}]}
    rng = np.random.default_rng(3)
    with simbench.Simulation(scene, gui=False, dt=1e-4) as sim:
        r, m = sim.robot, sim.model
        r.change_dynamics(linearDamping=0, angularDamping=0, jointDamping=0)
        cases = 0
        for _ in range(3):
            q = m.random_configuration(rng)
            tau = np.zeros(m.nv)
            tau[1:4] = rng.normal(size=3)   # joint2's three entries (joint1, joint2 x3, joint3)
            r.set_model_state(q)
            r.set_torques(tau)
            sim.step()
            _, v = r.model_state()
            expected = sim.dt * forward_dynamics(m, q, np.zeros(m.nv), tau)
            assert np.abs(v - expected).max() < 1e-3 * np.abs(expected).max(), (v, expected)
            cases += 1
        assert cases == 3 and r.modes == dict.fromkeys(r.joint_names, "torque")


def test_view_opens_the_humanoid(tmp_path):
    out = tmp_path / "hv.png"
    run = subprocess.run([sys.executable, "-m", "simbench", "view", HUMANOID, "--direct", "--out", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    assert out.stat().st_size > 1000 and "right_elbow=" in run.stdout


KUKA = {"body": [{"name": "robot", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "fixed_base": True}]}


def test_reset_outside_limits_warns_once_per_joint(caplog):
    with simbench.Simulation(KUKA, gui=False) as sim, caplog.at_level(logging.WARNING):
        r = sim.robot
        r.reset({"lbr_iiwa_joint_2": 3.5})
        r.reset({"lbr_iiwa_joint_2": 3.4})
        q, v = r.model_state()
        q[3] = -2.5   # joint 4: limits +-2.094
        r.set_model_state(q, v)
        r.reset({"lbr_iiwa_joint_2": 1.0})   # inside: nothing
        lines = [rec.getMessage() for rec in caplog.records if "outside its limits" in rec.getMessage()]
        assert len(lines) == 2, lines
        assert lines[0] == ("reset: joint 'lbr_iiwa_joint_2' set to 3.5 rad, outside its limits [-2.094, 2.094]; "
                            "PyBullet's limit pushes it back from the next step")
        assert lines[1].startswith("set_model_state: joint 'lbr_iiwa_joint_4' set to -2.5 rad")
        # the value was set all the same: PyBullet's own state
        assert pb.getJointState(r.id, 3, physicsClientId=sim.client)[0] == -2.5


A1_FLOATING = {"gravity": [0, 0, 0], "body": [{"name": "robot", "urdf": "pybullet_data:a1/a1.urdf",
                                               "position": [0, 0, 1], "fixed_base": False}]}


def test_floating_base_torques_take_nv_values_with_a_zero_base():
    with simbench.Simulation(A1_FLOATING, gui=False) as sim:
        r, m = sim.robot, sim.model
        assert (m.nv, r.dof) == (18, 12)
        tau = np.r_[np.zeros(6), np.arange(1.0, 13.0)]
        r.set_torques(tau)
        assert np.array_equal(r.tau, np.arange(1.0, 13.0))   # the commanded torques, in joint order
        sim.step()
        states = pb.getJointStates(r.id, list(r._idx), physicsClientId=sim.client)
        assert len(states) == 12
        tau[0] = 5.0
        with pytest.raises(simbench.SimbenchError) as err:
            r.set_torques(tau)
        msg = str(err.value)
        assert "\n" not in msg and "tau[6:]" in msg and "[5.0, 0.0, 0.0, 0.0, 0.0, 0.0]" in msg
        with pytest.raises(simbench.SimbenchError, match=r"shape \(17,\)"):
            r.set_torques(np.zeros(17))


def test_a_state_read_and_written_back_warns_of_no_limit(caplog):
    """The README's floating-base block reads the a1's state and writes it back: its knees load
    at 0, outside [-2.697, -0.916], and set_model_state warned four times about values the user
    never chose (walkthrough V). Only joints given a new value outside the limits get a line.
    Oracle: PyBullet's own joint positions and the a1's URDF limits."""
    with simbench.Simulation(A1_FLOATING, gui=False) as sim, caplog.at_level(logging.WARNING):
        r = sim.robot
        knees = [j for j, n in enumerate(r.joint_names) if n.endswith("_lower_joint")]
        assert len(knees) == 4 and all(pb.getJointState(r.id, r.body.movable_indices[j], physicsClientId=sim.client)[0]
                                       == 0.0 for j in knees)   # the premise: outside their limits
        q, v = r.model_state()
        r.set_model_state(q, v)
        assert not [rec for rec in caplog.records if "outside its limits" in rec.getMessage()]
        q[7 + knees[0]] = 0.1   # a new value outside: one line
        r.set_model_state(q, v)
        lines = [rec.getMessage() for rec in caplog.records if "outside its limits" in rec.getMessage()]
        assert len(lines) == 1 and "set to 0.1 rad" in lines[0], lines


def test_simulation_of_a_urdf_and_the_torque_shapes_it_takes():
    """``Simulation("pybullet_data:humanoid/humanoid.urdf")`` said "cannot read the scene file: No
    such file" (walkthrough W; ``simbench run --scene`` takes a URDF): a URDF is a one-body scene
    named "robot", base fixed. A wrong-length set_torques named only the scalar joints' form
    though the whole model's is taken. Oracle: PyBullet's joint types."""
    with simbench.Simulation("pybullet_data:humanoid/humanoid.urdf", gui=False) as sim:
        assert list(sim.bodies) == ["robot"]
        bid = sim.bodies["robot"]
        types = [pb.getJointInfo(bid, j, physicsClientId=sim.client)[2] for j in range(pb.getNumJoints(bid, physicsClientId=sim.client))]
        n_ball, n_scalar = types.count(pb.JOINT_SPHERICAL), types.count(pb.JOINT_REVOLUTE)
        assert (n_ball, n_scalar) == (8, 4) and (sim.model.nq, sim.model.nv) == (4 * n_ball + n_scalar, 3 * n_ball + n_scalar)
        with pytest.raises(ShapeError, match=r"^tau has shape \(3,\); expected \(4,\) with joints in order "
                                             r"\['right_elbow', 'left_elbow', 'right_knee', 'left_knee'\], or \(28,\) "
                                             r"in the order of the whole model's v_labels \(robot\.model\.v_labels\)$"):
            sim.robot.set_torques(np.zeros(3))
        sim.robot.set_torques(np.zeros(28))   # the whole model's form is taken
