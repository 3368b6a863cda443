"""A joint's place in q and in v by name, on models where the two differ from its place in
``joint_names``: a floating base (7 and 6 entries first) and spherical joints (4 and 3 each).
A walkthrough's ``q[a1.joint_index("FR_upper_joint")] = x`` wrote base_y. Oracle: Pinocchio's
own ``idx_q`` / ``idx_v`` of each joint by name: q, v and qdd are copied joint by joint
through the two indices, and the torques of both libraries must then agree joint by joint
(Pinocchio's URDF parser for a1; for the humanoid, whose spherical joints it cannot read, a
Pinocchio model built joint by joint from the same numbers)."""
import numpy as np
import pinocchio as pin
import pytest

from simbench.dynamics import inverse_dynamics
from simbench.model import RobotModel
from simbench.oracles.pinocchio import pinocchio_model

CASES = [("pybullet_data:a1/a1.urdf", True), ("pybullet_data:humanoid/humanoid.urdf", False),
         ("pybullet_data:humanoid/humanoid.urdf", True)]


@pytest.mark.parametrize("urdf, floating", CASES)
def test_indices_by_name_agree_with_pinocchio(urdf, floating):
    m = RobotModel.from_urdf(urdf, floating_base=floating)
    pm = pinocchio_model(m)
    assert isinstance(pm, pin.Model)
    data = pm.createData()
    rng = np.random.default_rng(3)
    q = m.random_configuration(rng) if not floating else np.r_[rng.uniform(-1, 1, 3), [0, 0, 0, 1.0],
                                                                m.random_configuration(rng)[7:]]
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    qp, vp, ap = np.zeros(pm.nq), np.zeros(pm.nv), np.zeros(pm.nv)
    if floating:
        qp[:7], vp[:6], ap[:6] = q[:7], v[:6], a[:6]
    compared = 0
    for name in m.joint_names:
        jid = pm.getJointId(name)
        nq, nv = pm.joints[jid].nq, pm.joints[jid].nv
        iq, iv = m.joint_index(name), m.velocity_index(name)
        assert m.q_labels[iq] in (name, f"{name}[qx]") and m.v_labels[iv] in (name, f"{name}[wx]")
        qp[pm.idx_qs[jid]:pm.idx_qs[jid] + nq] = q[iq:iq + nq]
        vp[pm.idx_vs[jid]:pm.idx_vs[jid] + nv] = v[iv:iv + nv]
        ap[pm.idx_vs[jid]:pm.idx_vs[jid] + nv] = a[iv:iv + nv]
    tau_pin = pin.rnea(pm, data, qp, vp, ap)
    tau = inverse_dynamics(m, q, v, a)
    for name in m.joint_names:
        jid = pm.getJointId(name)
        nv, iv = pm.joints[jid].nv, m.velocity_index(name)
        np.testing.assert_allclose(tau[iv:iv + nv], tau_pin[pm.idx_vs[jid]:pm.idx_vs[jid] + nv], atol=1e-9,
                                   err_msg=name)
        compared += 1
    if floating:
        np.testing.assert_allclose(tau[:6], tau_pin[:6], atol=1e-9)
    assert compared == len(m.joint_names) >= 12


def test_the_walkthroughs_line():
    a1 = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)
    i = a1.joint_index("FR_upper_joint")
    assert (i, a1.q_labels[i], a1.velocity_index("FR_upper_joint")) == (8, "FR_upper_joint", 7)


def test_asking_a_floating_base_by_joint_name_points_at_its_entries():
    """``a1.velocity_index("root_joint")`` was only 'unknown movable joint': the floating base has
    no joint name here; the message says where its entries are and what names them. Oracle: the
    labels themselves (q_labels[:7], v_labels[:6])."""
    from simbench.errors import UnknownNameError
    a1 = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)
    assert a1.q_labels[:7] == ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
    assert a1.v_labels[:6] == ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
    for ask in (a1.velocity_index, a1.joint_index):
        with pytest.raises(UnknownNameError, match=r"^unknown movable joint 'root_joint' in a1_description \(its "
                                                   r"floating base is q\[:7\] and v\[:6\], named by model.q_labels"):
            ask("root_joint")
    fixed = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    with pytest.raises(UnknownNameError, match=r"^unknown movable joint 'x' in lbr_iiwa[;.]"):
        fixed.joint_index("x")
