"""simbench.dynamics.kinematics: poses, Jacobians, centre of mass, energies. Oracles: Pinocchio
(``jacobianCenterOfMass``, ``computeKineticEnergy``, ``computePotentialEnergy``) and central
differences of the forward kinematics along the manifold (``integrate``), which check the
Jacobian columns of a floating base and of spherical joints independently of their formulas."""
import numpy as np
import pytest

from _dyn_helpers import rel_err, require
from simbench.oracles.pinocchio import PinocchioMap
from simbench.errors import SimbenchError, UnknownNameError
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


@pytest.mark.parametrize("path,floating", [("pybullet_data:kuka_iiwa/model.urdf", False),
                                           ("pybullet_data:a1/a1.urdf", True)], ids=["iiwa", "a1-floating"])
def test_link_jacobians_and_poses_against_pinocchio(path, floating):
    """``link_jacobian`` and ``forward_kinematics`` for one configuration in several forms (a
    float64 array: the compiled fast path; a list, a strided view, float32: the general path),
    a batch, and a point fixed to the link (one, or one per configuration), against Pinocchio's
    frame placements and ``LOCAL_WORLD_ALIGNED`` frame Jacobians (rows [linear; angular]; at a
    point p of the link: linear rows ``v_o + w x (p - o)``); the centre of mass and its Jacobian
    (the links' COM Jacobians) against ``centerOfMass`` and ``jacobianCenterOfMass``."""
    pin = require("pinocchio")
    model = RobotModel.from_urdf(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(str(model.source), *([pin.JointModelFreeFlyer()] if floating else []))
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(12)
    Q = model.random_configuration(rng, 3)
    links = [model.link_names[-1], model.link_names[len(model.link_names) // 2]]
    pts = rng.normal(size=(3, 3)) * 0.1

    def oracle(q, link, pt):
        pin.computeJointJacobians(pm, pd, mp.q(q))
        pin.updateFramePlacements(pm, pd)
        fid = pm.getFrameId(link, pin.FrameType.BODY)
        J = pin.getFrameJacobian(pm, pd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED) @ mp.P
        T = pd.oMf[fid]
        r = T.rotation @ pt
        lin = J[:3] - np.cross(r[:, None], J[3:], axis=0)   # v_p = v_o + w x r = v_o - r x w
        return np.vstack([J[3:], lin]), T.homogeneous

    compared = 0
    for link in links:
        k = model.link_names.index(link)
        for s in range(3):
            q = Q[s]
            Jo, T = oracle(q, link, np.zeros(3))
            Jp, _ = oracle(q, link, pts[s])
            strided = np.repeat(q, 2)[::2]
            for form in (q, q.tolist(), strided):
                assert rel_err(dyn.link_jacobian(model, form, link), Jo) < 1e-12
                assert rel_err(dyn.link_jacobian(model, form, link, point=pts[s]), Jp) < 1e-12
                assert rel_err(dyn.forward_kinematics(model, form)[k], T) < 1e-12
                compared += 3
            q32 = q.astype(np.float32)
            q64 = q32.astype(float)
            if floating:   # ours rotates by q/|q| (a float32 quaternion is not of unit norm)
                q64[3:7] /= np.linalg.norm(q64[3:7])
            assert rel_err(dyn.link_jacobian(model, q32, link), oracle(q64, link, np.zeros(3))[0]) < 1e-12
            compared += 1
        want = np.array([oracle(Q[s], link, pts[s])[0] for s in range(3)])
        assert rel_err(dyn.link_jacobian(model, Q, link, point=pts), want) < 1e-12
        assert rel_err(dyn.link_jacobian(model, Q[0], link, point=pts)[2], oracle(Q[0], link, pts[2])[0]) < 1e-12
        assert rel_err(dyn.forward_kinematics(model, Q)[:, k], [oracle(x, link, np.zeros(3))[1] for x in Q]) < 1e-12
        compared += 3
    Jc = np.array([pin.jacobianCenterOfMass(pm, pd, mp.q(x)) @ mp.P for x in Q])
    for s in range(3):
        assert rel_err(dyn.com_jacobian(model, Q[s]), Jc[s]) < 1e-12
        assert rel_err(dyn.center_of_mass(model, Q[s]), pin.centerOfMass(pm, pd, mp.q(Q[s]))) < 1e-12
    assert rel_err(dyn.com_jacobian(model, Q), Jc) < 1e-12
    compared += 7
    assert compared == 2 * (3 * 10 + 3) + 7


def test_link_pose_by_name_against_pinocchios_frame_placement():
    """``link_pose(model, q, name)``: one link's world pose, asked by name (a user had to index
    forward_kinematics by ``model.link_index``). Oracle: Pinocchio's ``oMf`` of the frame of that
    name (its own URDF parser): a fixed-joint link (the Panda's hand, merged into link 7 for the
    dynamics), a leaf, and a floating a1's lower leg and toe; batched over leading dimensions."""
    pin = require("pinocchio")
    from simbench.oracles.pinocchio import urdf_model

    compared = 0
    for spec, floating, links in [("pybullet_data:franka_panda/panda.urdf", False, ["panda_hand", "panda_leftfinger"]),
                                  ("pybullet_data:a1/a1.urdf", True, ["FR_lower", "FR_toe", "trunk"])]:
        model = RobotModel.from_urdf(spec, floating_base=floating)
        pm = urdf_model(model)
        pd, mp = pm.createData(), PinocchioMap(model, pm)
        Q = model.random_configuration(np.random.default_rng(4), 6)
        for link in links:
            got = dyn.link_pose(model, Q.reshape(2, 3, -1), link)
            assert got.shape == (2, 3, 4, 4)
            fid = pm.getFrameId(link)
            for q, T in zip(Q, got.reshape(6, 4, 4)):
                pin.framesForwardKinematics(pm, pd, mp.q(q))
                assert rel_err(T, pd.oMf[fid].homogeneous) < 1e-12, (spec, link)
                compared += 1
    assert compared == 30
    with pytest.raises(UnknownNameError, match="did you mean .panda_hand."):
        dyn.link_pose(RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf"), np.zeros(9), "panda_hnd")


def test_local_frame_jacobians_match_pinocchios_local():
    """``link_jacobian(..., frame="local")``: both blocks in the link's axes, Pinocchio's
    ``LOCAL`` (a Pinocchio user rotated by R^T by hand). Oracle: ``getFrameJacobian(LOCAL)`` with
    the blocks swapped, at the link origin and at a point (a frame added with that placement), on
    the iiwa and the floating a1, joints by name; a batch equals the single calls."""
    pin = require("pinocchio")
    from simbench.oracles.pinocchio import pinocchio_model
    compared = 0
    for urdf, floating, link in (("pybullet_data:kuka_iiwa/model.urdf", False, "lbr_iiwa_link_5"),
                                 ("pybullet_data:a1/a1.urdf", True, "FR_lower")):
        model = RobotModel.from_urdf(urdf, floating_base=floating)
        pm = pinocchio_model(model)
        point = np.array([0.03, -0.02, 0.05])
        fid = pm.getFrameId(link)
        pf = pm.frames[fid]
        at = pm.addFrame(pin.Frame("at_point", pf.parentJoint, fid, pf.placement * pin.SE3(np.eye(3), point),
                                   pin.FrameType.OP_FRAME))
        pd, mp = pm.createData(), PinocchioMap(model, pm)
        Q = model.random_configuration(np.random.default_rng(9), 4)
        for q in Q:
            pin.computeJointJacobians(pm, pd, mp.q(q))
            pin.updateFramePlacements(pm, pd)
            for frame_id, pt in ((fid, None), (at, point)):
                Jp = pin.getFrameJacobian(pm, pd, frame_id, pin.ReferenceFrame.LOCAL)[:, mp.pin_of_v]
                want = np.vstack([Jp[3:], Jp[:3]])
                assert np.abs(dyn.link_jacobian(model, q, link, pt, frame="local") - want).max() < 1e-12
                compared += 1
        batch = dyn.link_jacobian(model, Q, link, point, frame="local")
        assert np.abs(batch - np.stack([dyn.link_jacobian(model, q, link, point, frame="local") for q in Q])).max() < 1e-14
    assert compared == 16
    with pytest.raises(SimbenchError, match=r"^frame = 'LOCAL'; expected 'world'"):
        dyn.link_jacobian(model, Q[0], link, frame="LOCAL")
