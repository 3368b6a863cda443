"""Structural properties of the dynamics (hypothesis): M SPD, M' - 2C skew, RNEA == Lagrangian,
ID(FD(tau)) == tau, RK4 energy error ~ dt^4, power balance with joint damping."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.integrate import simpson

from _dyn_helpers import asset, rel_err
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

robot = st.sampled_from(["kuka", "panda", "mobile", "arm3"])
seed = st.integers(0, 2**32 - 1)


def sample(model, s, scale=1.0):
    rng = np.random.default_rng(s)
    return (model.random_configuration(rng), rng.normal(size=model.dof) * scale,
            rng.normal(size=model.dof) * scale)


@SETTINGS
@given(robot, seed)
def test_mass_matrix_symmetric_positive_definite(name, s):
    model = MODELS[name]
    q, _, _ = sample(model, s)
    M = dyn.mass_matrix(model, q)
    assert np.array_equal(M, M.T)
    assert np.linalg.eigvalsh(M)[0] > 0


@SETTINGS
@given(robot, seed)
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


@SETTINGS
@given(st.sampled_from(list(ROBOTS)), seed)
def test_rnea_equals_lagrangian(name, s):
    model = MODELS[name]
    q, qd, qdd = sample(model, s, 2.0)
    a = dyn.inverse_dynamics(model, q, qd, qdd)
    b = lagrange.inverse_dynamics(model, q, qd, qdd)
    assert rel_err(a, b) < 1e-9
    assert rel_err(dyn.mass_matrix(model, q), lagrange.mass_matrix(model, q)) < 1e-12
    assert rel_err(dyn.gravity_torques(model, q), lagrange.gravity_torques(model, q)) < 1e-12


@SETTINGS
@given(robot, seed)
def test_inverse_of_forward_dynamics(name, s):
    model = MODELS[name]
    q, qd, tau = sample(model, s, 5.0)
    qdd = dyn.forward_dynamics(model, q, qd, tau)
    assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd), tau) < 1e-9
    # with damping, friction and an external wrench as well
    F = {model.link_names[-1]: np.random.default_rng(s).normal(size=6)}
    qdd = dyn.forward_dynamics(model, q, qd, tau, f_ext=F, damping=True, friction=True)
    back = dyn.inverse_dynamics(model, q, qd, qdd, f_ext=F, damping=True, friction=True)
    assert rel_err(back, tau) < 1e-9


def test_batched_equals_single():
    model = MODELS["r2d2"]
    rng = np.random.default_rng(0)
    Q = model.random_configuration(rng, 6).reshape(2, 3, -1)
    QD, QDD = rng.normal(size=Q.shape), rng.normal(size=Q.shape)
    tau = dyn.inverse_dynamics(model, Q, QD, QDD)
    M = dyn.mass_matrix(model, Q)
    qdd = dyn.forward_dynamics(model, Q, QD, tau)
    assert tau.shape == (2, 3, model.dof) and M.shape == (2, 3, model.dof, model.dof)
    for i in range(2):
        for j in range(3):
            assert np.allclose(tau[i, j], dyn.inverse_dynamics(model, Q[i, j], QD[i, j], QDD[i, j]),
                               rtol=0, atol=1e-12)
            assert np.allclose(M[i, j], dyn.mass_matrix(model, Q[i, j]), rtol=0, atol=1e-12)
    assert rel_err(qdd, QDD) < 1e-9
    # broadcasting: one q against several velocities
    t2 = dyn.inverse_dynamics(model, Q[0, 0], QD[0], QDD[0])
    assert t2.shape == (3, model.dof)
    assert np.allclose(t2[1], dyn.inverse_dynamics(model, Q[0, 0], QD[0, 1], QDD[0, 1]))


def _energy(model, q, qd):
    return dyn.kinetic_energy(model, q, qd) + dyn.potential_energy(model, q)


@pytest.mark.parametrize("name", ["arm3", "kuka"])
def test_rk4_energy_error_shrinks_like_dt4(name):
    model = MODELS[name]
    rng = np.random.default_rng(1)
    q0, qd0 = model.random_configuration(rng), rng.normal(size=model.dof)
    E0 = _energy(model, q0, qd0)
    T = 0.4
    errs = []
    for dt in (0.02, 0.01, 0.005):
        t, Q, QD, tau = dyn.simulate(model, q0, qd0, None, dt, round(T / dt), method="rk4")
        assert t[-1] == pytest.approx(T) and np.all(tau == 0)
        errs.append(abs(_energy(model, Q[-1], QD[-1]) - E0))
    r1, r2 = errs[0] / errs[1], errs[1] / errs[2]
    assert errs[-1] < 1e-4 * max(1.0, abs(E0))
    assert 10 < r1 < 40 and 10 < r2 < 40, (errs, r1, r2)   # 16 for a 4th-order method


def test_euler_is_first_order_and_semi_implicit_better():
    model = MODELS["arm3"]
    q0, qd0 = np.array([0.2, 0.4, -0.3]), np.array([0.5, -0.2, 0.3])
    ref = dyn.simulate(model, q0, qd0, None, 0.0025, 160, method="rk4")[1][-1]
    e = [np.abs(dyn.simulate(model, q0, qd0, None, dt, round(0.4 / dt), method="euler")[1][-1] - ref).max()
         for dt in (0.01, 0.005)]
    assert 1.6 < e[0] / e[1] < 2.6     # first order
    E0 = _energy(model, q0, qd0)
    _, Q, QD, _ = dyn.simulate(model, q0, qd0, None, 0.005, 400, method="semi_implicit")
    _, Qe, QDe, _ = dyn.simulate(model, q0, qd0, None, 0.005, 400, method="euler")
    drift_si = np.abs(_energy(model, Q, QD) - E0).max()
    drift_e = np.abs(_energy(model, Qe, QDe) - E0).max()
    assert drift_si < drift_e


def test_damping_power_balance():
    """dE/dt = tau . q' - sum d_i q'_i^2 with viscous joint damping (seed 000's d_ii q'_i)."""
    base = MODELS["arm3"]
    d = np.array([0.0, 0.3, 0.7, 0.2])[: len(base.joint_all_names)]
    model = base.replace(joint_damping=d)
    q0, qd0 = np.array([0.1, 0.3, -0.5]), np.array([1.0, -0.5, 0.8])
    dt = 0.001
    ctrl = lambda t, q, qd: np.array([0.5, -0.3, 0.2])  # noqa: E731
    t, Q, QD, TAU = dyn.simulate(model, q0, qd0, ctrl, dt, 200, method="rk4", damping=True)
    E = _energy(model, Q, QD)
    dmov = d[model.movable]
    power = np.einsum("ij,ij->i", TAU, QD) - np.einsum("j,ij->i", dmov, QD**2)
    dE = simpson(power, x=t)
    assert abs((E[-1] - E[0]) - dE) < 1e-7 * abs(dE)
    assert E[-1] - E[0] < simpson(np.einsum("ij,ij->i", TAU, QD), x=t) - 1e-3   # damping dissipates
