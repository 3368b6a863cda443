"""simbench.spatial against matrix definitions: scipy's expm/logm, matrix commutators, the
adjoint's defining identity T xi^ T^-1 = (Ad_T xi)^."""
import numpy as np
import pytest
from scipy.linalg import expm, logm
from scipy.spatial.transform import Rotation

from simbench import spatial as S
from simbench.errors import ShapeError

rng = np.random.default_rng(42)


def rand_T(n=None):
    shape = () if n is None else (n,)
    R = Rotation.random(n, random_state=1).as_matrix()
    p = rng.normal(size=shape + (3,))
    return S.make_transform(R, p)


def test_skew_unskew():
    w, x = rng.normal(size=(2, 5, 3))
    assert np.allclose(S.skew(w) @ x[..., None], np.cross(w, x)[..., None])
    assert np.allclose(S.unskew(S.skew(w)), w)


@pytest.mark.parametrize("scale", [1e-9, 1e-5, 0.3, 2.0, np.pi - 1e-6])
def test_so3_exp_log(scale):
    w = rng.normal(size=(4, 3))
    w = scale * w / np.linalg.norm(w, axis=-1, keepdims=True)
    R = S.so3_exp(w)
    for k in range(4):
        assert np.allclose(R[k], expm(S.skew(w[k])), atol=1e-13)
    assert np.allclose(S.so3_log(R), w, atol=1e-9)


def test_so3_log_at_pi():
    for axis in np.eye(3).tolist() + [[1 / np.sqrt(2), 1 / np.sqrt(2), 0]]:
        w = np.pi * np.array(axis)
        out = S.so3_log(S.so3_exp(w))
        assert np.isclose(np.linalg.norm(out), np.pi)
        assert np.allclose(S.so3_exp(out), S.so3_exp(w), atol=1e-12)


@pytest.mark.parametrize("scale", [1e-8, 0.5, 2.5])
def test_se3_exp_log_against_expm(scale):
    xi = scale * rng.normal(size=(3, 6))
    T = S.se3_exp(xi)
    for k in range(3):
        assert np.allclose(T[k], expm(S.se3_hat(xi[k])), atol=1e-12)
        assert np.allclose(S.se3_log(T[k]), np.real(S.se3_vee(logm(T[k]))), atol=1e-8)
    assert np.allclose(S.se3_exp(S.se3_log(T)), T, atol=1e-12)
    small = np.linalg.norm(xi[:, :3], axis=-1) < np.pi    # the principal logarithm
    assert np.allclose(S.se3_log(T)[small], xi[small], atol=1e-9)


def test_adjoint_identities():
    T1, T2 = rand_T(), rand_T()
    xi, eta = rng.normal(size=(2, 6))
    # T xi^ T^-1 = (Ad_T xi)^
    assert np.allclose(T1 @ S.se3_hat(xi) @ np.linalg.inv(T1), S.se3_hat(S.Ad(T1) @ xi))
    assert np.allclose(S.Ad(T1 @ T2), S.Ad(T1) @ S.Ad(T2))
    assert np.allclose(S.Ad_inv(T1), np.linalg.inv(S.Ad(T1)))
    assert np.allclose(S.se3_inv(T1), np.linalg.inv(T1))
    # ad(xi) eta = [xi^, eta^]
    X, E = S.se3_hat(xi), S.se3_hat(eta)
    assert np.allclose(S.se3_hat(S.ad(xi) @ eta), X @ E - E @ X)
    assert np.allclose(S.ad_T(xi), S.ad(xi).T)
    F = rng.normal(size=6)
    assert np.allclose(S.coad(xi, F), S.ad(xi).T @ F)
    # d/dt Ad(exp(t xi)) at 0 = ad(xi)
    h = 1e-6
    dAd = (S.Ad(S.se3_exp(h * xi)) - S.Ad(S.se3_exp(-h * xi))) / (2 * h)
    assert np.allclose(dAd, S.ad(xi), atol=1e-8)


def test_batch_broadcasting():
    T = rand_T(4)
    xi = rng.normal(size=(3, 1, 6))
    out = np.einsum("...ij,...j->...i", S.Ad(T), xi)
    assert out.shape == (3, 4, 6)
    assert np.allclose(out[2, 1], S.Ad(T[1]) @ xi[2, 0])
    assert S.se3_exp(rng.normal(size=(2, 3, 6))).shape == (2, 3, 4, 4)


def test_transform_inertia_preserves_kinetic_energy():
    """The same body and motion described in two frames has the same kinetic energy."""
    from simbench.model import spatial_inertia

    G_b = spatial_inertia(2.0, np.array([0.1, 0.2, -0.3]), np.diag([0.1, 0.2, 0.25]))
    T_ab = rand_T()
    V_b = rng.normal(size=6)
    V_a = S.Ad(T_ab) @ V_b
    G_a = S.transform_inertia(T_ab, G_b)
    assert np.isclose(V_a @ G_a @ V_a, V_b @ G_b @ V_b)


def test_dexp_inv_against_numerical_differential():
    """exp(u + h w) = exp(u) exp(h dexp_{-u}(w) + O(h^2)), so dexp_inv(-u, .) recovers w."""
    u, w = 0.3 * rng.normal(size=6), rng.normal(size=6)
    h = 1e-6
    xi = (S.se3_log(S.se3_inv(S.se3_exp(u)) @ S.se3_exp(u + h * w))
          - S.se3_log(S.se3_inv(S.se3_exp(u)) @ S.se3_exp(u - h * w))) / (2 * h)
    assert np.allclose(S.dexp_inv(-u, xi, order=8), w, atol=1e-5)
    # the order-4 truncation is good to O(|u|^3)
    assert np.abs(S.dexp_inv(-u, xi) - w).max() < 0.05 * np.abs(w).max()


def test_bad_shapes():
    with pytest.raises(ShapeError, match=r"\(\.\.\., 3\)"):
        S.skew(np.zeros(4))
    with pytest.raises(ShapeError, match=r"\(\.\.\., 4, 4\)"):
        S.Ad(np.eye(3))
    with pytest.raises(ShapeError, match=r"\(\.\.\., 6\)"):
        S.se3_exp(np.zeros(3))
