"""simbench.dynamics.forward: forward dynamics. Oracles: the RNEA (``ID(q, q', FD(tau)) = tau``),
closed forms (a floating robot in free fall: base acceleration g, joint accelerations zero), and
the singular mass matrix of a massless moving link."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _dyn_helpers import asset, rel_err
from simbench.errors import SimbenchError
from simbench.model import RobotModel
from simbench.spatial import quat_to_matrix
import simbench.dynamics as dyn

MODELS = {
    "kuka": RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf"),
    "panda": RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf"),
    "mobile": RobotModel.from_urdf(asset("mobile_manipulator.urdf")),
    "arm3": RobotModel.from_urdf(asset("anthropomorphic_3link.urdf")),
    "laikago-floating": RobotModel.from_urdf("pybullet_data:laikago/laikago.urdf", floating_base=True),
    "humanoid-spherical": RobotModel.from_urdf("pybullet_data:humanoid/humanoid.urdf", floating_base=True),
}
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.sampled_from(sorted(MODELS)), st.integers(0, 2**32 - 1))
def test_inverse_of_forward_dynamics(name, s):
    model = MODELS[name]
    rng = np.random.default_rng(s)
    q, qd, tau = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv) * 5
    qdd = dyn.forward_dynamics(model, q, qd, tau)
    assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd), tau) < 1e-9
    # with damping, friction and an external wrench as well
    F = {model.link_names[-1]: rng.normal(size=6)}
    qdd = dyn.forward_dynamics(model, q, qd, tau, f_ext=F, damping=True, friction=True)
    assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd, f_ext=F, damping=True, friction=True), tau) < 1e-9


@pytest.mark.parametrize("name", ["laikago-floating", "humanoid-spherical"])
def test_free_fall_closed_form(name):
    """No torque, no contact, from rest: the base falls with g and the joints do not move
    relative to it."""
    model = MODELS[name]
    rng = np.random.default_rng(4)
    Q = model.random_configuration(rng, 4)
    qdd = dyn.forward_dynamics(model, Q, np.zeros(model.nv), np.zeros(model.nv))
    R = quat_to_matrix(Q[:, 3:7])
    a_world = np.einsum("nij,nj->ni", R, qdd[:, :3])
    assert np.allclose(a_world, [0.0, 0.0, -9.81], rtol=0, atol=1e-12)
    assert np.abs(qdd[:, 3:]).max() < 1e-12


def test_singular_mass_matrix():
    """A massless moving leaf link: M is singular, forward dynamics says so."""
    model = RobotModel.from_urdf(asset("planar_2r.urdf")).with_link_inertial("link2", mass=0.0)
    with pytest.raises(SimbenchError, match="singular.*link2"):
        dyn.forward_dynamics(model, np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(SimbenchError, match="singular"):
        dyn.forward_dynamics(model, np.zeros((3, 2)), np.zeros(2), np.zeros(2))
    with pytest.raises(SimbenchError, match="singular"):
        dyn.forward_dynamics(model, np.zeros((900, 2)), np.zeros(2), np.zeros(2))
    with pytest.raises(SimbenchError, match="singular.*900 configuration"):   # a plain float64 batch
        dyn.forward_dynamics(model, np.zeros((900, 2)), np.zeros((900, 2)), np.zeros((900, 2)))


def test_batched_serial_and_threaded_equal_single():
    model = MODELS["laikago-floating"]
    rng = np.random.default_rng(5)
    for n in (7, 1200):
        Q = model.random_configuration(rng, n)
        QD, TAU = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
        qdd = dyn.forward_dynamics(model, Q, QD, TAU)
        for i in (0, n - 1):
            assert rel_err(qdd[i], dyn.forward_dynamics(model, Q[i], QD[i], TAU[i])) < 1e-12
