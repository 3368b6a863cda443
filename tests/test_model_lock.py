"""``simbench.lock_joints``: joints made rigid at a value, as Pinocchio's ``buildReducedModel``.

Oracle: Pinocchio's reduced model of the same file at the same reference configuration (joints
by name): inverse dynamics, mass matrix and every remaining link's pose; and the symbolic
Lagrangian of the Panda's arm, which the fingers' second branch kept from being derived.
"""
import numpy as np
import pytest

from _dyn_helpers import rel_err, require
import simbench
from simbench.dynamics import inverse_dynamics, link_pose, mass_matrix
from simbench.errors import SimbenchError, UnknownNameError

CASES = [("pybullet_data:franka_panda/panda.urdf", False,
          {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.03, "panda_joint3": 0.4}),
         ("pybullet_data:r2d2.urdf", False, {"right_front_wheel_joint": 2.5, "gripper_extension": -0.2}),
         ("pybullet_data:a1/a1.urdf", True, {"FR_hip_joint": 0.1, "FR_upper_joint": 0.7, "FR_lower_joint": -1.4})]


@pytest.mark.parametrize("urdf, floating, locked", CASES)
def test_locked_joints_match_pinocchios_reduced_model(urdf, floating, locked):
    pin = require("pinocchio")
    from simbench.oracles.pinocchio import PinocchioMap, pinocchio_model
    model = simbench.RobotModel.from_urdf(urdf, floating_base=floating)
    reduced = simbench.lock_joints(model, locked)
    assert reduced.joint_names == tuple(n for n in model.joint_names if n not in locked)
    assert reduced.nv == model.nv - len(locked)
    pm = pinocchio_model(model)
    q_ref = model.neutral()
    for name, value in locked.items():
        q_ref[model.joint_index(name)] = value
    rm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in locked], PinocchioMap(model, pm).q(q_ref))
    rd, mp = rm.createData(), PinocchioMap(reduced, rm)
    rng = np.random.default_rng(5)
    compared = 0
    for _ in range(4):
        q = reduced.random_configuration(rng)
        v, a = rng.normal(size=reduced.nv), rng.normal(size=reduced.nv)
        assert rel_err(inverse_dynamics(reduced, q, v, a), mp.back(pin.rnea(rm, rd, mp.q(q), mp.v(v), mp.v(a)))) < 1e-10
        assert rel_err(mass_matrix(reduced, q), mp.back_matrix(pin.crba(rm, rd, mp.q(q)))) < 1e-10
        pin.framesForwardKinematics(rm, rd, mp.q(q))
        for link in reduced.link_names:
            want = rd.oMf[rm.getFrameId(link)].homogeneous
            assert np.abs(link_pose(reduced, q, link) - want).max() < 1e-12, link
            compared += 1
    assert compared == 4 * len(model.link_names)


def test_the_pandas_arm_derives_once_its_fingers_are_locked():
    """``derive(panda)`` refused (a second branch under joint 7); with the fingers locked the
    Lagrangian of the 7 joints exists and gives our inverse dynamics (4 of them locked too, to
    keep the derivation short)."""
    from simbench.dynamics.symbolic import derive
    model = simbench.RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")
    with pytest.raises(SimbenchError, match=r"not a serial chain.*lock the other branch first: "
                                            r"simbench.lock_joints\(model, \{'panda_finger_joint2': 0.0\}\)$"):
        derive(model)
    arm = simbench.lock_joints(model, {"panda_finger_joint1": 0.01, "panda_finger_joint2": 0.01,
                                       "panda_joint5": 0.3, "panda_joint6": 1.2, "panda_joint7": -0.5})
    eom = derive(arm).lambdify()
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-1, 1, (3, 4))
    assert rel_err(eom.inverse_dynamics(q, qd, qdd), inverse_dynamics(arm, q, qd, qdd)) < 1e-9


def test_bad_locks_are_one_line():
    model = simbench.RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    with pytest.raises(UnknownNameError, match=r"unknown movable joint 'lbr_iiwa_joint_9' .*did you mean 'lbr_iiwa_joint_7'"):
        simbench.lock_joints(model, {"lbr_iiwa_joint_9": 0.0})
    with pytest.raises(SimbenchError, match=r"^lbr_iiwa_joint_2 = nan; expected a finite number \(rad or m\)$"):
        simbench.lock_joints(model, {"lbr_iiwa_joint_2": float("nan")})
    with pytest.raises(SimbenchError, match=r"^values = \['lbr_iiwa_joint_2'\]; expected \{joint name: value\}"):
        simbench.lock_joints(model, ["lbr_iiwa_joint_2"])
    humanoid = simbench.RobotModel.from_urdf("pybullet_data:humanoid/humanoid.urdf", floating_base=False)
    assert humanoid.joint_type[humanoid.joint_all_names.index("chest")] == "spherical"
    with pytest.raises(SimbenchError, match=r"joint 'chest' is spherical; lock_joints locks revolute"):
        simbench.lock_joints(humanoid, {"chest": 0.0})


def test_lock_values_and_records_a_user_can_rely_on():
    """Walkthrough P: text ('0.1') and degrees (90) were locked silently, a fixed or locked joint
    was 'unknown', a str model raised AttributeError, and the locked model still listed the
    fingers' mimic issue with no record of the values. Oracle: the messages; the model's issues;
    a model with every joint locked still has centroidal quantities (all zero, 6 x 0)."""
    from simbench.dynamics import centroidal_momentum, centroidal_momentum_matrix, link_acceleration_bias
    panda = simbench.RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")
    for values, text in [({"panda_joint1": "0.1"}, "panda_joint1 = '0.1'; expected a finite number (rad or m)"),
                         ({"panda_joint1": 90}, "panda_joint1 = 90 rad, outside its limits [-2.9671, 2.9671] "
                                                "(degrees? 90 degrees is 1.571 rad)"),
                         ({"panda_hand_joint": 0.0}, "joint 'panda_hand_joint' is fixed (in the file, or locked already)")]:
        with pytest.raises(SimbenchError) as err:
            simbench.lock_joints(panda, values)
        assert str(err.value).startswith(text), err.value
    with pytest.raises(SimbenchError, match=r"^model = 'panda'; expected a RobotModel"):
        simbench.lock_joints("panda", {})
    hand = simbench.lock_joints(panda, {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.03})
    assert [i.kind for i in panda.issues].count("mimic_joint") == 1
    assert [i.kind for i in hand.issues].count("mimic_joint") == 0
    assert [(i.data["joint"], i.data["value"]) for i in hand.issues if i.kind == "locked_joint"] == [
        ("panda_finger_joint1", 0.02), ("panda_finger_joint2", 0.03)]
    assert "locked at 0.02 m" in hand.summary()
    with pytest.raises(SimbenchError, match="joint 'panda_finger_joint1' is fixed"):
        simbench.lock_joints(hand, {"panda_finger_joint1": 0.0})
    rigid = simbench.lock_joints(panda, {n: 0.0 for n in panda.joint_names})
    assert centroidal_momentum_matrix(rigid, np.zeros(0)).shape == (6, 0)
    assert np.array_equal(centroidal_momentum(rigid, np.zeros((3, 0)), np.zeros((3, 0))), np.zeros((3, 6)))
    assert np.array_equal(link_acceleration_bias(rigid, np.zeros(0), np.zeros(0), "panda_hand"), np.zeros(6))


def test_a_mimic_pair_locked_apart_is_said(caplog):
    """The Panda's fingers are tied in the file (finger 2 mimics finger 1, x1 + 0); locking them
    at 0.02 and 0.03 gave no word. Oracle: the file's <mimic> (read back from the model)."""
    import logging
    panda = simbench.RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")
    mimic = panda.joint_mimic[panda.joint_all_names.index("panda_finger_joint2")]
    assert (mimic.joint, mimic.multiplier, mimic.offset) == ("panda_finger_joint1", 1.0, 0.0)
    with caplog.at_level(logging.WARNING, logger="simbench.model_lock"):
        simbench.lock_joints(panda, {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02})
        assert not caplog.records
        simbench.lock_joints(panda, {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.03})
    assert [r.getMessage() for r in caplog.records] == [
        "panda: joint 'panda_finger_joint2' mimics 'panda_finger_joint1' (x1 + 0), so it would be at 0.02, "
        "but is locked at 0.03"]
