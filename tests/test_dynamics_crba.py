"""simbench.dynamics.crba: the mass matrix. Oracles: the RNEA (``M e_i`` is the inverse dynamics
of a unit acceleration without velocity and gravity, column by column), the kinetic energy
``1/2 v^T M v`` summed body by body from the link twists (Koenig's theorem, Ankur Handa,
"Understanding Physics Engines"), and positive definiteness (hypothesis). Pinocchio's ``crba``
is compared on the whole corpus in test_dynamics_corpus.py."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _dyn_helpers import asset, rel_err
from simbench.model import RobotModel
import simbench.dynamics as dyn

MODELS = {
    "kuka": RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf"),
    "panda": RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf"),
    "mobile": RobotModel.from_urdf(asset("mobile_manipulator.urdf")),
    "a1-floating": RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True),
    "humanoid-spherical": RobotModel.from_urdf("pybullet_data:humanoid/humanoid.urdf", floating_base=True),
}
SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.sampled_from(sorted(MODELS)), st.integers(0, 2**32 - 1))
def test_columns_are_rnea_of_unit_accelerations(name, seed):
    model = MODELS[name]
    q = model.random_configuration(np.random.default_rng(seed))
    M = dyn.mass_matrix(model, q)
    E = np.eye(model.nv)
    cols = dyn.inverse_dynamics(model, q, np.zeros(model.nv), E, gravity=(0.0, 0.0, 0.0))
    assert rel_err(M, cols.T) < 1e-12
    assert np.linalg.eigvalsh(0.5 * (M + M.T))[0] > 0


@SETTINGS
@given(st.sampled_from(sorted(MODELS)), st.integers(0, 2**32 - 1))
def test_kinetic_energy_from_link_twists(name, seed):
    """1/2 v^T M v = sum_i 1/2 (m_i |v_ci|^2 + w_i^T I_ci w_i), with each link's COM velocity and
    angular velocity from its Jacobian (another code path: kinematics, not the CRBA)."""
    model = MODELS[name]
    rng = np.random.default_rng(seed)
    q, v = model.random_configuration(rng), rng.normal(size=model.nv)
    T, J = dyn.link_com_jacobians(model, q)
    tw = J @ v                                              # (nl, 6) [w; v_com] world
    R = T[:, :3, :3]
    Iw = R @ model.link_inertia @ np.swapaxes(R, -1, -2)
    ke = 0.5 * (np.einsum("i,ij,ij->", model.link_mass, tw[:, 3:], tw[:, 3:])
                + np.einsum("ij,ijk,ik->", tw[:, :3], Iw, tw[:, :3]))
    assert abs(0.5 * v @ dyn.mass_matrix(model, q) @ v - ke) < 1e-11 * max(1.0, abs(ke))


def test_batched_serial_and_threaded_equal_single():
    model = MODELS["a1-floating"]
    rng = np.random.default_rng(3)
    for n in (5, 1500):
        Q = model.random_configuration(rng, n)
        M = dyn.mass_matrix(model, Q)
        assert M.shape == (n, model.nv, model.nv)
        for i in (0, n - 1):
            assert np.allclose(M[i], dyn.mass_matrix(model, Q[i]), rtol=0, atol=1e-12)
