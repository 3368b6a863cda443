"""simbench.dynamics.configuration: the configuration manifold. Oracles: Pinocchio's
``integrate``, ``difference``, ``neutral``, ``normalize`` on a free-flyer model with spherical
joints, and the round trip ``difference(q, integrate(q, v)) = v``."""
import numpy as np

from _dyn_helpers import rel_err, require
from simbench.oracles.pinocchio import PinocchioMap, built_model
from simbench.model import RobotModel
import simbench.dynamics as dyn

HUMANOID = RobotModel.from_urdf("pybullet_data:humanoid/humanoid.urdf", floating_base=True)


def test_against_pinocchio():
    pin = require("pinocchio")
    pm = built_model(HUMANOID)
    mp = PinocchioMap(HUMANOID, pm)
    rng = np.random.default_rng(0)
    Q = HUMANOID.random_configuration(rng, 5)
    V = rng.normal(size=(5, HUMANOID.nv))
    got = dyn.integrate(HUMANOID, Q, V)
    for s in range(5):
        want = pin.integrate(pm, mp.q(Q[s]), mp.v(V[s]))
        assert rel_err(mp.q(got[s]), want) < 1e-12 or rel_err(mp.q(got[s]), -want) < 1e-12
        d = pin.difference(pm, mp.q(Q[s]), mp.q(Q[(s + 1) % 5]))
        assert rel_err(dyn.difference(HUMANOID, Q[s], Q[(s + 1) % 5]), mp.back(d)) < 1e-10
    assert rel_err(mp.q(HUMANOID.neutral()), pin.neutral(pm)) == 0.0
    scaled = Q[0].copy()
    scaled[3:7] *= 3.0
    assert rel_err(mp.q(dyn.normalize(HUMANOID, scaled)), pin.normalize(pm, mp.q(scaled))) < 1e-15


def test_round_trip_and_unit_quaternions():
    rng = np.random.default_rng(1)
    Q = HUMANOID.random_configuration(rng, 200)
    V = rng.normal(size=(200, HUMANOID.nv))
    Q1 = dyn.integrate(HUMANOID, Q, V, 0.3)
    assert rel_err(dyn.difference(HUMANOID, Q, Q1), 0.3 * V) < 1e-10
    from simbench.dynamics.configuration import quaternion_slices

    base, sph = quaternion_slices(HUMANOID)
    starts = [s + 3 for s, _ in base] + [s for s, _ in sph]
    assert len(starts) == 1 + 8
    for s in starts:
        assert np.allclose(np.linalg.norm(Q1[:, s:s + 4], axis=-1), 1.0, rtol=0, atol=1e-14)
        assert np.allclose(np.linalg.norm(Q[:, s:s + 4], axis=-1), 1.0, rtol=0, atol=1e-14)


def test_integrate_from_quaternions_of_any_norm_gives_pinocchios_unit_ones():
    """q with every quaternion scaled by 2 (the humanoid's base and its 8 spherical joints):
    integrate gave norm 2 back (a user walkthrough); now unit quaternions, the configuration
    Pinocchio's ``integrate`` reaches from the rotation of q/|q| (``pin.normalize`` first: its
    integrate would scale the base's translation by |q|^2), each quaternion up to its sign.
    5 configurations compared."""
    pin = require("pinocchio")
    from simbench.dynamics.configuration import quaternion_slices

    pm = built_model(HUMANOID)
    mp = PinocchioMap(HUMANOID, pm)
    rng = np.random.default_rng(2)
    Q, V = HUMANOID.random_configuration(rng, 5), rng.normal(size=(5, HUMANOID.nv))
    base, sph = quaternion_slices(HUMANOID)
    starts = [s + 3 for s, _ in base] + [s for s, _ in sph]
    for s in starts:
        Q[:, s:s + 4] *= 2.0
    got = dyn.integrate(HUMANOID, Q, V, 0.1)
    compared = 0
    quat = np.zeros(HUMANOID.nq, dtype=bool)
    for s in starts:
        quat[s:s + 4] = True
    for k in range(5):
        want = np.asarray(pin.integrate(pm, pin.normalize(pm, mp.q(Q[k])), mp.v(0.1 * V[k])))
        ours = mp.q(got[k])
        pin_quat = mp.q(quat.astype(float)) > 0.5     # the quaternions' entries in Pinocchio's q
        assert np.abs(ours[~pin_quat] - want[~pin_quat]).max() < 1e-12
        for s in starts:
            assert abs(np.linalg.norm(got[k, s:s + 4]) - 1.0) < 1e-14
        ours_q, want_q = ours[pin_quat].reshape(-1, 4), want[pin_quat].reshape(-1, 4)
        signs = np.sign((ours_q * want_q).sum(axis=1))[:, None]
        assert np.abs(ours_q - signs * want_q).max() < 1e-12
        compared += 1
    assert compared == 5 and len(starts) == 9
