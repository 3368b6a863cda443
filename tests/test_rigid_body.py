"""The free rigid body on SE(3) of Michael Bauer, "Rigid Body Dynamics on Lie Groups": conservation laws, the intermediate-axis flip,
Newton-Euler of the slides (the "AI Robotics" lecture slides, *Dynamics*, body as point masses), free fall, integrator orders."""
import numpy as np
import pytest

from simbench.dynamics import rigid_body as rb
from simbench.errors import ShapeError, SimbenchError
from simbench.spatial import se3_exp, skew

I_PRINCIPAL = np.array([1.0, 2.0, 3.0])
MASS = 2.0


def test_torque_free_conserves_energy_and_momentum():
    # frame not at the COM, a full inertia tensor: the general 6x6 case
    R = se3_exp(np.array([0.3, -0.2, 0.5, 0, 0, 0]))[:3, :3]
    I = rb.inertia_matrix(MASS, R @ np.diag(I_PRINCIPAL) @ R.T, com=[0.1, -0.05, 0.2])
    g0 = se3_exp(np.array([0.1, 0.2, 0.3, 1.0, -1.0, 0.5]))
    xi0 = np.array([0.4, 1.5, -0.7, 0.3, -0.2, 0.1])
    t, G, X = rb.simulate(g0, xi0, I, 0.02, 500, method="rk4")
    E = rb.kinetic_energy(I, X)
    h = rb.spatial_momentum(G, I, X)
    assert np.abs(E - E[0]).max() < 1e-7 * E[0]
    assert np.abs(h - h[0]).max() < 1e-6 * np.abs(h[0]).max()
    # the poses stay in SE(3)
    Rs = G[:, :3, :3]
    assert np.abs(Rs @ np.swapaxes(Rs, 1, 2) - np.eye(3)).max() < 1e-12
    # Lie-group Euler drifts (first order), RKMK4 does not
    _, Ge, Xe = rb.simulate(g0, xi0, I, 0.02, 500, method="euler")
    assert np.abs(rb.kinetic_energy(I, Xe) - E[0]).max() > 100 * np.abs(E - E[0]).max()


def test_intermediate_axis_flip():
    """Spin about the intermediate principal axis (tennis racket theorem): w_y reverses;
    spins about the smallest and largest axes stay put."""
    I = rb.inertia_matrix(MASS, I_PRINCIPAL)
    g0 = np.eye(4)
    _, _, X = rb.simulate(g0, [1e-3, 2.0, 1e-3, 0, 0, 0], I, 0.025, 600)
    wy = X[:, 1]
    assert wy.min() < -1.9 and wy[0] == 2.0
    assert np.any(np.diff(np.sign(wy)) != 0)
    for axis in (0, 2):
        w0 = np.full(3, 1e-3)
        w0[axis] = 2.0
        _, _, X = rb.simulate(g0, np.r_[w0, 0, 0, 0], I, 0.025, 600)
        assert X[:, axis].min() > 1.9


def test_newton_euler_of_the_slides_with_point_masses():
    """Slides 17-18 of the "AI Robotics" lecture slides, *Dynamics*: a rigid body as point masses r_i (body frame, not at the COM):
    f_i = m_i (v' + [w'] r_i + [w] v + [w]^2 r_i), wrench = sum ([r_i] f_i, f_i).
    Must equal I xi' - ad_xi^T I xi with I the spatial inertia of the same masses."""
    rng = np.random.default_rng(7)
    m = rng.uniform(0.1, 1.0, 12)
    r = rng.normal(size=(12, 3))
    I = np.zeros((6, 6))
    for mi, ri in zip(m, r):
        S = skew(ri)
        I += mi * np.block([[S.T @ S, S], [S.T, np.eye(3)]])
    for _ in range(5):
        w, v, wd, vd = rng.normal(size=(4, 3))
        W = skew(w)
        f_i = m[:, None] * (vd + np.cross(wd, r) + W @ v + (W @ W @ r.T).T)
        wrench = np.r_[np.cross(r, f_i).sum(0), f_i.sum(0)]
        xi = np.r_[w, v]
        xid = rb.acceleration(I, xi, wrench)
        assert np.allclose(xid, np.r_[wd, vd], atol=1e-10)


def test_euler_equations_at_the_com():
    """Michael Bauer's ("Rigid Body Dynamics on Lie Groups") sanity check: with the frame at the COM and principal axes,
    J w' = tau - w x J w and m v' = f - w x m v."""
    I = rb.inertia_matrix(MASS, I_PRINCIPAL)
    rng = np.random.default_rng(3)
    xi, F = rng.normal(size=(2, 6))
    xid = rb.acceleration(I, xi, F)
    J = np.diag(I_PRINCIPAL)
    w, v = xi[:3], xi[3:]
    assert np.allclose(xid[:3], np.linalg.solve(J, F[:3] - np.cross(w, J @ w)), atol=1e-12)
    assert np.allclose(xid[3:], (F[3:] - np.cross(w, MASS * v)) / MASS, atol=1e-12)
    # batched
    xs, Fs = rng.normal(size=(2, 4, 6))
    assert np.allclose(rb.acceleration(I, xs, Fs)[2], rb.acceleration(I, xs[2], Fs[2]))


def test_free_fall_while_spinning():
    """Gravity as Michael Bauer's post handles it: (0, R^T m g). The COM follows p0 + u0 t + g t^2 / 2
    whatever the rotation does; total energy is conserved."""
    I = rb.inertia_matrix(MASS, I_PRINCIPAL)
    g0 = se3_exp(np.array([0.2, -0.4, 0.1, 0.0, 0.0, 5.0]))
    xi0 = np.array([1.0, 3.0, -2.0, 0.5, 0.2, 1.0])
    grav = np.array([0.0, 0.0, -9.81])
    t, G, X = rb.simulate(g0, xi0, I, 0.005, 200,
                          wrench=lambda tt, g, xi: rb.gravity_wrench(g, MASS, grav))
    u0 = g0[:3, :3] @ xi0[3:]
    expected = g0[:3, 3] + np.outer(t, u0) + 0.5 * np.outer(t**2, grav)
    assert np.abs(G[:, :3, 3] - expected).max() < 1e-7
    E = rb.kinetic_energy(I, X) + rb.potential_energy(G, MASS, grav)
    assert np.abs(E - E[0]).max() < 1e-6 * abs(E[0])


@pytest.mark.parametrize("method,order", [("euler", 1), ("rk4", 4)])
def test_integrator_order(method, order):
    I = rb.inertia_matrix(MASS, I_PRINCIPAL, com=[0.1, 0.0, -0.1])
    g0, xi0 = np.eye(4), np.array([0.5, 1.2, -0.8, 0.2, 0.1, -0.3])
    T = 0.5
    _, Gr, Xr = rb.simulate(g0, xi0, I, T / 800, 800, method="rk4")
    errs = []
    for n in (25, 50):
        _, G, X = rb.simulate(g0, xi0, I, T / n, n, method=method)
        errs.append(np.abs(G[-1] - Gr[-1]).max() + np.abs(X[-1] - Xr[-1]).max())
    assert 2 ** order * 0.7 < errs[0] / errs[1] < 2 ** order * 1.5, errs


def test_bad_input():
    I = rb.inertia_matrix(MASS, I_PRINCIPAL)
    with pytest.raises(ShapeError, match=r"\(\.\.\., 4, 4\)"):
        rb.simulate(np.eye(3), np.zeros(6), I, 0.01, 2)
    with pytest.raises(ShapeError, match=r"\(\.\.\., 6\)"):
        rb.simulate(np.eye(4), np.zeros(3), I, 0.01, 2)
    with pytest.raises(ShapeError, match="finite"):
        rb.simulate(np.eye(4), [np.nan, 0, 0, 0, 0, 0], I, 0.01, 2)
    with pytest.raises(SimbenchError, match="rk4"):
        rb.simulate(np.eye(4), np.zeros(6), I, 0.01, 2, method="rk45")
    with pytest.raises(SimbenchError, match="mass"):
        rb.inertia_matrix(0.0, I_PRINCIPAL)
