"""simbench.dynamics.centroidal: centroidal momentum matrix and momentum, link twists and the
``J' v`` acceleration bias. Oracles: Pinocchio (``computeCentroidalMap``,
``computeCentroidalMomentum``, ``getFrameVelocity`` / ``getFrameClassicalAcceleration`` with
``LOCAL_WORLD_ALIGNED`` after ``forwardKinematics(q, v, 0)``; rows ``[linear; angular]``
swapped to ours, joints matched by name by :class:`PinocchioMap`), and checks that use no
Pinocchio: ``l_G = m c'`` from :func:`com_jacobian`, the base rows of our mass matrix, central
differences of the Jacobian along the manifold, a rotated root."""
import numpy as np
import pytest

from _dyn_helpers import require
from simbench.dynamics.centroidal import (centroidal_momentum, centroidal_momentum_matrix,
                                          link_acceleration_bias, link_velocity)
from simbench.errors import ShapeError, UnknownNameError
from simbench.model import RobotModel
from simbench.oracles.pinocchio import PinocchioMap, pinocchio_model, urdf_model
import simbench.dynamics as dyn

ROBOTS = [("pybullet_data:kuka_iiwa/model.urdf", False), ("pybullet_data:franka_panda/panda.urdf", False),
          ("pybullet_data:a1/a1.urdf", True), ("pybullet_data:laikago/laikago_toes.urdf", True),
          ("simbench:mobile_manipulator.urdf", False)]
IDS = ["iiwa", "panda", "a1-floating", "laikago-floating", "mobile-manipulator"]
SWAP = np.r_[3:6, 0:3]   # Pinocchio's [linear; angular] rows -> ours [angular; linear]
TOL = 1e-10


def err(a, b) -> float:
    """Largest difference over the largest magnitude, or absolute below 1e-3: a link pinned by a
    joint at its origin has a bias of exactly 0, which Pinocchio gives as 1e-17."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / max(1e-3, np.abs(a).max(), np.abs(b).max()))


def _state(model, seed, n):
    rng = np.random.default_rng(seed)
    return model.random_configuration(rng, n), rng.normal(size=(n, model.nv))


@pytest.mark.parametrize("path,floating", ROBOTS, ids=IDS)
def test_centroidal_momentum_against_pinocchio(path, floating):
    """A_G and h_G for 4 random states, one by one and as a (2, 2) batch, against Pinocchio's
    ``computeCentroidalMap`` / ``computeCentroidalMomentum`` with the row blocks swapped. A
    fixed-base Pinocchio model leaves the welded root's mass out of its centre of mass G'
    (its ``centerOfMass``), ours does not (``center_of_mass``): its angular rows are carried
    to our G, ``k_G = k_G' + (G' - G) x l`` (the identity where the root is massless or
    floats, which the test asserts)."""
    pin = require("pinocchio")
    model = RobotModel.from_urdf(path, floating_base=floating)
    pm = urdf_model(model)
    pd, mp = pm.createData(), PinocchioMap(model, pm)
    Q, V = _state(model, 21, 4)
    A_all = centroidal_momentum_matrix(model, Q.reshape(2, 2, -1))
    h_all = centroidal_momentum(model, Q.reshape(2, 2, -1), V.reshape(2, 2, -1))
    assert A_all.shape == (2, 2, 6, model.nv) and h_all.shape == (2, 2, 6)
    compared = 0
    for s in range(4):
        q, v = Q[s], V[s]
        A_pin = pin.computeCentroidalMap(pm, pd, mp.q(q)) @ mp.P
        G_pin, G = pd.com[0].copy(), dyn.center_of_mass(model, q)
        if floating or model.link_mass[0] == 0:
            assert np.allclose(G_pin, G, rtol=0, atol=1e-12)
        want = A_pin[SWAP]
        want[:3] += np.cross(G_pin - G, A_pin[:3], axis=0)
        hg = pin.computeCentroidalMomentum(pm, pd, mp.q(q), mp.v(v))
        h_want = np.r_[hg.angular + np.cross(G_pin - G, hg.linear), hg.linear]
        assert err(centroidal_momentum_matrix(model, q), want) < TOL
        assert err(centroidal_momentum(model, q, v), h_want) < TOL
        assert err(A_all.reshape(4, 6, -1)[s], want) < TOL
        assert err(h_all.reshape(4, 6)[s], h_want) < TOL
        assert err(want @ v, h_want) < TOL      # the oracle's two answers agree
        compared += 5
    assert compared == 20


@pytest.mark.parametrize("path,floating", ROBOTS + [("pybullet_data:humanoid/humanoid.urdf", True)],
                         ids=IDS + ["humanoid-spherical"])
def test_linear_momentum_is_mass_times_com_velocity(path, floating):
    """``l_G = m c' = m J_com v`` (the closed form, from :func:`com_jacobian`), for a batch of 5
    states and q broadcast against a batch of velocities."""
    model = RobotModel.from_urdf(path, floating_base=floating)
    Q, V = _state(model, 5, 5)
    h = centroidal_momentum(model, Q, V)
    want = model.total_mass * np.einsum("nij,nj->ni", dyn.com_jacobian(model, Q), V)
    assert err(h[:, 3:], want) < TOL
    assert err(centroidal_momentum_matrix(model, Q)[:, 3:], model.total_mass * dyn.com_jacobian(model, Q)) < TOL
    hb = centroidal_momentum(model, Q[0], V)   # one q, five velocities
    assert hb.shape == (5, 6)
    assert err(hb, np.einsum("ij,nj->ni", centroidal_momentum_matrix(model, Q[0]), V)) < TOL


@pytest.mark.parametrize("path", ["pybullet_data:a1/a1.urdf", "pybullet_data:humanoid/humanoid.urdf"],
                         ids=["a1", "humanoid-spherical"])
def test_floating_centroidal_momentum_from_the_mass_matrix(path):
    """For a floating base, the base rows of M give the robot's momentum about the base origin in
    the base frame, ``[l_b; k_b] = M[:6] v`` (Pinocchio's order, that of tau's base wrench):
    ``l = R l_b``, ``k_G = R k_b + (p - G) x l`` (Orin, Goswami & Lee 2013). An
    oracle independent of the Jacobians and of Pinocchio; the humanoid has spherical joints."""
    model = RobotModel.from_urdf(path, floating_base=True)
    Q, V = _state(model, 9, 6)
    M = dyn.mass_matrix(model, Q)
    mom = np.einsum("nij,nj->ni", M[:, :6], V)
    R = dyn.link_pose(model, Q, model.link_names[0])[:, :3, :3]
    l = np.einsum("nij,nj->ni", R, mom[:, :3])
    k = np.einsum("nij,nj->ni", R, mom[:, 3:]) + np.cross(Q[:, :3] - dyn.center_of_mass(model, Q), l)
    assert err(centroidal_momentum(model, Q, V), np.c_[k, l]) < TOL


def _frame_oracle(pin, pm, pd, mp, q, v, fid):
    """Pinocchio's world-aligned twist and classical acceleration of frame fid at (q, v, a=0),
    rows swapped to [angular; linear]."""
    pin.forwardKinematics(pm, pd, mp.q(q), mp.v(v), np.zeros(pm.nv))
    pin.updateFramePlacements(pm, pd)
    tw = pin.getFrameVelocity(pm, pd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    ac = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    return np.r_[tw.angular, tw.linear], np.r_[ac.angular, ac.linear]


@pytest.mark.parametrize("path,floating", ROBOTS + [("pybullet_data:humanoid/humanoid.urdf", True)],
                         ids=IDS + ["humanoid-spherical"])
def test_link_velocity_and_acceleration_bias_against_pinocchio(path, floating):
    """Every link (fixed-joint links included), 3 random states: ``link_velocity`` and
    ``link_acceleration_bias`` at the origin against ``getFrameVelocity`` /
    ``getFrameClassicalAcceleration`` (``LOCAL_WORLD_ALIGNED``) of the link's BODY frame; at a
    point of the last link, against a frame added there; the batched calls (q and v (3, nq),
    (3, nv); one point per state; one state and three points) against the same rows. Pinocchio's URDF parser, its model
    built from ours for the humanoid's spherical joints."""
    pin = require("pinocchio")
    model = RobotModel.from_urdf(path, floating_base=floating)
    pm = pinocchio_model(model)
    Q, V = _state(model, 33, 3)
    pts = np.random.default_rng(34).normal(size=(3, 3)) * 0.2
    last = model.link_names[-1]
    body = pm.frames[pm.getFrameId(last, pin.FrameType.BODY)]
    added = [pm.addFrame(pin.Frame(f"point{s}", body.parentJoint, pm.getFrameId(last, pin.FrameType.BODY),
                                   body.placement * pin.SE3(np.eye(3), pts[s]), pin.FrameType.OP_FRAME))
             for s in range(3)]
    pd, mp = pm.createData(), PinocchioMap(model, pm)
    compared = 0
    for link in model.link_names:
        fid = pm.getFrameId(link, pin.FrameType.BODY)
        assert fid < len(pm.frames), link
        want = [_frame_oracle(pin, pm, pd, mp, Q[s], V[s], fid) for s in range(3)]
        for s in range(3):
            assert err(link_velocity(model, Q[s], V[s], link), want[s][0]) < TOL, (link, s)
            assert err(link_acceleration_bias(model, Q[s], V[s], link), want[s][1]) < TOL, (link, s)
            compared += 2
        assert err(link_velocity(model, Q, V, link), [w[0] for w in want]) < TOL
        assert err(link_acceleration_bias(model, Q, V, link), [w[1] for w in want]) < TOL
        compared += 2
    at_pts = [_frame_oracle(pin, pm, pd, mp, Q[s], V[s], added[s]) for s in range(3)]
    for s in range(3):
        assert err(link_velocity(model, Q[s], V[s], last, point=pts[s]), at_pts[s][0]) < TOL
        assert err(link_acceleration_bias(model, Q[s], V[s], last, point=pts[s]), at_pts[s][1]) < TOL
        compared += 2
    assert err(link_velocity(model, Q, V, last, point=pts), [w[0] for w in at_pts]) < TOL
    assert err(link_acceleration_bias(model, Q, V, last, point=pts), [w[1] for w in at_pts]) < TOL
    compared += 2
    at_q0 = [_frame_oracle(pin, pm, pd, mp, Q[0], V[0], added[s]) for s in range(3)]   # one state, 3 points
    assert err(link_velocity(model, Q[0], V[0], last, point=pts), [w[0] for w in at_q0]) < TOL
    assert err(link_acceleration_bias(model, Q[0], V[0], last, point=pts), [w[1] for w in at_q0]) < TOL
    compared += 2
    assert compared == 8 * model.nlinks + 10


@pytest.mark.parametrize("path", ["pybullet_data:a1/a1.urdf", "pybullet_data:humanoid/humanoid.urdf"],
                         ids=["a1", "humanoid-spherical"])
def test_acceleration_bias_is_the_derivative_of_the_jacobian(path):
    """``J' v = d/dt J(q(t)) v`` with ``q(t) = q (+) t v`` (``integrate``): central differences,
    h = 1e-6, for every link of a floating model; no Pinocchio."""
    model = RobotModel.from_urdf(path, floating_base=True)
    q, v = (x[0] for x in _state(model, 41, 1))
    h = 1e-6
    qp, qm = dyn.integrate(model, q, h * v), dyn.integrate(model, q, -h * v)
    count = 0
    for link in model.link_names:
        fd = (dyn.link_jacobian(model, qp, link) - dyn.link_jacobian(model, qm, link)) @ v / (2 * h)
        got = link_acceleration_bias(model, q, v, link)
        assert np.allclose(got, fd, rtol=0, atol=1e-6 * max(1.0, np.abs(got).max())), link
        count += 1
    assert count == model.nlinks


def test_rotated_root_turns_every_quantity():
    """A fixed root at ``root_pose = (R, p)``: A_G, h_G, twists and biases are those of the
    unplaced robot with both 3-row blocks turned by R (the bias too: the world is inertial)."""
    model = RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")
    c, s = np.cos(0.7), np.sin(0.7)
    P = np.eye(4)
    P[:3, :3] = [[c, 0, s], [0, 1, 0], [-s, 0, c]]
    P[:3, 3] = [0.3, -0.2, 1.0]
    placed = model.replace(root_pose=P)
    R6 = np.kron(np.eye(2), P[:3, :3])
    Q, V = _state(model, 51, 3)
    assert err(centroidal_momentum_matrix(placed, Q), R6 @ centroidal_momentum_matrix(model, Q)) < TOL
    assert err(centroidal_momentum(placed, Q, V), centroidal_momentum(model, Q, V) @ R6.T) < TOL
    for link in ("panda_link4", "panda_hand"):
        assert err(link_velocity(placed, Q, V, link), link_velocity(model, Q, V, link) @ R6.T) < TOL
        assert err(link_acceleration_bias(placed, Q, V, link),
                       link_acceleration_bias(model, Q, V, link) @ R6.T) < TOL


def test_zero_velocity_and_bad_arguments():
    """v = 0: zero momentum, twist and bias; a misspelt link is one line naming the close ones;
    q and v that do not broadcast, or a point of the wrong shape, are a ShapeError."""
    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    q = model.random_configuration(np.random.default_rng(2))
    z = np.zeros(model.nv)
    assert not centroidal_momentum(model, q, z).any()
    assert not link_velocity(model, q, z, "lbr_iiwa_link_7").any()
    assert not link_acceleration_bias(model, q, z, "lbr_iiwa_link_7").any()
    with pytest.raises(UnknownNameError, match="lbr_iiwa_link_7"):
        link_acceleration_bias(model, q, z, "lbr_iiwa_link7")
    with pytest.raises(UnknownNameError, match="lbr_iiwa_link_7"):
        link_velocity(model, q, z, "lbr_iiwa_link7")
    with pytest.raises(ShapeError):
        centroidal_momentum(model, np.tile(q, (2, 1)), np.zeros((3, model.nv)))
    with pytest.raises(ShapeError, match="point"):
        link_acceleration_bias(model, q, z, "lbr_iiwa_link_7", point=[1.0, 2.0])
    with pytest.raises(ShapeError, match="point"):
        link_acceleration_bias(model, np.tile(q, (2, 1)), np.zeros((2, model.nv)), "lbr_iiwa_link_7",
                               point=np.zeros((3, 3)))
