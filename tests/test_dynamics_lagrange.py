"""simbench.dynamics.lagrange: the Lagrangian formulation. Oracles: the RNEA/CRBA path (an
independent algorithm), Pinocchio's ``computeCoriolisMatrix``, and the skew-symmetry of
``M' - 2C`` with ``M'`` from central differences of M."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _dyn_helpers import asset, rel_err, require
from simbench.oracles.pinocchio import PinocchioMap
from simbench.errors import SimbenchError
from simbench.model import RobotModel
import simbench.dynamics as dyn
from simbench.dynamics import lagrange

ROBOTS = {
    "kuka": "pybullet_data:kuka_iiwa/model.urdf",
    "panda": "pybullet_data:franka_panda/panda.urdf",      # fixed + prismatic joints
    "r2d2": "pybullet_data:r2d2.urdf",                     # continuous + prismatic, branches
    "mobile": asset("mobile_manipulator.urdf"),
    "arm3": asset("anthropomorphic_3link.urdf"),
}
MODELS = {k: RobotModel.from_urdf(v) for k, v in ROBOTS.items()}
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seed = st.integers(0, 2**32 - 1)


def sample(model, s, scale=1.0):
    rng = np.random.default_rng(s)
    return (model.random_configuration(rng), rng.normal(size=model.dof) * scale,
            rng.normal(size=model.dof) * scale)


@SETTINGS
@given(st.sampled_from(list(ROBOTS)), seed)
def test_rnea_equals_lagrangian(name, s):
    model = MODELS[name]
    q, qd, qdd = sample(model, s, 2.0)
    assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd), lagrange.inverse_dynamics(model, q, qd, qdd)) < 1e-9
    assert rel_err(dyn.mass_matrix(model, q), lagrange.mass_matrix(model, q)) < 1e-12
    assert rel_err(dyn.gravity_torques(model, q), lagrange.gravity_torques(model, q)) < 1e-12


@SETTINGS
@given(st.sampled_from(["kuka", "panda", "mobile", "arm3"]), seed)
def test_mdot_minus_2c_is_skew(name, s):
    """M' by central differences of M along q'; C q' against the RNEA bias forces."""
    model = MODELS[name]
    q, qd, _ = sample(model, s)
    C = dyn.coriolis_matrix(model, q, qd)
    h = 1e-6
    Mdot = (dyn.mass_matrix(model, q + h * qd) - dyn.mass_matrix(model, q - h * qd)) / (2 * h)
    N = Mdot - 2 * C
    assert np.abs(N + N.T).max() < 1e-6 * max(1.0, np.abs(Mdot).max())
    assert rel_err(C @ qd, dyn.bias_forces(model, q, qd) - dyn.gravity_torques(model, q)) < 1e-9


def test_coriolis_matrix_against_pinocchio():
    """Pinocchio's C (computeCoriolisMatrix) also makes M' - 2C skew; C and C q' must agree."""
    pin = require("pinocchio")
    model = MODELS["panda"]
    pm = pin.buildModelFromUrdf(model.source)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(5)
    q, qd = model.random_configuration(rng), rng.normal(size=model.dof)
    C_pin = mp.back_matrix(pin.computeCoriolisMatrix(pm, pd, mp.q(q), mp.v(qd)))
    C = dyn.coriolis_matrix(model, q, qd)
    assert rel_err(C @ qd, C_pin @ qd) < 1e-9
    assert rel_err(C, C_pin) < 1e-9


def test_quaternion_models_are_refused_clearly():
    for model in (RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True),
                  RobotModel.from_urdf("pybullet_data:humanoid/humanoid.urdf")):
        q = model.neutral()
        with pytest.raises(SimbenchError, match=r"minimal coordinates.*bias_forces \(C q. \+ g\), inverse_dynamics"):
            lagrange.mass_matrix(model, q)
