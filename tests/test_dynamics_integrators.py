"""simbench.dynamics.integrators. Oracles: closed forms (a harmonic oscillator through the
generic ``simulate(accel, ...)``), convergence orders (RK4 energy error ~ dt^4, Euler ~ dt),
the power balance with joint damping, and conservation of the total momentum of a floating
robot with joint torques in zero gravity (integrated on the manifold)."""
import numpy as np
import pytest
from scipy.integrate import simpson

from _dyn_helpers import asset
from simbench.errors import ShapeError, SimbenchError
from simbench.model import RobotModel
import simbench.dynamics as dyn

ARM3 = RobotModel.from_urdf(asset("anthropomorphic_3link.urdf"))
KUKA = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")


def _energy(model, q, qd):
    return dyn.kinetic_energy(model, q, qd) + dyn.potential_energy(model, q)


def test_any_acceleration_function_harmonic_oscillator():
    """q'' = -w^2 q: q(t) = cos(w t); RK4's error at dt = 0.01 is O(dt^4)."""
    w = 3.0
    t, Q, QD, tau = dyn.simulate(lambda t, q, qd: -w * w * q, [1.0], [0.0], 0.01, 200)
    assert tau is None and t[-1] == pytest.approx(2.0)
    assert np.abs(Q[:, 0] - np.cos(w * t)).max() < 1e-7
    assert np.abs(QD[:, 0] + w * np.sin(w * t)).max() < 1e-6
    q1, qd1 = dyn.step(lambda t, q, qd: -w * w * q, np.array([1.0]), np.array([0.0]), 0.01, 0.0,
                       method="euler")
    assert q1[0] == 1.0 and qd1[0] == pytest.approx(-0.09)


def test_robot_form_old_and_new_agree():
    q0, qd0 = np.array([0.2, 0.4, -0.3]), np.array([0.5, -0.2, 0.3])
    ctrl = lambda t, q, qd: np.array([0.5, -0.3, 0.2]) * np.cos(t)  # noqa: E731
    new = dyn.simulate_model(ARM3, q0, qd0, 0.01, 20, ctrl)
    old = dyn.simulate(ARM3, q0, qd0, ctrl, 0.01, 20, "rk4")
    generic = dyn.simulate(dyn.robot_acceleration(ARM3, ctrl), q0, qd0, 0.01, 20)
    for a, b in ((new, old), (new, generic)):
        assert np.array_equal(a.q, b.q) and np.array_equal(a.qd, b.qd)
    assert np.allclose(new.tau[5], ctrl(new.t[5], None, None))


@pytest.mark.parametrize("model", [ARM3, KUKA], ids=["arm3", "kuka"])
def test_rk4_energy_error_shrinks_like_dt4(model):
    rng = np.random.default_rng(1)
    q0, qd0 = model.random_configuration(rng), rng.normal(size=model.dof)
    E0 = _energy(model, q0, qd0)
    errs = []
    for dt in (0.02, 0.01, 0.005):
        t, Q, QD, tau = dyn.simulate_model(model, q0, qd0, dt, round(0.4 / dt))
        assert t[-1] == pytest.approx(0.4) and np.all(tau == 0)
        errs.append(abs(_energy(model, Q[-1], QD[-1]) - E0))
    r1, r2 = errs[0] / errs[1], errs[1] / errs[2]
    assert errs[-1] < 1e-4 * max(1.0, abs(E0))
    assert 10 < r1 < 40 and 10 < r2 < 40, (errs, r1, r2)   # 16 for a 4th-order method


def test_euler_is_first_order_and_semi_implicit_better():
    q0, qd0 = np.array([0.2, 0.4, -0.3]), np.array([0.5, -0.2, 0.3])
    ref = dyn.simulate_model(ARM3, q0, qd0, 0.0025, 160).q[-1]
    e = [np.abs(dyn.simulate_model(ARM3, q0, qd0, dt, round(0.4 / dt), method="euler").q[-1] - ref).max()
         for dt in (0.01, 0.005)]
    assert 1.6 < e[0] / e[1] < 2.6     # first order
    E0 = _energy(ARM3, q0, qd0)
    si = dyn.simulate_model(ARM3, q0, qd0, 0.005, 400, method="semi_implicit")
    eu = dyn.simulate_model(ARM3, q0, qd0, 0.005, 400, method="euler")
    assert np.abs(_energy(ARM3, si.q, si.qd) - E0).max() < np.abs(_energy(ARM3, eu.q, eu.qd) - E0).max()


def test_damping_power_balance():
    """dE/dt = tau . q' - sum d_i q'_i^2 with viscous joint damping."""
    d = np.array([0.0, 0.3, 0.7, 0.2])[: len(ARM3.joint_all_names)]
    model = ARM3.replace(joint_damping=d)
    q0, qd0 = np.array([0.1, 0.3, -0.5]), np.array([1.0, -0.5, 0.8])
    ctrl = lambda t, q, qd: np.array([0.5, -0.3, 0.2])  # noqa: E731
    t, Q, QD, TAU = dyn.simulate_model(model, q0, qd0, 0.001, 200, ctrl, damping=True)
    E = _energy(model, Q, QD)
    power = np.einsum("ij,ij->i", TAU, QD) - np.einsum("j,ij->i", d[model.movable], QD**2)
    dE = simpson(power, x=t)
    assert abs((E[-1] - E[0]) - dE) < 1e-7 * abs(dE)
    assert E[-1] - E[0] < simpson(np.einsum("ij,ij->i", TAU, QD), x=t) - 1e-3


def _momentum(model, q, v):
    """Total linear momentum and angular momentum about the world origin (world frame)."""
    T, J = dyn.link_com_jacobians(model, q)
    tw = J @ v
    c = np.einsum("kij,kj->ki", T[:, :3, :3], model.link_com) + T[:, :3, 3]
    Iw = T[:, :3, :3] @ model.link_inertia @ np.swapaxes(T[:, :3, :3], -1, -2)
    p = model.link_mass[:, None] * tw[:, 3:]
    L = np.cross(c, p) + np.einsum("kij,kj->ki", Iw, tw[:, :3])
    return p.sum(0), L.sum(0)


@pytest.mark.parametrize("path, dt, tol", [("pybullet_data:humanoid/humanoid.urdf", 0.004, 1e-8),
                                           ("pybullet_data:a1/a1.urdf", 0.001, 1e-4)])
def test_zero_gravity_conserves_momentum_with_joint_torques(path, dt, tol):
    """Joint torques are internal: the total momentum stays constant. RK4 on the manifold
    (base on SE(3), spherical joints on SO(3)) keeps it to O(dt^4): the drift falls ~16-fold
    when dt halves. (The a1's gram-light links make it stiff, so it needs the smaller step.)"""
    model = RobotModel.from_urdf(path, floating_base=True).replace(gravity=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(2)
    q0 = model.random_configuration(rng)
    v0 = rng.normal(size=model.nv) * 0.5
    k = rng.normal(size=model.nv - 6)
    ctrl = lambda t, q, v: np.r_[np.zeros(6), 2.0 * np.sin(3 * t + k)]  # noqa: E731 (joints only)
    p0, L0 = _momentum(model, q0, v0)
    scale = max(np.abs(p0).max(), np.abs(L0).max())
    drift = []
    for h in (dt, dt / 2):
        traj = dyn.simulate_model(model, q0, v0, h, round(0.5 / h), ctrl)
        p1, L1 = _momentum(model, traj.q[-1], traj.qd[-1])
        drift.append(max(np.abs(p1 - p0).max(), np.abs(L1 - L0).max()) / scale)
    assert drift[1] < tol and 10 < drift[0] / drift[1] < 40, drift
    assert np.abs(traj.q[-1, 7:] - q0[7:]).max() > 0.05   # the torques did move the joints


def test_simulate_errors():
    m = RobotModel.from_urdf(asset("planar_2r.urdf"))
    with pytest.raises(SimbenchError, match="rk4"):
        dyn.simulate(m, np.zeros(2), np.zeros(2), None, 0.01, 3, method="midpoint")
    with pytest.raises(SimbenchError, match="dt"):
        dyn.simulate_model(m, np.zeros(2), np.zeros(2), -0.01, 3)
    with pytest.raises(ShapeError, match=r"controller returned shape \(3,\)"):
        dyn.simulate_model(m, np.zeros(2), np.zeros(2), 0.01, 3, lambda t, q, qd: np.zeros(3))
    with pytest.raises(ShapeError, match=r"\(2,\)"):
        dyn.simulate_model(m, np.zeros((2, 2)), np.zeros(2), 0.01, 3)
    with pytest.raises(SimbenchError, match="diverged"):
        dyn.simulate_model(m, np.zeros(2), np.zeros(2), 1.0, 5, lambda t, q, qd: np.array([1e200, -1e200]),
                           method="euler")


def test_a_faulty_acceleration_function_is_named_in_one_line():
    """simulate(accel, ...) with a user's function that returns the wrong shape, None or NaN
    from finite inputs, or a q0 longer than qd0 without integrate=: one line naming the
    function, the time and what was expected (before: numpy's broadcast error, or 'diverged
    ... try a smaller dt' blaming dt; a user walkthrough). Oracle: the faults are built in."""
    def wrong(t, q, qd):
        return np.zeros(2)

    def none(t, q, qd):
        return None

    def nan_at_half(t, q, qd):
        return np.array([np.nan]) if t >= 0.05 else -q

    cases = [(wrong, ShapeError, r"^wrong\(t, q, qd\) returned shape \(2,\) at t = 0 s; expected 1 "
                                 r"acceleration, shape \(1,\) as qd0$"),
             (none, ShapeError, r"^none\(t, q, qd\) returned None at t = 0 s; expected 1 acceleration"),
             (nan_at_half, SimbenchError, r"^nan_at_half\(t, q, qd\) returned nan for entry 0 at t = 0\.05 s "
                                          r"from finite q and qd \(\|q\| <= 0\.99")]
    for f, kind, message in cases:
        with pytest.raises(kind, match=message):
            dyn.simulate(f, [1.0], [0.0], 0.01, 20)
    with pytest.raises(ShapeError, match=r"q0 has shape \(7,\) and qd0 \(6,\).*integrate="):
        dyn.simulate(lambda t, q, qd: np.zeros(6), np.r_[0, 0, 0, 0, 0, 0, 1.0], np.zeros(6), 0.01, 3)
    for dt in (float("nan"), -0.1, 0.0, "0.1", None, True):   # one step: nan gave nan, -0.1 ran backwards
        with pytest.raises(SimbenchError, match=r"^dt must be a positive number of seconds, got "):
            dyn.step(lambda t, q, qd: -q, np.ones(2), np.zeros(2), dt)
        with pytest.raises(SimbenchError, match=r"^dt must be a positive number of seconds, got "):
            dyn.simulate(lambda t, q, qd: -q, np.ones(2), np.zeros(2), dt, 3)
    for method in ("euler", "semi_implicit", "rk4"):   # one step too: it raised numpy's broadcast error
        with pytest.raises(ShapeError, match=r"^q has shape \(7,\) and qd \(6,\).*integrate="):
            dyn.step(lambda t, q, qd: np.zeros(6), np.r_[0, 0, 0, 0, 0, 0, 1.0], np.zeros(6), 0.01, method=method)
    assert len(cases) == 3
